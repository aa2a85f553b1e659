//go:build unix

package main

import (
	"net"
	"syscall"
	"time"
)

// processCPU returns the CPU time this process has used (user and
// system), and the system part of it.
func processCPU() (all, sys time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), time.Duration(ru.Stime.Nano())
}

// dupOutsidePoller duplicates c's descriptor with dup(2): unlike
// TCPConn.File, whose duplicate the os package puts in the runtime's
// poller again, the copy is in no poller. It returns the function that
// closes it.
func dupOutsidePoller(c *net.TCPConn) (func(), error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd := -1
	var dupErr error
	if err := raw.Control(func(s uintptr) { fd, dupErr = syscall.Dup(int(s)) }); err != nil {
		return nil, err
	}
	if dupErr != nil {
		return nil, dupErr
	}
	return func() { _ = syscall.Close(fd) }, nil
}
