package mcphttp

import (
	"net/http"
	"time"
)

// The http.Server settings NewServer recommends for an MCP endpoint. The
// endpoint answers every request with one JSON body, so generous but
// finite limits fit: slow clients (slowloris) are cut off by the read
// timeouts, and a stuck handler by the write timeout.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 60 * time.Second
	idleTimeout       = 120 * time.Second
	maxHeaderBytes    = 32 << 10
)

// NewServer returns an http.Server for addr and h with the recommended
// timeouts and header limit: ReadHeaderTimeout 5 s, ReadTimeout 30 s,
// WriteTimeout 60 s, IdleTimeout 120 s, MaxHeaderBytes 32 KiB. Start it with ListenAndServe and stop it with
// Shutdown, which drains requests in flight.
func NewServer(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
	}
}
