package server

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
	"github.com/a2a-plugin/a2a-plugin/internal/tracing"
)

// Options configure a Server. Zero values get the documented defaults;
// only Tasks is required.
type Options struct {
	// Tasks runs the lifecycle of inbound tasks. Required.
	Tasks *tasks.Manager
	// Skills returns the skills of the host's live tool registry (the app
	// builds them from Host.ListTools with bridge.SkillsOf), called at
	// most once every 2 s (concurrent card requests share one call). Nil,
	// none, or a failing call yields a single generic "chat" skill.
	Skills func(ctx context.Context) ([]a2a.AgentSkill, error)
	// Card is what the agent card says about the agent.
	Card CardConfig
	// Auth identifies callers. Nil means no token is configured: every
	// caller is anonymous, and loopback callers are local.
	Auth *security.Authenticator
	// Policy says which tier may use which operation. The zero Policy
	// (nil Allowed) means security.DefaultPolicy().
	Policy security.Policy
	// Gate, when non-empty, restricts who may send messages at all.
	Gate *security.TrustGate
	// RateLimit limits requests per identity (nil: unlimited). Refusals
	// are HTTP 429 with Retry-After and a -32051 JSON-RPC body.
	RateLimit *security.RateLimiter
	// RateLimitLocal applies RateLimit to Local callers too (the operator's
	// own tools: loopback, no token). By default they are exempt: every
	// agent and tool on the machine would otherwise share one
	// "local:127.0.0.1" budget.
	RateLimitLocal bool
	// Streams caps concurrent SSE streams per identity (nil: unlimited).
	Streams *security.StreamLimiter
	// Turns caps agent↔agent turns per context, the ping-pong loop guard
	// (nil: no cap).
	Turns *security.TurnGuard
	// MaxDelegationDepth rejects messages whose delegation chain (read
	// with security.ChainFromMetadata) is deeper than this many hops
	// (0: security.DefaultMaxChainDepth; negative: no limit).
	MaxDelegationDepth int
	// Limits bound request size and time.
	Limits Limits
	// Push configures push-notification config methods.
	Push PushOptions
	// Audit, when set, receives one record per exchange.
	Audit *security.AuditLog
	// Observer, when set, also sees every exchange's record (metrics).
	Observer func(security.AuditRecord)
	// Extra are operator routes (e.g. "GET /metrics") served beside the
	// A2A endpoints behind the same authentication; see ExtraRoute.
	Extra []ExtraRoute
	// Tracer records a span per request (nil: OpenTelemetry export off).
	// W3C trace context is propagated either way (see trace.go).
	Tracer *tracing.Tracer
	// DisableGRPC turns the gRPC binding off: the card declares no GRPC
	// interface and Start serves no gRPC (see listen.go).
	DisableGRPC bool
	// Logger receives structured logs (default: discard).
	Logger hclog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time

	// AgentID is the id of the agent these Options describe, the default
	// agent (served at the root and, with Agents, at /agents/{AgentID}/);
	// "" for the one agent of a host without agents.
	AgentID string
	// Agents are the host's other agents (contract 1.4), each served
	// under /agents/{id}/ and reachable at the root URL by its tenant. With
	// any, AgentID must be set too.
	Agents []AgentOptions
}

