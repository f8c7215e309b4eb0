// Package tools is the outbound half of the A2A plugin as the host's model
// sees it: the a2a_* tools (a2a_discover, a2a_call, a2a_task, a2a_list,
// a2a_history, a2a_orchestrate, a2a_route) behind the plugin.Toolset
// interface.
//
// New validates the configuration (peer names, URLs, credentials, trust
// tiers) and builds one shared client.Client whose transport dials through
// the SSRF guard. Every tool answers with concise text written for a model
// to act on (ids to continue with, the next tool to call) and, where
// useful, a compact JSON line. Bad arguments produce an is_error result
// naming the argument and how to fix it; a Go error is returned only for an
// unknown tool name.
package tools

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/a2a-plugin/a2a-plugin/internal/client"
	"github.com/a2a-plugin/a2a-plugin/internal/config"
	"github.com/a2a-plugin/a2a-plugin/internal/metrics"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// Defaults applied by New to zero Config fields.
const (
	DefaultTimeout = 60 * time.Second
	DefaultMaxWait = 10 * time.Minute
	DefaultDepth   = 3
	// MaxFileBytes bounds one local file attached with a2a_call.
	MaxFileBytes = 10 << 20
)

// Config configures the tools.
type Config struct {
	// Agents are the configured peers (a2a_agents), as config.Validate
	// passed them: the one rule set for peers is there, and New does not
	// check them again.
	Agents []config.Peer
	// AllowUnconfigured lets the model call and discover agents by URL,
	// not only configured peers.
	AllowUnconfigured bool
	// AllowLoopback and AllowPrivate relax the SSRF guard for URLs that
	// are not configured peers. A configured peer is always reachable on
	// its own origin (scheme, host and port: the operator named it), but
	// only for requests made on its behalf; its card's interface URL on
	// another origin, and redirects elsewhere, pass the guard.
	AllowLoopback bool
	AllowPrivate  bool
	// DefaultTimeout is the per-request timeout and the default wait when
	// a peer has none (default 60s).
	DefaultTimeout time.Duration
	// MaxWait caps timeout_s of every tool (default 10m).
	MaxWait time.Duration
	// MaxDepth is the delegation depth limit (default 3): a call whose
	// chain would exceed it is refused.
	MaxDepth int
	// UserAgent is sent on outbound requests.
	UserAgent string
	// TrustedKeys are public key files trusted for the cards of every
	// signed peer, beside each peer's own CardKeys.
	TrustedKeys []string
	// AttachmentRoots are the directories (absolute paths) a2a_call may
	// attach local files from (files[].path); none: path is refused.
	AttachmentRoots []string
	// MaxCallsPerTask bounds the outbound calls made while the host
	// answers one inbound task, and MaxCallsPerMinute those made per
	// minute while it answers the tasks of one caller (see
	// security.DelegationGuard; the inbound task comes with Origin.Task).
	// 0: security's defaults; negative: no bound.
	MaxCallsPerTask, MaxCallsPerMinute int
}

// Deps are the tools' collaborators.
type Deps struct {
	// Store persists conversations for a2a_history; nil disables history.
	Store store.Conversations
	// Host is the host callback service; nil when the host serves none.
	// Its optional Complete is used by a2a_route for semantic matching.
	Host plugin.Host
	// Logger receives logs; nil discards them.
	Logger hclog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Metrics is the plugin's shared metrics (outbound calls are recorded
	// there, and a2a_list reports them); nil gives the tools their own.
	Metrics *metrics.Metrics
	// Audit receives one outbound record per request made to a peer; nil
	// audits nothing.
	Audit *security.AuditLog
	// Delegations keeps every remote task a call starts or continues on
	// behalf of an inbound task (Origin.Task), so that the end of that task
	// can cancel it (internal/cascade); nil keeps none.
	Delegations DelegationRecorder
	// HostRPCs are the optional host RPCs the host said it serves
	// (ConfigureRequest.host.optional_rpcs, e.g. "RecordDelegation"). nil
	// means the host did not say: an optional RPC is tried until the host
	// answers Unimplemented.
	HostRPCs []string
	// Span, when set, starts the span of every tool call CallFrom runs
	// (App: its OpenTelemetry span, which also decides the trace the call
	// continues); what it returns is the first recorder of the call's
	// chain (recorder.go). nil: no span, and the trace is the origin's.
	Span StartSpan

	// clientOptions replaces the options of the outbound A2A client, its
	// HTTP transport among them (tests only).
	clientOptions *client.Options
	// tokenClient carries OAuth token requests (tests only; nil: a
	// default client).
	tokenClient *http.Client
}

