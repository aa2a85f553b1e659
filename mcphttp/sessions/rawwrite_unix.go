//go:build unix

package sessions

import "syscall"

// canRawWrite: the wheel may write keep-alives straight to a stream's
// socket (see sse.keepAlive).
const canRawWrite = true

// rawWrite makes one write(2) of b to c's descriptor and returns at once,
// whatever it wrote: it never waits for the socket to take more.
func rawWrite(c syscall.RawConn, b []byte) (int, error) {
	var n int
	var err error
	if cerr := c.Write(func(fd uintptr) bool {
		n, err = syscall.Write(int(fd), b)
		return true // done: do not wait for the socket to be writable
	}); cerr != nil {
		return 0, cerr
	}
	return max(n, 0), err
}
