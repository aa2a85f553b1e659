//go:build !unix

package main

import "time"

// processCPU is unknown on this system: 0.
func processCPU() (all, sys time.Duration) { return 0, 0 }