// DelegationRecorder keeps the edges of delegation trees
// (cascade.Tracker).
type DelegationRecorder interface {
	// Record keeps d, a remote task started or continued while the host
	// answered the inbound task d.ParentTaskID.
	Record(ctx context.Context, d store.Delegation) error
}

// Toolset implements plugin.Toolset with the a2a_* tools.
//
// Its methods (28 at this writing) are the seven tools (discover, call,
// task, list, history, orchestrate, route), the steps they share (prepare
// a message, send it, resume after AUTH_REQUIRED, render), the entry points
// (CallTool, CallFrom, ListTools, CancelDelegation, Peers). The rest is
// other types': the configured peers and the resolving of an agent
// argument (peerSet), the outbound engine (outbound: credentials, card,
// delivery, following), each call's side effects (callRecord, a chain of
// recorders: audit, metrics, cascade, conversations, the host's memory),
// the attachment roots (attachments) and what a2a_task resumes
// (delegationMemory).
type Toolset struct {
	cfg     Config
	deps    Deps
	log     hclog.Logger
	peers   *peerSet
	metrics *metrics.Metrics

	// memory is what a2a_task needs of the delegations earlier calls
	// started.
	memory *delegationMemory
	// out is the outbound engine the tools are front-ends of.
	out *outbound
	// sinks are the recorders every call's chain shares (recording).
	sinks sinks
	// files are the attachment roots, opened (attach.go).
	files *attachments
	// delegations bounds the calls made on behalf of inbound tasks.
	delegations *security.DelegationGuard
}

// peerConf is a configured peer (its Trust in lower case) with what the
// tools built for it.
type peerConf struct {
	config.Peer
	ep   client.Endpoint
	peer *client.Peer
	// tokens supplies the token of a peer with TokenFile, TokenCommand
	// or OAuth2; nil otherwise.
	tokens credentialSource
}

// credentialSource supplies a peer's bearer token that can be renewed:
// read again from a file or a command (tokenSource), or fetched again
// with OAuth 2.0 client credentials (oauthSource).
type credentialSource interface {
	// current is the token for a request (the client's Auth.TokenFunc).
	current() string
	// ensure makes sure a usable token is held before a call, so that a
	// failure to get one is reported as such.
	ensure(ctx context.Context) error
	// refresh gets a new token now; changed reports whether it differs.
	refresh(ctx context.Context) (changed bool, err error)
	// what names the source for messages.
	what() string
}

// Validate checks the tools' own options; the peers were checked by
// config.Validate.
func (cfg *Config) Validate() error {
	var errs []error
	if cfg.DefaultTimeout < 0 || cfg.MaxWait < 0 {
		errs = append(errs, errors.New("a2a tools: default timeout and max wait must not be negative"))
	}
	if cfg.MaxDepth < 0 {
		errs = append(errs, errors.New("a2a tools: max delegation depth must not be negative"))
	}
	return errors.Join(errs...)
}

