//go:build !unix

package main

import (
	"net"
	"time"
)

// processCPU is unknown on this system: 0.
func processCPU() (all, sys time.Duration) { return 0, 0 }

// dupOutsidePoller is not done on this system: nil.
func dupOutsidePoller(*net.TCPConn) (func(), error) { return nil, nil }
