package jsonrpc

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/principal"
)

// presizedPool and readPresized are the body read before issue 19, kept
// as the baseline of BenchmarkReadBody: storage sized by the declared
// Content-Length before a byte arrived.
var presizedPool = sync.Pool{New: func() any { return &rawBuf{b: make([]byte, 0, 4096)} }}

func readPresized(r *http.Request, max int64) (*rawBuf, error) {
	if r.ContentLength > max {
		return nil, errTooLarge
	}
	rb := presizedPool.Get().(*rawBuf)
	buf := rb.b[:0]
	if r.ContentLength > 0 && int64(cap(buf)) < r.ContentLength+1 {
		buf = make([]byte, 0, r.ContentLength+1)
	}
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > max {
				break
			}
			buf = append(buf, 0)[:len(buf)]
		}
		room := buf[len(buf):int(min(int64(cap(buf)), max+1))]
		n, err := r.Body.Read(room)
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if int64(len(buf)) > max {
			break
		}
	}
	rb.b = buf
	return rb, nil
}

func putPresized(rb *rawBuf) {
	if cap(rb.b) > 64<<10 {
		return
	}
	rb.b = rb.b[:0]
	presizedPool.Put(rb)
}

// BenchmarkReadBody reads bodies of typical and large sizes with a
// declared Content-Length, as net/http hands them over, interleaving the
// body read (storage growing with the bytes received, charged to a
// budget) with the pre-sized baseline in the same iterations.
func BenchmarkReadBody(b *testing.B) {
	for _, size := range []int{70, 600, 3 << 10, 64 << 10, 1 << 20} {
		body := bytes.Repeat([]byte("a"), size)
		r := &http.Request{ContentLength: int64(size)}
		rd := bytes.NewReader(body)
		budget := NewBodyBudget(0, BudgetOptions{}).accountOf(&principal.Principal{Issuer: "https://issuer", Subject: "alice"}, netip.Addr{})
		b.Run(strconv.Itoa(size)+"/grown", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				rd.Reset(body)
				r.Body = io.NopCloser(rd)
				rb, err := readLimited(r, DefaultMaxBytes, budget)
				if err != nil || len(rb.b) != size {
					b.Fatal(err)
				}
				putRaw(rb)
			}
		})
		b.Run(strconv.Itoa(size)+"/presized", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				rd.Reset(body)
				r.Body = io.NopCloser(rd)
				rb, err := readPresized(r, DefaultMaxBytes)
				if err != nil || len(rb.b) != size {
					b.Fatal(err)
				}
				putPresized(rb)
			}
		})
	}
}

// BenchmarkBodyBudgetCharge is the budget's cost per body (charge the
// initial storage, return it) in a principal's share and in an address's
// share of the anonymous pool (a keyed hash and a shard lock each, issue
// 27).
func BenchmarkBodyBudgetCharge(b *testing.B) {
	budget := NewBodyBudget(0, BudgetOptions{})
	alice := &principal.Principal{Issuer: "https://issuer.example", Subject: "alice"}
	addr := netip.MustParseAddr("203.0.113.7")
	for _, c := range []struct {
		name   string
		caller *principal.Principal
	}{{"anonymous", nil}, {"principal", alice}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				a := budget.accountOf(c.caller, addr)
				if !a.reserve(initialBodyBytes) {
					b.Fatal("no room")
				}
				a.release(initialBodyBytes)
			}
		})
	}
}
