// Package redistest starts throw-away redis-server processes for tests: each
// on a free loopback port, in a temporary directory, with nothing persisted
// (--save "" --appendonly no), stopped when the test ends. A test can stop
// its server and start it again on the same port, empty, as after a crash.
//
// The binary is $MCPKIT_REDIS_SERVER, else redis-server on PATH (Debian's
// redis-server package). When there is none, Start skips the test with a
// message, or fails it when CI=true.
package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is one redis-server process (or none, between Stop and Start).
type Server struct {
	bin, dir string
	port     int
	extra    []string // further arguments of redis-server (cluster mode)

	mu   sync.Mutex
	cmd  *exec.Cmd
	exit chan struct{} // closed when cmd has exited
}

// Binary returns the redis-server binary to run, or "" when there is none.
func Binary() string {
	if p := os.Getenv("MCPKIT_REDIS_SERVER"); p != "" {
		return p
	}
	p, err := exec.LookPath("redis-server")
	if err != nil {
		return ""
	}
	return p
}

// Require skips (or, with CI=true, fails) t when there is no redis-server.
func Require(t testing.TB) string {
	t.Helper()
	bin := Binary()
	if bin == "" {
		msg := "redis-server not found: install Debian's redis-server package, or set MCPKIT_REDIS_SERVER to the binary"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

// Start starts a server for t, stopped in t.Cleanup.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := New(Require(t), t.TempDir())
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

// New starts a server running bin in dir. The caller must Stop it.
func New(bin, dir string) (*Server, error) { return newServer(bin, dir, nil) }

func newServer(bin, dir string, extra []string) (*Server, error) {
	s := &Server{bin: bin, dir: dir, extra: extra}
	var err error
	for range 5 { // another process may take the free port first
		if extra != nil {
			s.port, err = clusterPort()
		} else {
			s.port, err = freePort()
		}
		if err != nil {
			return nil, err
		}
		if err = s.start(); err == nil {
			return s, nil
		}
	}
	return nil, err
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// clusterPort returns a loopback port that was free a moment ago, with
// port+10000 (a cluster node's bus port) free too, both outside the
// kernel's range of ports for outgoing connections: a bus port in it can
// be taken by any connection the machine opens meanwhile (a node's
// restart then fails, a flake under load).
func clusterPort() (int, error) {
	lo, hi := ephemeralRange()
	outside := func(p int) bool { return p < lo || p > hi }
	for range 500 {
		p := 1024 + rand.IntN(65535-10000-1024)
		if !outside(p) || !outside(p+10000) {
			continue
		}
		if portFree(p) && portFree(p+10000) {
			return p, nil
		}
	}
	return 0, errors.New("no free port pair (port, port+10000) outside the ephemeral range")
}

// ephemeralRange returns the kernel's range of local ports for outgoing
// connections (Linux's ip_local_port_range; its default elsewhere).
func ephemeralRange() (lo, hi int) {
	lo, hi = 32768, 60999
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return lo, hi
	}
	f := strings.Fields(string(b))
	if len(f) == 2 {
		l, err1 := strconv.Atoi(f[0])
		h, err2 := strconv.Atoi(f[1])
		if err1 == nil && err2 == nil && l <= h {
			return l, h
		}
	}
	return lo, hi
}

func portFree(p int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	if err != nil {
		return false
	}
	_ = l.Close()
	return true
}

// Addr returns the server's host:port.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// URL returns the server's redis:// URL.
func (s *Server) URL() string { return "redis://" + s.Addr() }

// Client returns a client of the server, closed in t.Cleanup. Its
// timeouts are short and it does not retry, as a store's client should be
// (see the redisstore package doc).
func (s *Server) Client(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(ClientOptions(s.Addr()))
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// ClientOptions returns the options of a test client of addr.
func ClientOptions(addr string) *redis.Options {
	return &redis.Options{
		Addr: addr, DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second,
		MaxRetries: -1, DialerRetries: 1, PoolSize: 16,
	}
}

// start runs the server on s.port and waits until it answers.
func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("already running")
	}
	args := []string{"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", s.dir, "--daemonize", "no", "--protected-mode", "yes", "--loglevel", "warning",
		"--logfile", filepath.Join(s.dir, "redis.log"), "--maxmemory-policy", "noeviction"}
	cmd := exec.Command(s.bin, append(args, s.extra...)...)
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", s.bin, err)
	}
	exit := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exit) }()
	c := redis.NewClient(ClientOptions(s.Addr()))
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-exit:
			return fmt.Errorf("redis-server exited at start: %s", s.logTail())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			s.cmd, s.exit = cmd, exit
			return nil
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exit
			return fmt.Errorf("redis-server does not answer: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// logTail returns the last lines of the server's log.
func (s *Server) logTail() string {
	f, err := os.Open(filepath.Join(s.dir, "redis.log"))
	if err != nil {
		return "(no log)"
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > 5 {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// Stop kills the server (SIGKILL: a crash, nothing saved) and waits for
// it to exit. It does nothing when the server is not running.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.exit
	s.cmd, s.exit = nil, nil
}

// Restart starts the stopped server again on the same port, empty.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	var err error
	for range 50 { // the port can take a moment to be free again
		if err = s.start(); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("redistest: restarting: %v", err)
}
