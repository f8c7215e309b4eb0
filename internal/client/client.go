// Package client is the outbound A2A client: it fetches and caches agent
// cards, picks the interface to use (JSONRPC, protocol 1.0 preferred, 0.3
// as a fallback; HTTP+JSON 1.0 when the card offers no JSONRPC interface)
// and calls SendMessage, SendStreamingMessage, GetTask, ListTasks,
// CancelTask and SubscribeToTask on remote agents.
//
// One Client is shared by every peer: it owns one http.Transport (so
// connections are pooled and reused), the SSRF guard that every connection
// passes through, and the card cache. A Peer is a cheap handle binding the
// Client to one agent's URL, credentials and timeout.
//
// Every failure is an *Error whose Kind says what happened (unreachable,
// timeout, bad card, auth refused, rate limited, JSON-RPC error, stream cut,
// invalid response, unsupported, blocked) and whose message says what to do.
package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/cardsign"
)

// Guard is the SSRF guard the client sends every URL and every connection
// through; *security.SSRFGuard implements it.
type Guard interface {
	// CheckURL refuses URLs whose host is (or resolves to) an address the
	// guard does not allow.
	CheckURL(ctx context.Context, rawURL string) error
	// DialContext connects like net.Dialer.DialContext, refusing addresses
	// the guard does not allow (also after DNS resolution).
	DialContext(ctx context.Context, network, addr string) (net.Conn, error)
}

// Options configure a Client. The zero value is usable (and allows every
// address: set Guard outside tests).
type Options struct {
	// Guard refuses loopback, private and link-local targets unless it
	// allows them; nil means no guard.
	Guard Guard
	// UserAgent is sent on every request.
	UserAgent string
	// Timeout bounds every unary call and the start of every stream when
	// the peer has no timeout of its own (default 30s).
	Timeout time.Duration
	// StreamIdleTimeout ends a stream on which nothing (not even an SSE
	// comment) arrived for this long (default 5m).
	StreamIdleTimeout time.Duration
	// CardTTL is how long a card is fresh when its response has no
	// Cache-Control max-age or Expires (default 5m).
	CardTTL time.Duration
	// MaxResponseBytes bounds a JSON-RPC response body and one SSE event
	// (default 16 MiB).
	MaxResponseBytes int64
	// Transport replaces the shared transport (tests); when set, Guard's
	// DialContext is not installed (gRPC connections then dial directly
	// too), but URLs still pass Guard.CheckURL.
	Transport http.RoundTripper
	// TLSConfig configures TLS of outbound connections, HTTP and gRPC
	// (nil: the system roots). Its ServerName is set per connection.
	TLSConfig *tls.Config
	// Logger receives debug logs; nil discards them.
	Logger hclog.Logger
	// Now returns the current time (tests); nil means time.Now.
	Now func() time.Time
}

// Client is the outbound A2A client shared by all peers. It is safe for
// concurrent use.
type Client struct {
	opts  Options
	hc    *http.Client
	tr    *http.Transport // nil when Options.Transport was given
	cards cardCache
	grpc  grpcConns
	log   hclog.Logger
}

