package upstream

import (
	"context"
	"io"
	"net/http"
)

// source is what a transport gets its tokens from.
type source interface {
	// token returns the access token to send.
	token(ctx context.Context) (string, error)
	// refused tells the source that the upstream refused tok (401).
	refused(ctx context.Context, tok string)
	// refusedAgain is the error when the upstream refused the token
	// obtained after refused too.
	refusedAgain(ctx context.Context) error
}

// transport sends each request with the caller's upstream token, never
// the caller's MCP token: whatever Authorization header the request
// carried is replaced.
type transport struct {
	src  source
	base http.RoundTripper
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	tok, err := t.src.token(ctx)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	resp, err := base.RoundTrip(withToken(req, tok))
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	// One more try with a new token, never more: a refused token is
	// dropped (or refreshed) once, then the caller is told.
	t.src.refused(ctx, tok)
	if req.Body != nil && req.GetBody == nil {
		return resp, nil // cannot replay the body: the 401 is the answer
	}
	drain(resp)
	retry := req.Clone(ctx)
	if req.Body != nil {
		if retry.Body, err = req.GetBody(); err != nil {
			return nil, err
		}
	}
	if tok, err = t.src.token(ctx); err != nil {
		closeBody(retry)
		return nil, err
	}
	resp, err = base.RoundTrip(withToken(retry, tok))
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	drain(resp)
	t.src.refused(ctx, tok)
	return nil, t.src.refusedAgain(ctx)
}

func withToken(req *http.Request, tok string) *http.Request {
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+tok)
	r.Header.Del("DPoP")
	return r
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	_ = resp.Body.Close()
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}
