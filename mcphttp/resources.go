package mcphttp

import (
	"context"
	"log/slog"
	"strconv"

	"github.com/mcpkit/mcpkit/internal/jsonstrict"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
	"github.com/mcpkit/mcpkit/principal"
)

// The endpoint's own methods: the handshake and the resource methods. The
// inventory decides, in Go values; these put its answers on the wire.

// discoverTTLMillis is how long clients may cache server/discover: the
// result is the same for every caller.
const discoverTTLMillis = 5 * 60 * 1000

func (e *Endpoint) registerResourceMethods() {
	e.methods["initialize"] = method{h: e.initialize, opts: MethodOptions{Era: EraLegacy}}
	e.methods["ping"] = method{h: e.ping, opts: MethodOptions{Era: EraLegacy}}
	e.methods["server/discover"] = method{h: e.serverDiscover, opts: MethodOptions{Era: EraModern}}
	e.methods["resources/list"] = method{h: e.list, opts: MethodOptions{Class: classOf(ClassList)}}
	e.methods["resources/read"] = method{h: e.read, opts: MethodOptions{NameMember: "uri", Class: classOf(ClassRead)}}
	e.methods["resources/templates/list"] = method{h: e.templates, opts: MethodOptions{Class: classOf(ClassList)}}
	e.methods["completion/complete"] = method{h: e.complete, opts: MethodOptions{Claims: notForPrompt, Class: classOf(ClassSearch)}}
}

// notForPrompt claims a completion unless its params.ref.type is exactly
// "ref/prompt": a reference the strict reader cannot read is the
// endpoint's, never another server's that might read it differently.
func notForPrompt(params []byte) bool {
	ref, ok := mcpwire.ObjectParam(params, "ref")
	if !ok {
		return true
	}
	typ, _, err := mcpwire.StringParam(ref, "type")
	return err != nil || typ != "ref/prompt"
}

// encodeCapabilities pre-encodes the capabilities of answers with and
// without event streams, and the server/discover result.
func (e *Endpoint) encodeCapabilities() {
	caps := func(notifying bool) []byte {
		n := strconv.FormatBool(notifying && e.notifying)
		b := []byte(`{"resources":{"subscribe":` + n + `,"listChanged":` + n + `}`)
		if e.inv.Completes() {
			b = append(b, `,"completions":{}`...)
		}
		for _, c := range e.caps {
			b = append(mcpwire.AppendString(append(b, ','), c.name), ':')
			b = append(b, c.value(notifying && e.notifying)...)
		}
		return append(b, '}')
	}
	e.capsPlain, e.capsNotify = caps(false), caps(true)
	versions, _ := jsonrpcMarshalStrings(allVersions)
	d := append([]byte(`{"supportedVersions":`), versions...)
	d = append(append(d, `,"capabilities":`...), e.capsNotify...)
	if e.instructions != nil {
		d = append(append(d, `,"instructions":`...), e.instructions...)
	}
	d = append(d, `,"resultType":"complete","ttlMs":`+strconv.Itoa(discoverTTLMillis)+`,"cacheScope":"public",`...)
	e.discover = append(append(d, e.metaPlain[len(`"resultType":"complete",`):]...), '}')
}

func jsonrpcMarshalStrings(ss []string) ([]byte, error) {
	b := []byte{'['}
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = mcpwire.AppendString(b, s)
	}
	return append(b, ']'), nil
}

// initializeResult is the legacy handshake's answer.
func (e *Endpoint) initializeResult(version string, notifying bool) []byte {
	caps := e.capsPlain
	if notifying {
		caps = e.capsNotify
	}
	b := make([]byte, 0, 256)
	b = append(b, `{"protocolVersion":"`...)
	b = append(b, version...)
	b = append(b, `","capabilities":`...)
	b = append(b, caps...)
	b = append(b, `,"serverInfo":`...)
	b = append(b, e.serverInfo...)
	if e.instructions != nil {
		b = append(b, `,"instructions":`...)
		b = append(b, e.instructions...)
	}
	return append(b, '}')
}

// resultReply is the answer carrying a whole result object.
func resultReply(id jsonrpc.ID, result []byte) Result {
	return Result{body: jsonrpc.AppendResult(make([]byte, 0, len(result)+48), id, result)}
}

// initialize answers the legacy handshake without a session; a part that
// mints sessions registers its own.
func (e *Endpoint) initialize(_ context.Context, c *Request) (Result, error) {
	return resultReply(c.ID, e.initializeResult(c.ProtocolVersion, false)), nil
}

func (e *Endpoint) ping(_ context.Context, c *Request) (Result, error) {
	return resultReply(c.ID, []byte("{}")), nil
}

func (e *Endpoint) serverDiscover(_ context.Context, c *Request) (Result, error) {
	return resultReply(c.ID, e.discover), nil
}

func (e *Endpoint) list(ctx context.Context, c *Request) (Result, error) {
	if c.Principal == nil && e.inv.HasListSources() {
		return Result{}, principal.ErrUnauthenticated // before looking at params
	}
	cursor, err := c.cursor()
	if err != nil {
		return Result{}, err
	}
	buf := getResp()
	meta := e.metaFor(c.Modern, CachePrivate)
	buf.Start(jsonrpc.AppendResultHead(buf.Body[:0], c.ID), "resources", e.pageBytes, e.pageReserve(meta), e.statics)
	next, err := e.inv.List(ctx, c.Principal, cursor, buf.fitItem)
	if err != nil {
		buf.discard()
		return Result{}, err
	}
	c.NoteEntries(buf.Items)
	return buf.result(endPage(buf.Body, next, meta)), nil
}

