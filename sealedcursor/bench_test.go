package sealedcursor

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"testing"
	"time"
)

var (
	benchBinding = []byte("client-3f2a\x00user-000042\x00documents:read notes:read\x00https://mcp.example.com/mcp\x00" +
		"4f1c9a0b7e3d2c1a4f1c9a0b7e3d2c1a")
	benchPayload = []byte("\x01\x00\x00\x00\x00\x00\x00\x00\x00\x142026-11-30T12:00:00Z/doc-000000000123")
)

// BenchmarkSealOpen seals and opens a typical traversal position.
func BenchmarkSealOpen(b *testing.B) {
	s := MustNew(Options{})
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		c, err := s.Seal(benchBinding, benchPayload, now)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := s.Open(benchBinding, c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBaselineGCM is the raw AES-256-GCM seal + open of the same bytes,
// without encoding, binding or checks: the floor for BenchmarkSealOpen.
func BenchmarkBaselineGCM(b *testing.B) {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	block, _ := aes.NewCipher(key)
	aead, _ := cipher.NewGCM(block)
	nonce := make([]byte, 12)
	buf := make([]byte, 0, len(benchPayload)+64)
	b.ReportAllocs()
	for b.Loop() {
		_, _ = rand.Read(nonce)
		ct := aead.Seal(buf[:0], nonce, benchPayload, benchBinding)
		if _, err := aead.Open(ct[:0], nonce, ct, benchBinding); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendSealOpen is BenchmarkSealOpen with the cursor appended to
// a reused buffer, as a response writer does.
func BenchmarkAppendSealOpen(b *testing.B) {
	s := MustNew(Options{})
	now := time.Now()
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		buf, err = s.AppendSeal(buf[:0], benchBinding, benchPayload, now)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := s.Open(benchBinding, string(buf)); err != nil {
			b.Fatal(err)
		}
	}
}