// New returns a Client with one shared, pooled transport whose dialer is
// the guard's.
func New(opts Options) *Client {
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.StreamIdleTimeout <= 0 {
		opts.StreamIdleTimeout = 5 * time.Minute
	}
	if opts.CardTTL <= 0 {
		opts.CardTTL = 5 * time.Minute
	}
	if opts.MaxResponseBytes <= 0 {
		opts.MaxResponseBytes = 16 << 20
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "a2a-plugin"
	}
	c := &Client{opts: opts, log: opts.Logger}
	if c.log == nil {
		c.log = hclog.NewNullLogger()
	}
	rt := opts.Transport
	if rt == nil {
		dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
		dial := dialer.DialContext
		if opts.Guard != nil {
			dial = guardedDial(opts.Guard, dialer.DialContext)
		}
		c.tr = &http.Transport{
			Proxy:                 nil, // a proxy would bypass the SSRF guard's address checks
			DialContext:           dial,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          100,
			MaxIdleConnsPerHost:   8,
			MaxConnsPerHost:       64,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ExpectContinueTimeout: time.Second,
			ResponseHeaderTimeout: 0, // bounded per call by the context
			TLSClientConfig:       opts.TLSConfig.Clone(),
		}
		rt = c.tr
	}
	c.hc = &http.Client{
		Transport: rt,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("stopped after 5 redirects")
			}
			if err := c.checkURL(req.Context(), req.URL.String()); err != nil {
				return err
			}
			// Credentials go only to the origin they were sent to: a
			// redirect to another scheme, host or port loses them.
			if originOfURL(req.URL) != originOfURL(via[0].URL) {
				req.Header.Del("Authorization")
				if sc, _ := req.Context().Value(scopeKey{}).(*scope); sc != nil && sc.header != "" {
					req.Header.Del(sc.header)
				}
			}
			return nil
		},
	}
	return c
}

// Close releases idle connections and closes the gRPC connections.
func (c *Client) Close() {
	if c.tr != nil {
		c.tr.CloseIdleConnections()
	}
	c.grpc.closeAll()
}

// now is the client's clock.
func (c *Client) now() time.Time {
	if c.opts.Now != nil {
		return c.opts.Now()
	}
	return time.Now()
}

// checkURL passes raw through the guard, if any. A URL on the origin of
// the configured peer a request is made for (see scoped) skips it: the
// operator chose that address.
func (c *Client) checkURL(ctx context.Context, raw string) error {
	if c.opts.Guard == nil {
		return nil
	}
	if sc, _ := ctx.Value(scopeKey{}).(*scope); sc != nil && sc.exempt != "" && originOf(raw) == sc.exempt {
		return nil
	}
	if err := c.opts.Guard.CheckURL(ctx, raw); err != nil {
		return blockedError{err}
	}
	return nil
}

// scopeKey is the context key of a request's *scope.
type scopeKey struct{}

// scope is what the guard, the dialer and the redirect policy must know of
// a request beyond its URL: on whose behalf it is made.
type scope struct {
	// exempt is the origin (see originOf) of the configured peer the
	// request is made for; URLs and connections on exactly that origin
	// skip the guard. Empty for an unconfigured URL.
	exempt string
	// exemptAddr is exempt's host:port as the transport dials it.
	exemptAddr string
	// header is the peer's extra credential header, dropped with
	// Authorization when a redirect leaves the origin.
	header string
}

// scoped returns ctx carrying the scope of requests made for p.
func (c *Client) scoped(ctx context.Context, p *Peer) context.Context {
	sc := &scope{header: p.ep.Auth.HeaderName}
	if p.ep.Configured && p.origin != "" {
		sc.exempt, sc.exemptAddr = p.origin, originAddr(p.origin)
	}
	return context.WithValue(ctx, scopeKey{}, sc)
}

// originOf returns the origin of an absolute http(s) URL as
// "scheme://host:port": lower case, the port made explicit (80 for http,
// 443 for https), IPv6 hosts in brackets. It returns "" for anything else.
func originOf(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return ""
	}
	return originOfURL(u)
}

