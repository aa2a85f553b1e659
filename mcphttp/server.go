package mcphttp

import (
	"net/http"
	"time"
)

// Recommended http.Server settings for an MCP endpoint. The endpoint
// answers every request with one JSON body, so generous but finite limits
// fit: slow clients (slowloris) are cut off by the read timeouts, and a
// stuck handler by the write timeout.
const (
	ReadHeaderTimeout = 5 * time.Second
	ReadTimeout       = 30 * time.Second
	WriteTimeout      = 60 * time.Second
	IdleTimeout       = 120 * time.Second
	MaxHeaderBytes    = 32 << 10
)

// NewServer returns an http.Server for addr and h with the recommended
// timeouts and header limit. Start it with ListenAndServe and stop it with
// Shutdown, which drains requests in flight.
func NewServer(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
	}
}
