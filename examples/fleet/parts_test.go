package fleet

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/internal/testkit/logbuf"
)

// The parts of the fleet test: processes of their own (redis-server,
// haproxy, the documents binary) and a fresh schema in the PostgreSQL of
// .ci/postgres.sh.

// need skips t when a part is missing, or fails it under CI=true.
func need(t *testing.T, ok bool, what string) {
	t.Helper()
	if ok {
		return
	}
	if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
		t.Fatalf("fleet test: %s under CI=true (.ci/run installs and starts every part)", what)
	}
	t.Skipf("fleet test skipped: %s", what)
}

// binary returns $env, else name on PATH (or in /usr/sbin), or "".
func binary(env, name string) string {
	if p := os.Getenv(env); p != "" {
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if p := "/usr/sbin/" + name; fileExists(p) {
		return p
	}
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// freeAddr returns a loopback address that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// syncBuffer collects a process's output.
type syncBuffer struct{ logbuf.Buffer }

// count returns how many lines hold every one of parts.
func (b *syncBuffer) count(parts ...string) int {
	n := 0
	sc := bufio.NewScanner(strings.NewReader(b.String()))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
lines:
	for sc.Scan() {
		for _, p := range parts {
			if !strings.Contains(sc.Text(), p) {
				continue lines
			}
		}
		n++
	}
	return n
}

// proc is a child process, killed with the test (and with the test
// binary: Pdeathsig).
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
}

func startProc(t *testing.T, name string, env []string, bin string, args ...string) *proc {
	t.Helper()
	return startProcOwned(t, t, name, env, bin, args...)
}

// startProcOwned is startProc for a process that outlives t: owner (t
// or a test that t runs in) kills it when it ends.
func startProcOwned(t, owner *testing.T, name string, env []string, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, out: &syncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, p.cmd.Start(), name)
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	owner.Cleanup(func() {
		p.kill()
		if owner.Failed() {
			t.Logf("--- %s output (last 3000 bytes):\n%s", name, tail(p.out.String(), 3000))
		}
	})
	return p
}

// kill ends the process at once (SIGKILL, as kill -9) and waits for it.
func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// waitHTTP polls url until it answers 200 (30 s at most).
func waitHTTP(t *testing.T, url string, p *proc) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(url)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited:\n%s", p.name, tail(p.out.String(), 3000))
		default:
		}
		require.True(t, time.Now().Before(deadline), "%s did not answer 200 at %s", p.name, url)
		time.Sleep(50 * time.Millisecond)
	}
}

// redisProc is a redis-server without persistence, stopped (as by a
// crash) and started again empty on the same port. It lives as long as
// the test that started it first, also when a subtest restarts it.
type redisProc struct {
	bin, dir, addr string
	owner          *testing.T
	p              *proc
}

func startRedis(t *testing.T, bin string) *redisProc {
	t.Helper()
	r := &redisProc{bin: bin, dir: t.TempDir(), addr: freeAddr(t), owner: t}
	r.start(t)
	return r
}

func (r *redisProc) url() string { return "redis://" + r.addr + "/0" }

func (r *redisProc) start(t *testing.T) {
	t.Helper()
	_, port, _ := net.SplitHostPort(r.addr)
	r.p = startProcOwned(t, r.owner, "redis-server", nil, r.bin, "--port", port, "--bind", "127.0.0.1", "--dir", r.dir,
		"--save", "", "--appendonly", "no")
	c := redis.NewClient(&redis.Options{Addr: r.addr})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for c.Ping(context.Background()).Err() != nil {
		require.True(t, time.Now().Before(deadline), "redis-server did not answer")
		time.Sleep(10 * time.Millisecond)
	}
}

func (r *redisProc) client(t *testing.T) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: r.addr})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// postgresSchema returns a DSN whose search_path is a fresh schema,
// dropped when the test ends, and a fresh notification channel.
func postgresSchema(t *testing.T, base string) (dsn, channel string) {
	t.Helper()
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	suffix := hex.EncodeToString(rnd[:])
	schema := "mcpkit_fleet_" + suffix
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, base)
	require.NoError(t, err)
	_, err = admin.Exec(ctx, "CREATE SCHEMA "+schema)
	require.NoError(t, err)
	t.Cleanup(func() { // registered before the processes: runs after they stopped
		_, _ = admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		_ = admin.Close(context.Background())
	})
	u, err := url.Parse(base)
	require.NoError(t, err)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), "mcpkit_fleet_" + suffix
}

// buildDocuments builds the documents server into dir.
func buildDocuments(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "documents")
	// go test puts its own toolchain's bin first on the test's PATH.
	cmd := exec.Command("go", "build", "-o", bin, "github.com/mcpkit/mcpkit/examples/documents")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}

// cursorKeys returns a fresh key ring of one key.
func cursorKeys() string {
	var k [32]byte
	_, _ = rand.Read(k[:])
	return "1:" + base64.RawURLEncoding.EncodeToString(k[:])
}
