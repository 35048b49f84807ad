//go:build tools

// Package tools pins the control-plane binaries the Joinery sandbox and component tests run.
// Nothing imports it; build.sh builds each main package listed here from this module, so the
// versions come from go.mod/go.sum alone.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "sigs.k8s.io/kwok/cmd/kwok"
)
