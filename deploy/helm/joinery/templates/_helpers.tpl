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

{{/* The cloud: aws or azure (JOINERY_PROVIDER); anything else stops the render. */}}
{{- define "joinery.provider" -}}
{{- $p := .Values.provider | default "aws" }}
{{- if not (has $p (list "aws" "azure")) }}
{{- fail (printf "provider %q: one of aws, azure" $p) }}
{{- end }}
{{- /* A value for the other cloud is a mistake, never silently dropped. */}}
{{- if eq $p "azure" }}
{{- if .Values.serviceAccount.roleArn }}
{{- fail "serviceAccount.roleArn is an EKS (IRSA) setting; with provider=azure the worker's identity is azure.clientId" }}
{{- end }}
{{- if .Values.aws.region }}
{{- fail "aws.region is an AWS setting; with provider=azure the region is azure.location" }}
{{- end }}
{{- if or .Values.settings.interruptionQueue .Values.aws.interruptionQueue }}
{{- fail "settings.interruptionQueue (aws.interruptionQueue) is an SQS queue of EC2 events; it has no meaning with provider=azure" }}
{{- end }}
{{- else }}
{{- range $key, $value := .Values.azure }}
{{- if and $value (ne $key "bootstrapTokenSecret") }}
{{- fail (printf "azure.%s is set but provider is aws: add --set provider=azure" $key) }}
{{- end }}
{{- end }}
{{- if .Values.azure.bootstrapTokenSecret.name }}
{{- fail "azure.bootstrapTokenSecret.name is set but provider is aws: add --set provider=azure" }}
{{- end }}
{{- end }}
{{- $p }}
{{- end }}

{{/* provider=azure: the cluster's facts under Karpenter Azure's environment names. */}}
{{- define "joinery.azureEnv" -}}
{{- $a := .Values.azure }}
- name: AZURE_SUBSCRIPTION_ID
  value: {{ required "azure.subscriptionId is required with provider=azure" $a.subscriptionId | quote }}
- name: LOCATION
  value: {{ required "azure.location is required with provider=azure (the cluster's region)" $a.location | quote }}
- name: AZURE_NODE_RESOURCE_GROUP
  value: {{ required "azure.nodeResourceGroup is required with provider=azure (az aks show --query nodeResourceGroup)" $a.nodeResourceGroup | quote }}
{{- range $key, $name := dict "resourceGroup" "ARM_RESOURCE_GROUP" "vnetSubnetID" "VNET_SUBNET_ID" "networkPlugin" "NETWORK_PLUGIN" "networkPluginMode" "NETWORK_PLUGIN_MODE" "networkPolicy" "NETWORK_POLICY" "networkDataplane" "NETWORK_DATAPLANE" "nodeIdentities" "NODE_IDENTITIES" "kubeletIdentityClientID" "KUBELET_IDENTITY_CLIENT_ID" "sshPublicKey" "SSH_PUBLIC_KEY" }}
{{- with get $a $key }}
- name: {{ $name }}
  value: {{ . | quote }}
{{- end }}
{{- end }}
{{- with $a.bootstrapTokenSecret.name }}
- name: KUBELET_BOOTSTRAP_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ $a.bootstrapTokenSecret.key }}
{{- end }}
{{- end }}
