// Package hydra is a minimal login and consent app for Ory Hydra, for the
// interoperability test that signs in through Hydra (hydra_test.go): Hydra
// delegates both pages to an app of its operator's own, which accepts or
// rejects each request through Hydra's admin API. This one signs in one
// fixed user and grants every scope and audience the client asked for, so
// it is for tests only: it shows nothing to a person and asks nothing.
package hydra

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"time"
)

// LoginConsent is an http.Handler serving GET /login and GET /consent for
// Hydra's urls.login and urls.consent.
type LoginConsent struct {
	admin   string // Hydra's admin URL, without a trailing slash
	subject string
	client  *http.Client
}

// New returns the app for Hydra's admin API at admin, signing in subject.
func New(admin, subject string) (*LoginConsent, error) {
	u, err := url.Parse(admin)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, errors.New("hydra: admin must be an absolute URL")
	}
	if subject == "" {
		return nil, errors.New("hydra: empty subject")
	}
	return &LoginConsent{admin: u.String(), subject: subject, client: &http.Client{Timeout: 10 * time.Second}}, nil
}

func (lc *LoginConsent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var to string
	var err error
	switch r.URL.Path {
	case "/login":
		to, err = lc.login(r.Context(), r.URL.Query().Get("login_challenge"))
	case "/consent":
		to, err = lc.consent(r.Context(), r.URL.Query().Get("consent_challenge"))
	default:
		http.NotFound(w, r)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	http.Redirect(w, r, to, http.StatusFound)
}

// login accepts the login request as the app's subject.
func (lc *LoginConsent) login(ctx context.Context, challenge string) (string, error) {
	if challenge == "" {
		return "", errors.New("no login_challenge")
	}
	q := url.Values{"login_challenge": {challenge}}.Encode()
	return lc.accept(ctx, "/admin/oauth2/auth/requests/login/accept?"+q, map[string]any{"subject": lc.subject, "remember": false})
}

// consent grants the scopes the client asked for, and as access token
// audience both what it asked for with Hydra's audience parameter and the
// resource it named with RFC 8707's resource parameter, which MCP clients
// send and Hydra itself does not read. Hydra refuses an audience that is
// not in the client's registered audience list.
func (lc *LoginConsent) consent(ctx context.Context, challenge string) (string, error) {
	if challenge == "" {
		return "", errors.New("no consent_challenge")
	}
	q := url.Values{"consent_challenge": {challenge}}.Encode()
	var req struct {
		RequestedScope    []string `json:"requested_scope"`
		RequestedAudience []string `json:"requested_access_token_audience"`
		RequestURL        string   `json:"request_url"`
	}
	if err := lc.do(ctx, http.MethodGet, "/admin/oauth2/auth/requests/consent?"+q, nil, &req); err != nil {
		return "", err
	}
	audience := append([]string{}, req.RequestedAudience...)
	if u, err := url.Parse(req.RequestURL); err == nil {
		for _, r := range u.Query()["resource"] {
			if !slices.Contains(audience, r) {
				audience = append(audience, r)
			}
		}
	}
	return lc.accept(ctx, "/admin/oauth2/auth/requests/consent/accept?"+q, map[string]any{
		"grant_scope": req.RequestedScope, "grant_access_token_audience": audience, "remember": false,
	})
}

// accept PUTs body to path and returns the redirect_to of the answer.
func (lc *LoginConsent) accept(ctx context.Context, path string, body any) (string, error) {
	var out struct {
		RedirectTo string `json:"redirect_to"`
	}
	if err := lc.do(ctx, http.MethodPut, path, body, &out); err != nil {
		return "", err
	}
	if out.RedirectTo == "" {
		return "", errors.New("hydra: no redirect_to")
	}
	return out.RedirectTo, nil
}

func (lc *LoginConsent) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, lc.admin+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := lc.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("hydra: %s %s: status %d", method, path, res.StatusCode)
	}
	return json.Unmarshal(b, out)
}
