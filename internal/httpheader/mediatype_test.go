package httpheader

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestValidMediaType(t *testing.T) {
	for _, s := range []string{
		"text/plain", "application/vnd.api+json", "image/svg+xml", "text/plain; charset=utf-8",
		"text/plain;charset=\"utf-8\"", "multipart/mixed; boundary=\"a b\"; x=y", "a/b",
	} {
		assert.True(t, ValidMediaType(s), s)
	}
	for _, s := range []string{
		"", "text", "text/", "/plain", "text/plain;", "text/plain; charset", "text/plain; =x",
		"text/pl ain", "text/plain\x00", "te\txt/plain", "text/plain; a=\"b", "text/plain; a=\"b\x01\"",
		"-text/plain", "text/plain/x", "text/plain; a=b c",
	} {
		assert.False(t, ValidMediaType(s), s)
	}
}
