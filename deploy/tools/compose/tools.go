//go:build tools

// Package tools pins the Docker Compose CLI that deploy/tools/build.sh builds so the tests can
// validate docker-compose.yml with `docker-compose config` (this machine's docker client has
// no compose plugin). Nothing imports it; the version comes from go.mod/go.sum alone.
package tools

import (
	_ "github.com/docker/compose/v2/cmd"
)
