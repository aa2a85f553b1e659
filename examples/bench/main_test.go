package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain lets the test binary serve as the harness's server processes,
// which the load generator starts by running its own executable again.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		if err := serve(os.Args[1:], os.Stdin, os.Stdout); err != nil {
			os.Stderr.WriteString("bench server: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A smoke run: every server starts, every scenario answers correctly (the
// load generator checks each response), and the report has its lines.
// Figures come from "go run ./examples/bench", never from a test.
func TestSmoke(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"-rounds", "1", "-duration", "200ms", "-conns", "2", "-entries", "2000", "-deep-page", "3"}, &out)
	require.NoError(t, err, out.String())
	for _, s := range []string{"bare-private", "kit-private", "kit-deep (page 3)", "bare-static", "kit-static",
		"kit-private / bare-private:", "kit-static / bare-static:", "allocs/req", "CPU/req"} {
		assert.Contains(t, out.String(), s)
	}
	assert.NotContains(t, out.String(), "first error")
}

func TestSmokeStreams(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"-streams", "24"}, &out)
	require.NoError(t, err, out.String())
	assert.Contains(t, out.String(), "24 idle subscriptions/listen streams (3 principals), server process only")
	assert.Contains(t, out.String(), "KiB per stream")
}

func TestFlagsRejected(t *testing.T) {
	for _, args := range [][]string{
		{"-rounds", "0"}, {"-duration", "0"}, {"-duration", "2m"}, {"-conns", "0"}, {"-statics", "51"},
		{"-deep-page", "1"}, {"-entries", "1000", "-deep-page", "20"}, {"-streams", "-1"}, {"extra"},
	} {
		assert.Error(t, run(context.Background(), args, io.Discard), args)
	}
}