func (e *Endpoint) templates(ctx context.Context, c *Request) (Result, error) {
	cursor, err := c.cursor()
	if err != nil {
		return Result{}, err
	}
	buf := getResp()
	meta := e.metaFor(c.Modern, CachePrivate)
	buf.Start(jsonrpc.AppendResultHead(buf.Body[:0], c.ID), "resourceTemplates", e.pageBytes, e.pageReserve(meta), nil)
	next, err := e.inv.Templates(ctx, c.Principal, cursor, buf.fitTmpl)
	if err != nil {
		buf.discard()
		return Result{}, err
	}
	c.NoteEntries(buf.Items)
	return buf.result(endPage(buf.Body, next, meta)), nil
}

func (e *Endpoint) read(ctx context.Context, c *Request) (Result, error) {
	uri, err := c.uri()
	if err != nil {
		return Result{}, err
	}
	c.NoteURI(uri)
	contents, err := e.inv.Read(ctx, c.Principal, uri)
	if err != nil {
		return Result{}, mcpwire.AboutURI(uri, err)
	}
	buf := getResp()
	out := jsonrpc.AppendResultHead(buf.Body[:0], c.ID)
	out = append(out, `{"contents":[`...)
	for i := range contents {
		if i > 0 {
			out = append(out, ',')
		}
		out = mcpwire.AppendContents(out, &contents[i])
	}
	out = closeResult(append(out, ']'), e.metaFor(c.Modern, CachePrivate), true)
	if len(out) > e.maxBytes {
		release(buf, buf.gen.Load(), out)
		return Result{}, e.tooLarge(ctx, c.Method, "", len(out))
	}
	return buf.result(out), nil
}

// tooLarge logs a response of n bytes over the byte limit and returns the
// error that answers it (a generic internal error).
func (e *Endpoint) tooLarge(ctx context.Context, method, target string, n int) error {
	e.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelError, "mcphttp: response over the byte limit",
		slog.String("method", method), slog.String("target", target), slog.Int("bytes", n), slog.Int("limit", e.maxBytes))
	return mcpwire.ResultTooLarge{}
}

// complete serves completion/complete for resource templates:
// {"ref":{"type":"ref/resource","uri":…},"argument":{"name","value"},
// "context":{"arguments":{…}}}.
func (e *Endpoint) complete(ctx context.Context, c *Request) (Result, error) {
	if !e.inv.Completes() {
		return Result{}, errMethodNotFound
	}
	ref, okRef := mcpwire.ObjectParam(c.params, "ref")
	arg, okArg := mcpwire.ObjectParam(c.params, "argument")
	if !okRef || !okArg {
		return Result{}, mcpwire.InvalidParams("params.ref and params.argument are required")
	}
	typ, _, err1 := mcpwire.StringParam(ref, "type")
	uri, _, err2 := mcpwire.StringParam(ref, "uri")
	name, _, err3 := mcpwire.StringParam(arg, "name")
	value, _, err4 := mcpwire.StringParam(arg, "value")
	switch {
	case err1 != nil || err2 != nil || err3 != nil || err4 != nil:
		return Result{}, mcpwire.ErrParamsFit()
	case typ == "ref/prompt":
		return Result{}, mcpwire.InvalidParams("this server has no prompts")
	case typ != "ref/resource":
		return Result{}, mcpwire.InvalidParams("params.ref.type must be ref/resource")
	}
	c.NoteURI(uri)
	args, err := contextArguments(c.params)
	if err != nil {
		return Result{}, err
	}
	comp, err := e.inv.Complete(ctx, c.Principal, uri, name, value, args)
	if err != nil {
		return Result{}, err
	}
	return resultReply(c.ID, e.completionResult(c, comp)), nil
}

// contextArguments reads params.context.arguments: an object of strings,
// or absent.
func contextArguments(params []byte) (map[string]string, error) {
	ctxObj, ok := mcpwire.ObjectParam(params, "context")
	if !ok {
		return nil, nil
	}
	argsObj, ok := mcpwire.ObjectParam(ctxObj, "arguments")
	if !ok {
		return nil, nil
	}
	args := map[string]string{}
	bad := false
	err := jsonstrict.Members(argsObj, func(n []byte, v jsonstrict.Value) bool {
		s, isStr := v.Str()
		if !isStr {
			bad = true
			return false
		}
		args[string(n)] = s
		return true
	})
	if err != nil || bad {
		return nil, mcpwire.ErrParamsFit()
	}
	return args, nil
}

// completionResult encodes {"completion":{"values":[…],"total":n,"hasMore":b}},
// leaving total out when it is unknown (zero with HasMore; see
// inventory.Completion).
func (e *Endpoint) completionResult(c *Request, comp inventory.Completion) []byte {
	b := make([]byte, 0, 64+16*len(comp.Values))
	b = append(b, `{"completion":{"values":[`...)
	for i, v := range comp.Values {
		if i > 0 {
			b = append(b, ',')
		}
		b = mcpwire.AppendString(b, v)
	}
	b = append(b, ']')
	if comp.Total > 0 || !comp.HasMore {
		b = append(b, `,"total":`...)
		b = strconv.AppendInt(b, int64(max(comp.Total, len(comp.Values))), 10)
	}
	b = append(b, `,"hasMore":`...)
	b = strconv.AppendBool(b, comp.HasMore)
	b = append(b, '}')
	if meta := e.metaFor(c.Modern, CacheNone); meta != nil {
		b = append(append(b, ','), meta...)
	}
	return append(b, '}')
}