// originOfURL is originOf for a parsed URL.
func originOfURL(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	switch scheme {
	case "http":
		if port == "" {
			port = "80"
		}
	case "https":
		if port == "" {
			port = "443"
		}
	default:
		return ""
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return ""
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// originAddr is the host:port of an origin made by originOf.
func originAddr(origin string) string {
	_, addr, _ := strings.Cut(origin, "://")
	return addr
}

// sameAddr reports whether a dial address ("host:port", as the transport
// passes it) is addr (from originAddr).
func sameAddr(dial, addr string) bool {
	h, port, err := net.SplitHostPort(dial)
	if err != nil {
		return false
	}
	return net.JoinHostPort(strings.TrimSuffix(strings.ToLower(h), "."), port) == addr
}

// blockedError marks an error of the SSRF guard, so that it is reported as
// ErrBlocked rather than as an unreachable peer.
type blockedError struct{ err error }

func (b blockedError) Error() string { return b.err.Error() }
func (b blockedError) Unwrap() error { return b.err }
func (b blockedError) blocked() bool { return true }

// guardedDial wraps the guard's dialer so that its refusals (as opposed to
// ordinary network errors) are recognisable. A connection to exactly the
// host and port of the configured peer a request is made for (its scope)
// is dialed directly: that request's URL was checked by checkURL, and the
// operator chose the address. Any other address — a redirect elsewhere, an
// interface URL on another origin — goes through the guard.
func guardedDial(g Guard, direct func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if sc, _ := ctx.Value(scopeKey{}).(*scope); sc != nil && sc.exemptAddr != "" && sameAddr(addr, sc.exemptAddr) {
			return direct(ctx, network, addr)
		}
		conn, err := g.DialContext(ctx, network, addr)
		if err != nil {
			var ne net.Error
			var dnsErr *net.DNSError
			if !errors.As(err, &ne) && !errors.As(err, &dnsErr) && ctx.Err() == nil {
				return nil, blockedError{err}
			}
			return nil, err
		}
		return conn, nil
	}
}

// Auth is how to authenticate to a peer: a bearer token, or an arbitrary
// header (e.g. "X-API-Key: secret"), or both.
type Auth struct {
	// Token is sent as "Authorization: Bearer <Token>".
	Token string
	// TokenFunc, when set, returns the bearer token for each request and
	// takes precedence over Token unless it returns "". It lets the caller
	// rotate a token (re-read from a file, re-run a command) without new
	// Peer handles; it must be fast and safe for concurrent use.
	TokenFunc func() string
	// HeaderName and HeaderValue are sent as one extra header.
	HeaderName, HeaderValue string
}

// Endpoint identifies one remote agent and how to call it.
type Endpoint struct {
	// Name is the configured peer name ("" for an ad-hoc URL); used in
	// errors and logs.
	Name string
	// URL is the agent's base URL (its card is looked for under it) or the
	// URL of its card (ending in .json).
	URL string
	// Auth is sent with every request to this peer, card fetches included.
	Auth Auth
	// Timeout bounds each unary call to this peer (0: the client default).
	Timeout time.Duration
	// CardKeys, when set, makes the peer "signed": its card must carry a
	// signature that verifies with one of these keys, or every call fails
	// with ErrUntrustedCard. The card used is then the signed content.
	CardKeys *cardsign.KeySet
	// Configured marks a peer the operator configured by its URL (not an
	// ad-hoc URL): requests on behalf of this peer to exactly the origin of
	// URL — scheme, host and port, 80/443 when omitted — skip the SSRF
	// guard. Every other origin (a card's interface URL elsewhere, a
	// redirect) passes the guard like an unconfigured URL.
	Configured bool
}

// Peer is a handle on one remote agent. It is cheap to create; the card
// cache and connections live in the Client.
type Peer struct {
	c  *Client
	ep Endpoint
	// origin is the origin of ep.URL (originOf): where credentials go and,
	// for a configured peer, what the guard exempts.
	origin string
	// call is what this handle's requests carry (For).
	call Call
}

// Peer returns a handle on the agent described by ep.
func (c *Client) Peer(ep Endpoint) *Peer {
	ep.URL = strings.TrimSpace(ep.URL)
	return &Peer{c: c, ep: ep, origin: originOf(ep.URL)}
}

// For returns a handle on the same peer whose requests carry call (its
// trace): the handle of one call, made where the call starts. p is left as
// it is.
func (p *Peer) For(call Call) *Peer {
	q := *p
	q.call = call
	return &q
}

// Endpoint returns the endpoint the peer was created with.
func (p *Peer) Endpoint() Endpoint { return p.ep }

// name is the peer's name for errors: its configured name, else its URL.
func (p *Peer) name() string {
	if p.ep.Name != "" {
		return p.ep.Name
	}
	return p.ep.URL
}

// cardKey is the card cache key: the normalised URL.
func (p *Peer) cardKey() string {
	u, err := url.Parse(p.ep.URL)
	if err != nil {
		return p.ep.URL
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.Fragment = ""
	return u.String()
}

// timeout is the unary call timeout for this peer.
func (p *Peer) timeout(def time.Duration) time.Duration {
	if p.ep.Timeout > 0 {
		return p.ep.Timeout
	}
	return def
}

// Card returns the peer's agent card, from the cache while it is fresh,
// revalidating it (If-None-Match / If-Modified-Since) once stale.
func (p *Peer) Card(ctx context.Context) (*CardInfo, error) {
	return p.c.fetchCard(ctx, p, false)
}

// Refresh fetches the card now, ignoring freshness (a conditional request
// is still made, and a 304 keeps the cached card).
func (p *Peer) Refresh(ctx context.Context) (*CardInfo, error) {
	return p.c.fetchCard(ctx, p, true)
}

// CachedCard returns the cached card without any request, or nil.
func (p *Peer) CachedCard() *CardInfo {
	return p.c.cards.peek(p)
}

// hasCredentials reports whether requests to p carry a credential.
func (p *Peer) hasCredentials() bool {
	a := p.ep.Auth
	return a.Token != "" || a.TokenFunc != nil || a.HeaderName != ""
}

// credentialsFor reports whether p's credentials may go to target: only to
// the origin p was configured with, or to the interface URL of a card
// whose signature verified with the peer's keys (verified).
func (p *Peer) credentialsFor(target *url.URL, verified bool) bool {
	return verified || (p.origin != "" && originOfURL(target) == p.origin)
}

// checkCredentialOrigin refuses a call to an interface URL on another
// origin than the peer's configured one when the peer has credentials and
// its card is not verified: they are not sent there, and a call without
// them would only be refused (or, worse, quietly served as anonymous).
func (p *Peer) checkCredentialOrigin(in a2a.AgentInterface, verified bool) error {
	if !p.hasCredentials() {
		return nil
	}
	u, err := url.Parse(in.URL)
	if err != nil || p.credentialsFor(u, verified) {
		return nil
	}
	return fmt.Errorf("the agent card moves the interface to %s, another origin than the configured %s; "+
		"the peer's credentials are sent only to its configured origin (or to the interface of a card whose signature verifies), so nothing was sent",
		originOfURL(u), p.origin)
}

// decorate sets the headers every request to p carries. Credentials are
// set only when credentialsFor allows them for the request's URL.
func (c *Client) decorate(req *http.Request, p *Peer, verified bool) {
	req.Header.Set("User-Agent", c.opts.UserAgent)
	p.call.setTraceHeaders(req.Header)
	if p.credentialsFor(req.URL, verified) {
		p.setCredentials(req.Header.Set)
	}
}

// setCredentials gives set the peer's credentials, for any transport: the
// bearer token (TokenFunc's when it returns one) as Authorization, and the
// configured extra header. Callers check credentialsFor first.
func (p *Peer) setCredentials(set func(name, value string)) {
	token := p.ep.Auth.Token
	if f := p.ep.Auth.TokenFunc; f != nil {
		if v := f(); v != "" {
			token = v
		}
	}
	if token != "" {
		set("Authorization", "Bearer "+token)
	}
	if p.ep.Auth.HeaderName != "" {
		set(p.ep.Auth.HeaderName, p.ep.Auth.HeaderValue)
	}
}

// versionHeader sets A2A-Version for a v1.0 interface; 0.3 peers get no
// header, which the specification defines as 0.3.
func versionHeader(h http.Header, in a2a.AgentInterface) {
	if in.ProtocolVersion != a2a.ProtocolVersionV03 {
		h.Set(a2a.HeaderVersion, a2a.ProtocolVersion)
	}
}
