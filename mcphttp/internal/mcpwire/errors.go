package mcpwire

// URIError carries the URI a not-found error of a read is about, for the
// data.uri of the answer.
type URIError struct {
	URI string
	Err error
}

func (e *URIError) Error() string { return e.Err.Error() }
func (e *URIError) Unwrap() error { return e.Err }

// AboutURI attaches the requested URI to an error of a read.
func AboutURI(uri string, err error) error { return &URIError{URI: uri, Err: err} }

// ResultTooLarge is the error of a result over the byte limit, logged
// where it was found: a generic internal error (-32603) to the client.
type ResultTooLarge struct{}

func (ResultTooLarge) Error() string { return "mcphttp: result over the byte limit" }

// The MCP rate-limit error (the draft SEP-3304): its JSON-RPC code and
// message, which the rate limits (mcphttp/ratelimit) and the endpoint's
// answer to too many refused credentials share.
const (
	CodeRateLimited    = -32023
	RateLimitedMessage = "Rate limit exceeded"
)
