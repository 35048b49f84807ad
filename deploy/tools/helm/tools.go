//go:build tools

// Package tools pins the helm CLI that deploy/tools/build.sh builds for the chart tests.
// Nothing imports it; the version comes from go.mod/go.sum alone.
package tools

import (
	_ "helm.sh/helm/v3/cmd/helm"
)