// CardConfig is what the agent card says about the agent.
type CardConfig struct {
	// Name is the agent's name (default "A2A Agent").
	Name string
	// Description says what the agent does (default: a generic sentence).
	Description string
	// Version is the agent's own version (default "1.0.0").
	Version string
	// ProviderOrganization and ProviderURL fill `provider`; both or
	// neither must be set.
	ProviderOrganization, ProviderURL string
	// DocumentationURL and IconURL are optional links.
	DocumentationURL, IconURL string
	// PublicURL is the base URL advertised in supportedInterfaces. Empty:
	// derived from each card request: its scheme and Host when the Host is
	// a loopback name or a name the served TLS certificate covers, else the
	// address the connection came in on (never an arbitrary Host).
	PublicURL string
	// ExtendedSkills are the extra skills of the extended card shown to
	// authenticated peers. The extended card is offered wherever
	// authenticated peers exist (a token or an OAuth issuer is
	// configured), with these skills or none, and with them to local
	// callers too.
	ExtendedSkills []a2a.AgentSkill
	// InputModes are the media types the agent accepts in message parts;
	// they are the card's defaultInputModes, and a part of any other type
	// is refused with -32005. Entries may be wildcards ("image/*", "*/*").
	// Default: DefaultInputModes.
	InputModes []string
	// OutputModes are the card's defaultOutputModes (default
	// DefaultOutputModes).
	OutputModes []string
	// Extensions are the protocol extensions the agent supports. A client
	// that lists one in A2A-Extensions gets it echoed as activated; one
	// marked Required must be requested (else -32008).
	Extensions []a2a.AgentExtension
	// CacheMaxAge is the card's Cache-Control max-age (default 5 min).
	CacheMaxAge time.Duration
	// Signer, when set, signs the public and the extended card (JWS over
	// the JCS-canonical card, A2A §8.4); nil serves them unsigned.
	Signer CardSigner
}

// Limits bound what a request may cost.
type Limits struct {
	// MaxBodyBytes bounds a JSON-RPC request body (default 4 MiB); larger
	// bodies get HTTP 413.
	MaxBodyBytes int64
	// MaxParts bounds the parts of one message (default 64).
	MaxParts int
	// MaxPartBytes bounds the decoded content of one part (default 2 MiB).
	MaxPartBytes int
	// MaxJSONDepth bounds JSON nesting (default 64), checked before
	// decoding; a gRPC message is bounded alike, as its ProtoJSON form
	// would nest.
	MaxJSONDepth int
	// ReadHeaderTimeout bounds reading request headers (default 10 s).
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a request body (default 30 s).
	ReadTimeout time.Duration
	// IdleTimeout bounds an idle keep-alive connection (default 120 s).
	IdleTimeout time.Duration
	// WriteTimeout bounds writing one response, or one SSE event, so that
	// a peer that stops reading is cut (default 30 s). It does not bound
	// how long a blocking send or a stream may last.
	WriteTimeout time.Duration
	// MaxHeaderBytes bounds request headers (default 64 KiB).
	MaxHeaderBytes int
	// MaxConnections bounds the open connections of a server started
	// with Start (default 1024): past it a new connection takes the place
	// of the longest-idle keep-alive one, or is answered HTTP 503 when
	// none is idle (see connLimiter).
	MaxConnections int
	// MaxStreams bounds the SSE streams open at once, whoever holds them
	// (default 512); past it a stream is refused with HTTP 503 (the
	// per-identity cap is Options.Streams).
	MaxStreams int
	// KeepAlive is the interval of SSE keep-alive comments (default 15 s).
	KeepAlive time.Duration
}

// ExtraRoute is an operator route served beside the A2A endpoints, behind
// the same authentication: Local callers may use it, others only when
// Allow says so (nil Allow: Local only). Refusals are plain HTTP 401/403.
type ExtraRoute struct {
	// Pattern is an http.ServeMux pattern, e.g. "GET /metrics".
	Pattern string
	Handler http.Handler
	// Allow decides for callers that are not Local.
	Allow func(security.Identity) bool
	// LongWrites exempts the route's responses from Limits.WriteTimeout
	// (pprof's execution trace writes for as long as it was asked to
	// record); its handler bounds its own writes, if it needs to.
	LongWrites bool
}

// PushOptions configure push notifications.
type PushOptions struct {
	// Enabled turns the push-config methods on; the card advertises it.
	Enabled bool
	// CheckURL vets a webhook URL (the SSRF guard); nil accepts any
	// http(s) URL.
	CheckURL func(ctx context.Context, url string) error
}

// Defaults of the Limits fields.
const (
	DefaultMaxConnections = 1024
	DefaultMaxStreams     = 512
	DefaultMaxBodyBytes   = 4 << 20
	DefaultMaxParts       = 64
	DefaultMaxPartBytes   = 2 << 20
	DefaultMaxJSONDepth   = 64
	defaultCardMaxAge     = 5 * time.Minute
)