// New validates cfg and returns the toolset. It is all the plugin binary
// needs: the returned Toolset owns its HTTP client and metrics.
func New(cfg Config, deps Deps) (*Toolset, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("invalid a2a tools configuration: %w", err)
	}
	if cfg.DefaultTimeout == 0 {
		cfg.DefaultTimeout = DefaultTimeout
	}
	if cfg.MaxWait == 0 {
		cfg.MaxWait = DefaultMaxWait
	}
	if cfg.MaxDepth == 0 {
		cfg.MaxDepth = DefaultDepth
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "a2a-plugin"
	}
	if deps.Metrics == nil {
		deps.Metrics = metrics.New()
	}
	t := &Toolset{
		cfg:     cfg,
		deps:    deps,
		log:     deps.Logger,
		peers:   &peerSet{cfg: cfg, byName: map[string]*peerConf{}},
		metrics: deps.Metrics,
		memory:  &delegationMemory{tasks: map[string]*delegationInfo{}},
	}
	if t.log == nil {
		t.log = hclog.NewNullLogger()
	}
	t.out = &outbound{log: t.log, clock: deps.Now, ackGrace: ackGrace, maxCallBytes: maxCallBytes}
	t.sinks.metrics = &metricsRecorder{m: t.metrics}
	if deps.Audit != nil {
		t.sinks.audit = &auditRecorder{log: t.log, auditLog: deps.Audit, now: t.now}
	}
	if deps.Delegations != nil {
		t.sinks.cascade = &cascadeRecorder{log: t.log, cascade: deps.Delegations}
	}
	if deps.Store != nil {
		t.sinks.convs = &conversationLog{log: t.log, store: deps.Store, now: t.now, recorded: newSeenSet(maxRemembered)}
	}
	if deps.Host != nil {
		t.sinks.host = &hostMemory{log: t.log, host: deps.Host, hostRPCs: deps.HostRPCs, recorded: newSeenSet(maxRemembered)}
	}
	perTask, perMinute := cfg.MaxCallsPerTask, cfg.MaxCallsPerMinute
	if perTask == 0 {
		perTask = security.DefaultMaxCallsPerTask
	}
	if perMinute == 0 {
		perMinute = security.DefaultMaxCallsPerMinute
	}
	t.delegations = security.NewDelegationGuard(perTask, perMinute, deps.Now)
	opts := client.Options{}
	if deps.clientOptions != nil {
		opts = *deps.clientOptions
	}
	if opts.Guard == nil {
		opts.Guard = newGuard(cfg)
	}
	opts.UserAgent = cfg.UserAgent
	if opts.Timeout == 0 {
		opts.Timeout = cfg.DefaultTimeout
	}
	if opts.Logger == nil {
		opts.Logger = t.log.Named("client")
	}
	if opts.Now == nil {
		opts.Now = deps.Now
	}
	keys, err := peerCardKeys(cfg)
	if err != nil {
		return nil, fmt.Errorf("invalid a2a tools configuration: %w", err)
	}
	t.files = &attachments{}
	if t.files.roots, err = openRoots(cfg.AttachmentRoots); err != nil {
		return nil, fmt.Errorf("invalid a2a tools configuration: %w", err)
	}
	t.peers.client = client.New(opts)
	for i, p := range cfg.Agents {
		ep := client.Endpoint{Name: p.Name, URL: strings.TrimSpace(p.URL), Timeout: time.Duration(p.Timeout), CardKeys: keys[i], Configured: true}
		p.Signed = keys[i] != nil
		ep.Auth.Token = p.Token
		var tokens credentialSource
		if ts := newTokenSource(p, t.log.Named("token"), t.now); ts != nil {
			tokens = ts
		} else if oa := newOAuthSource(p, deps.tokenClient, t.log.Named("oauth"), deps.Now); oa != nil {
			tokens = oa
		}
		if tokens != nil {
			ep.Auth.TokenFunc = tokens.current
		}
		ep.Auth.HeaderName, ep.Auth.HeaderValue = p.HeaderField()
		p.Trust = p.TrustTier()
		pc := &peerConf{Peer: p, ep: ep, peer: t.peers.client.Peer(ep), tokens: tokens}
		t.peers.all = append(t.peers.all, pc)
		t.peers.byName[strings.ToLower(p.Name)] = pc
	}
	return t, nil
}

// Metrics returns the metrics the tools record into.
func (t *Toolset) Metrics() *metrics.Metrics { return t.metrics }

// Close releases the HTTP client's idle connections and the attachment
// roots.
func (t *Toolset) Close() {
	t.peers.client.Close()
	closeRoots(t.files.roots)
}

// now is the toolset's clock (Deps.Now): every reading of the time in the
// tools goes through it — deadlines, durations, the delegation bounds, the
// token sources' retry back-off. Waiting itself (timers, polling delays)
// takes real time.
func (t *Toolset) now() time.Time {
	if t.deps.Now != nil {
		return t.deps.Now()
	}
	return time.Now()
}

var _ plugin.Toolset = (*Toolset)(nil)

// ListTools lists the a2a_* tools with their JSON Schemas.
func (t *Toolset) ListTools(ctx context.Context) ([]*pb.ToolDefinition, error) {
	return toolDefinitions(t.cfg), nil
}

// handler runs one tool with its raw arguments.
type handler func(t *Toolset, ctx context.Context, call *callInfo) *result

// callInfo is what a tool handler gets: the call as CallTool read it from
// the contract's request, which handlers never see.
type callInfo struct {
	args     []byte
	progress func(message string) error
	// rec is the call's chain of recorders, built once (CallFrom), with
	// the call's origin (rec.org: where the call comes from, as the span,
	// if any, left it); the peer handles of the call point to it.
	rec callRecord
}

