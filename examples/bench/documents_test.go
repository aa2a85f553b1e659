package main

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A smoke run: every scenario answers correctly. Figures come from
// "go run ./examples/bench documents", never from a test.
func TestDocumentsSmoke(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"documents", "-requests", "50", "-big", "300", "-deep-page", "5", "-concurrency", "4", "-rounds", "1", "-duration", "1m"}, &out)
	require.NoError(t, err, out.String())
	for _, s := range []string{"first-small (10 docs, one page)", "first-big (300 docs)", "deep-big-same (page 5 again)", "deep-big (pages 5+)", "deep-big (pages 5+) / first-small"} {
		assert.Contains(t, out.String(), s)
	}
	assert.NotContains(t, out.String(), "first error")
	assert.Contains(t, out.String(), `deep pages start at page 5 of big's listing ("big's document 000043")`)
}

func TestDocumentsFlagsRejected(t *testing.T) {
	for _, args := range [][]string{
		{"-duration", "11m"}, {"-duration", "0"}, {"-concurrency", "0"}, {"-page-size", "101"},
		{"-small", "20", "-page-size", "10"}, {"-big", "5"}, {"-deep-page", "1"}, {"-rounds", "0"}, {"-requests", "-1"},
	} {
		assert.Error(t, run(context.Background(), append([]string{"documents"}, args...), io.Discard), args)
	}
}
