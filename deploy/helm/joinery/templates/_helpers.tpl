{{/* Names and labels shared by every template. */}}

{{- define "joinery.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "joinery.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else if contains (include "joinery.name" .) .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "joinery.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "joinery.selectorLabels" -}}
app.kubernetes.io/name: {{ include "joinery.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "joinery.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "joinery.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: joinery
{{- end }}

{{- define "joinery.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "joinery.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "joinery.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag }}
{{- if .Values.image.digest }}
{{- printf "%s:%s@%s" .Values.image.repository $tag .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository $tag }}
{{- end }}
{{- end }}

{{/* The cluster's name: Karpenter's settings.clusterName, else cluster.name. */}}
{{- define "joinery.clusterName" -}}
{{- required "settings.clusterName or cluster.name is required (the EKS cluster's name)" (.Values.settings.clusterName | default .Values.cluster.name) }}
{{- end }}

{{/* The task queue: temporal.taskQueue, else the cluster's own (models.contract.task_queue). */}}
{{- define "joinery.taskQueue" -}}
{{- .Values.temporal.taskQueue | default (printf "joinery@%s" (include "joinery.clusterName" .)) }}
{{- end }}

{{/* Feature gates as Karpenter writes them: Name=bool,... (spotToSpotConsolidation ->
SpotToSpotConsolidation), sorted by key. */}}
{{- define "joinery.gates" -}}
{{- $gates := list }}
{{- range $key, $value := . }}
{{- $gates = append $gates (printf "%s%s=%v" (upper (substr 0 1 $key)) (substr 1 -1 $key) $value) }}
{{- end }}
{{- join "," $gates }}
{{- end }}