// result is what a tool answers, in the contract's ToolResult at the
// entry point (CallTool).
type result struct {
	Content string
	// IsError marks a failure the model should see.
	IsError bool
}

// report sends a progress message; it reports false when the caller went
// away.
func (ci *callInfo) report(msg string) bool {
	if ci.progress == nil {
		return true
	}
	return ci.progress(msg) == nil
}

var handlers = map[string]handler{
	ToolDiscover:    (*Toolset).discover,
	ToolCall:        (*Toolset).call,
	ToolTask:        (*Toolset).task,
	ToolList:        (*Toolset).list,
	ToolHistory:     (*Toolset).history,
	ToolOrchestrate: (*Toolset).orchestrate,
	ToolRoute:       (*Toolset).route,
}

// CallTool runs one tool. Failures the model should see (bad arguments,
// unreachable peers, refusals) are results with IsError; the only Go error
// is an unknown tool name. It is CallFrom with an origin that knows only
// the host conversation of req: the host's own user asked, for no agent,
// on a new delegation chain and a new trace.
func (t *Toolset) CallTool(ctx context.Context, req *pb.CallToolRequest, progress plugin.ProgressFunc) (*pb.ToolResult, error) {
	return t.CallFrom(ctx, Origin{}, req, progress)
}

// CallFrom runs one tool for the call org describes (its Platform and
// ChatID default to req's). The outbound calls continue org's trace and
// delegation chain; the caller decides them once — App from the host's
// req.trace, else the inbound turn's — and req.trace is not read here
// again.
func (t *Toolset) CallFrom(ctx context.Context, org Origin, req *pb.CallToolRequest, progress plugin.ProgressFunc) (*pb.ToolResult, error) {
	ci := &callInfo{}
	ci.rec.org = org // decided here, then only read
	var span recorder
	if t.deps.Span != nil {
		if end := t.deps.Span(ctx, &ci.rec.org, req); end != nil {
			span = end
		}
	}
	if o := &ci.rec.org; o.Platform == "" && o.ChatID == "" {
		o.Platform, o.ChatID = req.GetPlatform(), req.GetChatId()
	}
	t.sinks.recording(&ci.rec, ci.rec.org, span)
	h, ok := handlers[req.GetName()]
	if !ok {
		err := plugin.Mark(plugin.ErrUnknownTool, fmt.Errorf("unknown tool %q: this toolset provides %s", req.GetName(), strings.Join(toolNames(), ", ")))
		ci.rec.finished(nil, err)
		return nil, err
	}
	ci.args = []byte(strings.TrimSpace(req.GetArgumentsJson()))
	if len(ci.args) == 0 {
		ci.args = []byte("{}")
	}
	if progress != nil {
		ci.progress = func(msg string) error { return progress(&pb.ToolProgress{Message: msg, Fraction: -1}) }
	}
	res := h(t, ctx, ci)
	out := &pb.ToolResult{Content: res.Content, IsError: res.IsError}
	ci.rec.finished(out, nil)
	return out, nil
}

// errorResult is an is_error result.
func errorResult(format string, a ...any) *result {
	return &result{Content: fmt.Sprintf(format, a...), IsError: true}
}

// textResult is a successful result.
func textResult(s string) *result {
	return &result{Content: s}
}

// clampWait turns timeout_s into a wait duration, bounded by MaxWait.
func (t *Toolset) clampWait(timeoutS *float64, def time.Duration) (time.Duration, error) {
	if timeoutS == nil {
		if def > t.cfg.MaxWait {
			def = t.cfg.MaxWait
		}
		return def, nil
	}
	if *timeoutS <= 0 {
		return 0, fmt.Errorf("argument \"timeout_s\" must be a positive number of seconds (at most %d)", int(t.cfg.MaxWait.Seconds()))
	}
	d := time.Duration(*timeoutS * float64(time.Second))
	if d > t.cfg.MaxWait {
		d = t.cfg.MaxWait
	}
	return d, nil
}

// defaultWait is how long a2a_call waits for a peer by default.
func (t *Toolset) defaultWait(r *resolved) time.Duration {
	if r.conf != nil && r.conf.Timeout > 0 {
		return time.Duration(r.conf.Timeout)
	}
	return t.cfg.DefaultTimeout
}
