package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// childEnv marks a process the load generator started as a server.
const childEnv = "MCPKIT_BENCH_SERVER"

// child is a server process.
type child struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
	addr  string
}

// startChild starts this program again as a server of the given kind and
// waits for its address.
func startChild(name string, args ...string) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{name: name, cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	type result struct {
		line string
		err  error
	}
	got := make(chan result, 1)
	go func() {
		line, err := c.out.ReadString('\n')
		got <- result{line, err}
	}()
	select {
	case r := <-got:
		addr, ok := strings.CutPrefix(strings.TrimSpace(r.line), "addr ")
		if r.err != nil || !ok {
			c.stop()
			return nil, fmt.Errorf("server %s did not start (%v)", name, r.err)
		}
		c.addr = addr
		return c, nil
	case <-time.After(time.Minute):
		c.stop()
		return nil, fmt.Errorf("server %s did not start within a minute", name)
	}
}

// command sends one command and returns its answer line.
func (c *child) command(cmd string) (string, error) {
	if _, err := fmt.Fprintln(c.stdin, cmd); err != nil {
		return "", fmt.Errorf("server %s: %w", c.name, err)
	}
	line, err := c.out.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("server %s: %w", c.name, err)
	}
	return strings.TrimSpace(line), nil
}

// stats returns the server's figures; with gc, after collecting garbage.
func (c *child) stats(gc bool) (serverStats, error) {
	cmd := "stats"
	if gc {
		cmd = "gc"
	}
	line, err := c.command(cmd)
	if err != nil {
		return serverStats{}, err
	}
	var s serverStats
	if err := json.Unmarshal([]byte(line), &s); err != nil {
		return serverStats{}, fmt.Errorf("server %s: %q: %w", c.name, line, err)
	}
	return s, nil
}

// ok sends a command answered with "ok".
func (c *child) ok(cmd string) error {
	line, err := c.command(cmd)
	if err == nil && line != `"ok"` {
		err = fmt.Errorf("server %s: %s: %q", c.name, cmd, line)
	}
	return err
}

// stop ends the server: its standard input closes, and it exits.
func (c *child) stop() {
	_ = c.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
	}
}
