package devissuer

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"html/template"
	"net/http"
	"strconv"
)

// pageStyle is the pages' only style sheet, allowed by its hash: the pages
// load nothing else and run no script.
const pageStyle = `
body{font:1rem/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1b1b;background:#f4f4f5;margin:0}
main{max-width:34rem;margin:2rem auto;padding:1.5rem 2rem;background:#fff;border:1px solid #d4d4d8;border-radius:.5rem}
h1{font-size:1.4rem;margin:.2rem 0 1rem}
h2{font-size:1.05rem;margin:1.2rem 0 .4rem}
.dev{background:#fff4d6;border:2px solid #9a6700;border-radius:.4rem;padding:.6rem .8rem;margin:0 0 1rem}
.dev strong{color:#6b4700}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;margin:0}
dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}
code{font:.9em ui-monospace,Menlo,Consolas,monospace;background:#f0f0f2;padding:0 .2em;border-radius:.2em}
ul{margin:.2rem 0;padding-left:1.3rem}
fieldset{border:1px solid #d4d4d8;border-radius:.4rem;margin:1rem 0;padding:.6rem 1rem}
legend{font-weight:600;padding:0 .3rem}
.choice{margin:.3rem 0}
input[type=text]{font:inherit;padding:.2rem .4rem;border:1px solid #71717a;border-radius:.3rem}
.buttons{display:flex;gap:.8rem;margin-top:1rem}
button{font:inherit;font-weight:600;padding:.5rem 1.4rem;border-radius:.4rem;border:2px solid #1d4ed8;cursor:pointer}
button.approve{background:#1d4ed8;color:#fff}
button.deny{background:#fff;color:#1d4ed8}
:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}
.problem{color:#b91c1c;font-weight:600}
.note{color:#52525b;font-size:.9rem}
`

var styleHash = func() string {
	h := sha256.Sum256([]byte(pageStyle))
	return "'sha256-" + base64.StdEncoding.EncodeToString(h[:]) + "'"
}()

// pageTemplate renders the login page and the error page. html/template
// escapes everything a client or person supplied (client name, client
// id, redirect URI, a typed user name).
var pageTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{{if .Error}}Sign-in problem{{else}}Sign in to {{.Resource}}{{end}} (development mode)</title>
<style>{{.Style}}</style>
</head>
<body>
<main>
<p class="dev" role="note"><strong>Development mode.</strong> This sign-in page is part of a development server: there are no passwords, and anyone who can reach {{.Origin}} can sign in as any user. Never use it in production.</p>
{{if .Error}}
<h1>This sign-in cannot go on</h1>
<p role="alert">{{.Error}}</p>
{{else}}
<h1>Sign in to {{.Resource}}</h1>
<p><strong>{{.ClientName}}</strong> asks to use {{.Resource}} as you.</p>
<dl>
<dt>Client</dt><dd>{{.ClientName}}{{if .ClientNote}} <span class="note">({{.ClientNote}})</span>{{end}}</dd>
<dt>Client id</dt><dd><code>{{.ClientID}}</code></dd>
<dt>Sends you back to</dt><dd><code>{{.RedirectURI}}</code></dd>
</dl>
<h2 id="scopes">It asks for</h2>
<ul aria-labelledby="scopes">
{{range .Scopes}}<li><code>{{.Name}}</code>{{if .Description}}: {{.Description}}{{end}}</li>
{{end}}</ul>
<form method="post" action="{{.Action}}">
<input type="hidden" name="request" value="{{.Request}}">
<input type="hidden" name="csrf" value="{{.CSRF}}">
{{if .SignedIn}}<p id="signed-in">Signed in as <strong>{{.SignedIn}}</strong>. Only {{.SignedIn}} can approve this request: it gives the client more access as {{.SignedIn}}.</p>
<input type="hidden" name="user" value="{{.SignedIn}}">
{{else}}<fieldset>
<legend>Sign in as</legend>
{{range $i, $u := .Users}}<div class="choice"><input type="radio" id="user-{{$i}}" name="user" value="{{$u}}"> <label for="user-{{$i}}">{{$u}}</label></div>
{{end}}<div class="choice"><input type="radio" id="user-other" name="user" value=""> <label for="user-other">another user:</label> <input type="text" id="other" name="other" maxlength="256" autocomplete="off" aria-label="the other user's name"></div>
</fieldset>
{{end}}{{if .Problem}}<p class="problem" role="alert">{{.Problem}}</p>{{end}}
<div class="buttons"><button type="submit" class="approve" name="decision" value="approve">Approve</button><button type="submit" class="deny" name="decision" value="deny">Deny</button>{{if .SignedIn}}<button type="submit" class="deny" name="decision" value="switch">Sign in as someone else</button>{{end}}</div>
</form>
<p class="note">Approving gives {{.ClientName}} an access token for {{.Resource}} with these scopes, as the user you chose.</p>
{{end}}
</main>
</body>
</html>
`))

// pageData is what pageTemplate shows.
type pageData struct {
	Style       template.CSS
	Origin      string
	Resource    string
	Error       string
	ClientName  string
	ClientNote  string
	ClientID    string
	RedirectURI string
	Scopes      []Scope
	Users       []string
	Action      string
	Request     string
	CSRF        string
	Problem     string
	SignedIn    string // a step-up: who is signed in, the only user who may approve
}

// setPageHeaders sets the headers of every HTML page: not cached, never
// framed (frame-ancestors and X-Frame-Options), no script at all, only the
// page's own style sheet, forms posted to the server itself (and, after
// the redirect, to formTarget), no referrer.
func setPageHeaders(w http.ResponseWriter, formTarget string) {
	h := w.Header()
	action := "'self'"
	if formTarget != "" {
		action += " " + formTarget
	}
	h.Set("Content-Security-Policy", "default-src 'none'; style-src "+styleHash+"; img-src 'none'; form-action "+action+
		"; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Type", "text/html; charset=utf-8")
}

func (s *Server) render(w http.ResponseWriter, status int, d pageData, formTarget string) {
	d.Style, d.Origin, d.Resource = template.CSS(pageStyle), s.origin, s.opts.ResourceName
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, d); err != nil {
		s.log.Error("devissuer: rendering a page failed", "error", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	setPageHeaders(w, formTarget)
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// errorPage shows msg, a fixed sentence, to the person in the browser.
func (s *Server) errorPage(w http.ResponseWriter, status int, msg string) {
	s.render(w, status, pageData{Error: msg}, "")
}

// loginPage shows the sign-in page of request id.
func (s *Server) loginPage(w http.ResponseWriter, r *http.Request, id string, req signIn, problem string, status int) {
	d := pageData{
		ClientID: req.client.id, RedirectURI: req.redirectURI, Users: s.opts.Users, Action: s.consentURL,
		Request: id, CSRF: s.csrfToken(s.browserCookie(w, r), id), Problem: problem, SignedIn: req.user,
	}
	d.ClientName, d.ClientNote = req.client.name, "the name it gave when it registered: not verified"
	if req.client.fromDocument {
		d.ClientNote = "as its metadata document at " + hostOf(req.client.id) + " says"
	}
	if d.ClientName == "" {
		d.ClientName, d.ClientNote = "An unnamed client", ""
		if req.client.fromDocument {
			d.ClientName = hostOf(req.client.id)
		}
	}
	for _, name := range req.scopes {
		for _, sc := range s.opts.Scopes {
			if sc.Name == name {
				d.Scopes = append(d.Scopes, sc)
			}
		}
	}
	s.render(w, status, d, formActionSource(req.redirectURI))
}
