//go:build !unix

package sessions

import (
	"errors"
	"syscall"
)

// canRawWrite: elsewhere the stream's goroutine writes every keep-alive.
const canRawWrite = false

func rawWrite(syscall.RawConn, []byte) (int, error) {
	return 0, errors.ErrUnsupported
}
