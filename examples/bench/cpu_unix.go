//go:build unix

package main

import (
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