// DefaultInputModes are the media types accepted when CardConfig.InputModes
// is empty: text, JSON, images, PDF and opaque files.
var DefaultInputModes = []string{"text/plain", "text/*", "application/json", "image/*", "application/pdf", "application/octet-stream"}

// DefaultOutputModes are the card's defaultOutputModes when
// CardConfig.OutputModes is empty.
var DefaultOutputModes = []string{"text/plain", "text/markdown", "application/json"}

// withDefaults fills in defaults and checks the configuration.
func (o Options) withDefaults() (Options, error) {
	if o.Tasks == nil {
		return o, errors.New("server: Options.Tasks is required")
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Policy.Allowed == nil {
		o.Policy = security.DefaultPolicy()
	}
	if o.Auth == nil {
		a, err := security.NewAuthenticator(security.AuthConfig{LoopbackIsLocal: true})
		if err != nil {
			return o, fmt.Errorf("server: default authenticator: %w", err)
		}
		o.Auth = a
	}
	l := &o.Limits
	setDefault(&l.MaxBodyBytes, DefaultMaxBodyBytes)
	setDefault(&l.MaxParts, DefaultMaxParts)
	setDefault(&l.MaxPartBytes, DefaultMaxPartBytes)
	setDefault(&l.MaxJSONDepth, DefaultMaxJSONDepth)
	setDefault(&l.ReadHeaderTimeout, 10*time.Second)
	setDefault(&l.ReadTimeout, 30*time.Second)
	setDefault(&l.IdleTimeout, 120*time.Second)
	setDefault(&l.WriteTimeout, 30*time.Second)
	setDefault(&l.MaxHeaderBytes, 64<<10)
	setDefault(&l.MaxConnections, DefaultMaxConnections)
	setDefault(&l.MaxStreams, DefaultMaxStreams)
	setDefault(&l.KeepAlive, 15*time.Second)
	if err := o.Card.check(); err != nil {
		return o, err
	}
	c := &o.Card
	if c.Name == "" {
		c.Name = "A2A Agent"
	}
	if c.Description == "" {
		c.Description = "An AI agent reachable over the A2A protocol: send it a message to ask a question or delegate a task."
	}
	if c.Version == "" {
		c.Version = "1.0.0"
	}
	if len(c.InputModes) == 0 {
		c.InputModes = append([]string(nil), DefaultInputModes...)
	}
	if len(c.OutputModes) == 0 {
		c.OutputModes = append([]string(nil), DefaultOutputModes...)
	}
	setDefault(&c.CacheMaxAge, defaultCardMaxAge)
	return o, nil
}

func setDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// check refuses a card configuration that would publish an invalid card.
func (c *CardConfig) check() error {
	if (c.ProviderOrganization == "") != (c.ProviderURL == "") {
		return errors.New("server: card provider needs both an organization and a URL (set both ProviderOrganization and ProviderURL, or neither)")
	}
	for _, f := range []struct{ name, value string }{
		{"PublicURL", c.PublicURL}, {"ProviderURL", c.ProviderURL},
		{"DocumentationURL", c.DocumentationURL}, {"IconURL", c.IconURL},
	} {
		if f.value == "" {
			continue
		}
		u, err := url.Parse(f.value)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("server: card %s %q must be an absolute http or https URL", f.name, f.value)
		}
	}
	for _, m := range append(append([]string(nil), c.InputModes...), c.OutputModes...) {
		if _, _, err := mime.ParseMediaType(m); err != nil || !strings.Contains(m, "/") {
			return fmt.Errorf("server: card media type %q is not a media type such as text/plain: %v", m, err)
		}
	}
	for i, s := range c.ExtendedSkills {
		if s.ID == "" || s.Name == "" || s.Description == "" || len(s.Tags) == 0 {
			return fmt.Errorf("server: extended skill %d (%q) needs an id, a name, a description and at least one tag", i, s.ID)
		}
	}
	for _, e := range c.Extensions {
		if e.URI == "" {
			return errors.New("server: card extension without a URI")
		}
	}
	return nil
}
