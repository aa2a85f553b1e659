package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http/httputil"
	"strconv"
	"time"
)

// conn is one keep-alive HTTP/1.1 connection of the load generator. It
// writes prepared request bytes and reads the response, and nothing more:
// the client costs as little CPU as it can, so that the two cores the
// servers share go to the servers (wrk's approach). Responses are checked
// all the same (see check).
type conn struct {
	c net.Conn
	// closeFD closes the socket once quiet has taken it out of the
	// poller.
	closeFD func()
	r       *bufio.Reader
	body    []byte
	// keep records the wanted headers of each response (a map per
	// response: off on the measured path).
	keep bool
}

func dial(addr string) (*conn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &conn{c: c, r: bufio.NewReaderSize(c, 16<<10), body: make([]byte, 0, 16<<10)}, nil
}

func (c *conn) close() {
	_ = c.c.Close()
	if c.closeFD != nil {
		c.closeFD()
	}
}

// quiet takes the connection's socket out of this process's poller, open
// still, never to be read again: what the server writes to it then wakes
// no thread here. Where it cannot (not unix), it does nothing.
func (c *conn) quiet() error {
	tc, ok := c.c.(*net.TCPConn)
	if !ok {
		return nil
	}
	closeFD, err := dupOutsidePoller(tc)
	if err != nil || closeFD == nil {
		return err
	}
	c.closeFD = closeFD
	return tc.Close() // the connection's own descriptor, in the poller; the socket stays open
}

// response is what do read; body aliases the connection's buffer until
// the next do.
type response struct {
	status int
	header map[string]string // the wanted headers (lower-case names), when conn.keep
	body   []byte
}

// wanted are the response headers recorded in response.header.
var wanted = []string{"content-type", "content-length", "cache-control", "vary", "transfer-encoding", "mcp-session-id"}

// do sends req, a complete HTTP/1.1 request, and reads its response.
func (c *conn) do(req []byte) (response, error) {
	_ = c.c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.c.Write(req); err != nil {
		return response{}, err
	}
	return c.read(true)
}

// read reads a response; with wholeBody, its body too (by Content-Length
// or chunked), otherwise only the head.
func (c *conn) read(wholeBody bool) (response, error) {
	status, err := c.readStatus()
	if err != nil {
		return response{}, err
	}
	res := response{status: status}
	if c.keep {
		res.header = map[string]string{}
	}
	length, chunked, err := c.readHeader(res.header)
	if err != nil {
		return response{}, err
	}
	if !wholeBody {
		return res, nil
	}
	if err := c.readBody(length, chunked); err != nil {
		return response{}, err
	}
	res.body = c.body
	return res, nil
}

// readStatus reads the status line and returns its code.
func (c *conn) readStatus() (int, error) {
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return 0, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) {
		return 0, fmt.Errorf("bad status line %q", line)
	}
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, fmt.Errorf("bad status line %q", line)
	}
	return status, nil
}

// readHeader reads the header lines up to the blank line, records the
// wanted ones in header (when not nil) and returns the Content-Length (-1
// when absent) and whether the body is chunked.
func (c *conn) readHeader(header map[string]string) (length int, chunked bool, err error) {
	length = -1
	for {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			return 0, false, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			return length, chunked, nil
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return 0, false, fmt.Errorf("bad header line %q", line)
		}
		value = bytes.TrimSpace(value)
		w := wantedName(name)
		if w == "" {
			continue
		}
		if header != nil {
			if prev, dup := header[w]; dup {
				header[w] = prev + ", " + string(value)
			} else {
				header[w] = string(value)
			}
		}
		switch w {
		case "content-length":
			if length, err = strconv.Atoi(string(value)); err != nil || length < 0 {
				return 0, false, fmt.Errorf("bad Content-Length %q", value)
			}
		case "transfer-encoding":
			chunked = bytes.EqualFold(value, []byte("chunked"))
		}
	}
}

// wantedName is the entry of wanted that name spells (in any case), or "".
func wantedName(name []byte) string {
	for _, w := range wanted {
		if len(name) == len(w) && bytes.EqualFold(name, []byte(w)) {
			return w
		}
	}
	return ""
}

// readBody reads the body into c.body: chunked, or length bytes.
func (c *conn) readBody(length int, chunked bool) error {
	switch {
	case chunked:
		c.body = c.body[:0]
		var buf bytes.Buffer
		if _, err := io.Copy(&buf, httputil.NewChunkedReader(c.r)); err != nil {
			return err
		}
		// The chunked reader stops after the last chunk; the trailer's
		// blank line follows.
		if _, err := c.r.ReadSlice('\n'); err != nil {
			return err
		}
		c.body = append(c.body, buf.Bytes()...)
	case length >= 0:
		if cap(c.body) < length {
			c.body = make([]byte, length)
		}
		c.body = c.body[:length]
		if _, err := io.ReadFull(c.r, c.body); err != nil {
			return err
		}
	default:
		return errors.New("response without Content-Length or chunked body")
	}
	return nil
}

// request builds a POST of body to path with the headers given (name,
// value pairs).
func request(host, path string, body []byte, headers ...string) []byte {
	b := make([]byte, 0, 512+len(body))
	b = append(b, "POST "+path+" HTTP/1.1\r\nHost: "+host+"\r\n"...)
	for i := 0; i+1 < len(headers); i += 2 {
		b = append(b, headers[i]+": "+headers[i+1]+"\r\n"...)
	}
	b = append(b, "Content-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"...)
	return append(b, body...)
}
