package redistest

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the server killed when the test process dies (a
// test binary killed by its timeout leaves no server behind).
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
