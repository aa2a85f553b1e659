//go:build !linux

package redistest

import "os/exec"

// dieWithParent does nothing here: Stop, in t.Cleanup, ends the server.
func dieWithParent(*exec.Cmd) {}
