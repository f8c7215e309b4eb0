package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/bridge"
	"github.com/a2a-plugin/a2a-plugin/internal/cascade"
	"github.com/a2a-plugin/a2a-plugin/internal/cluster"
	"github.com/a2a-plugin/a2a-plugin/internal/config"
	"github.com/a2a-plugin/a2a-plugin/internal/inspector"
	"github.com/a2a-plugin/a2a-plugin/internal/metrics"
	"github.com/a2a-plugin/a2a-plugin/internal/push"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/server"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
	"github.com/a2a-plugin/a2a-plugin/internal/tools"
	"github.com/a2a-plugin/a2a-plugin/internal/tracing"
	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// auditKeep is how many rotated audit files are kept.
const auditKeep = 5

// parts are the pieces Configure builds from the settings.
type parts struct {
	cfg   *config.Config
	log   hclog.Logger
	host  plugin.Host
	store store.Store

	audit   *security.AuditLog
	metrics *metrics.Metrics
	push    *push.Dispatcher
	tools   *tools.Toolset
	// cascade cancels what a task delegated when the task ends so.
	cascade *cascade.Tracker
	guard   *security.SSRFGuard
	// tracer exports spans when otel_endpoint is set; nil otherwise.
	tracer *tracing.Tracer
	// inspectors are the operator's web inspectors (inspector setting), one
	// per host agent served; none
	// when it is off.
	inspectors []*inspector.Inspector
	// oauth verifies inbound OAuth access tokens (oauth_issuers); nil
	// when none is configured.
	oauth *security.OAuthVerifier

	srvOpts server.Options

	mu       sync.Mutex
	srv      *server.Server
	url      string
	pushStop context.CancelFunc
	pushDone chan struct{}
}

// newParts builds everything that needs only the settings; the server is
// built in start, once the task manager exists. hostRPCs are the optional
// host RPCs the host said it serves (see hostRPCs); cl is the cluster of
// replicas (nil with one process). Everything it opens goes on undo, which
// takes it down again when Configure fails later, or in Drain.
func newParts(cfg *config.Config, dataDir, version string, host plugin.Host, hostRPCs []string, st store.Store, cl *cluster.Cluster, log hclog.Logger, undo *undoList) (*parts, error) {
	p := &parts{cfg: cfg, log: log, host: host, store: st, metrics: metrics.New()}
	var errs []error
	p.guard = &security.SSRFGuard{AllowLoopback: cfg.AllowLoopbackURLs, AllowPrivate: cfg.AllowPrivateURLs}

	var err error
	p.oauth, err = oauthVerifier(cfg)
	errs = append(errs, err)
	if p.oauth != nil {
		undo.add(func(context.Context) error { p.oauth.Close(); return nil })
	}
	auth, err := security.NewAuthenticator(security.AuthConfig{
		BearerToken: cfg.BearerToken, PeerTokens: cfg.PeerTokens,
		TrustedPeers: cfg.TrustedPeers, LoopbackIsLocal: cfg.LoopbackIsLocal, OAuth: p.oauth,
	})
	errs = append(errs, err)
	policy := security.DefaultPolicy()
	if cfg.Policy != "" {
		policy, err = security.ParsePolicy(cfg.Policy)
		errs = append(errs, err)
	}
	var gate *security.TrustGate
	if len(cfg.TrustedPeers) > 0 {
		gate, err = security.NewTrustGate(append([]string{"local:*"}, cfg.TrustedPeers...))
		errs = append(errs, err)
		if p.oauth != nil && gate != nil {
			// OAuth callers of the trusted tier are not known by name.
			gate = gate.WithMinTier(security.TierTrusted)
		}
	}
	if cfg.AuditLog != "off" {
		path := cfg.AuditLog
		if path == "" && dataDir != "" {
			path = filepath.Join(dataDir, "audit.jsonl")
		}
		if path != "" {
			p.audit, err = security.NewAuditLog(path, cfg.AuditMaxBytes, auditKeep)
			errs = append(errs, err)
			if p.audit != nil {
				undo.add(func(context.Context) error { return p.audit.Close() })
			}
		}
	}
	signer, signerRoutes, err := cardSigning(cfg, log)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("a2a plugin: %w", err)
	}
	if p.oauth != nil {
		p.oauth.Start()
	}
	if cfg.OtelEndpoint != "" {
		p.tracer, err = tracing.New(context.Background(), tracing.Options{Endpoint: cfg.OtelEndpoint, ServiceName: cfg.AgentName, ServiceVersion: version})
		if err != nil {
			return nil, fmt.Errorf("a2a plugin: otel_endpoint (A2A_OTEL_ENDPOINT): %w", err)
		}
		// Taken down after what it traces, so their spans are flushed too.
		undo.add(p.tracer.Shutdown)
		log.Info("exporting OpenTelemetry spans", "endpoint", cfg.OtelEndpoint)
	}

	if cfg.PushEnabled {
		// A2A_PUSH_SECRET, else the key generated into the data
		// directory; never the bearer token, which would hand webhook
		// receivers a credential that also authenticates calls to the
		// agent.
		secret := cfg.PushSecret
		if secret == "" {
			if secret, err = pushSecretFile(dataDir, log); err != nil {
				return nil, fmt.Errorf("a2a plugin: push notifications: %w", err)
			}
		}
		popts := push.Options{
			Store: st, Logger: log.Named("push"), Secret: []byte(secret), Guard: p.guard,
			MaxAttempts: cfg.PushMaxAttempts, Observer: p.metrics, Tracer: p.tracer, Audit: p.audit,
		}
		sharePush(cfg, cl, &popts)
		p.push, err = push.New(popts)
		if err != nil {
			return nil, fmt.Errorf("a2a plugin: push notifications: %w", err)
		}
		undo.add(p.stopPush)
	}

	tcfg := tools.Config{
		AllowUnconfigured: cfg.AllowUnconfiguredURLs, AllowLoopback: cfg.AllowLoopbackURLs, AllowPrivate: cfg.AllowPrivateURLs,
		DefaultTimeout: time.Duration(cfg.CallTimeout), MaxDepth: cfg.MaxDelegationDepth, UserAgent: "a2a-plugin",
		TrustedKeys: cfg.CardTrustedKeys, AttachmentRoots: cfg.AttachmentRoots,
		MaxCallsPerTask: noLimit(cfg.MaxCallsPerTask), MaxCallsPerMinute: noLimit(cfg.MaxCallsPerMinute),
		Agents: cfg.Agents, // as config.Validate passed them
	}
	p.cascade, err = cascade.New(cascade.Options{Store: st, OnFailure: cfg.CancelOnFailure, MaxAttempts: cfg.CancelMaxAttempts, Logger: log.Named("cascade")})
	if err != nil {
		return nil, fmt.Errorf("a2a plugin: %w", err)
	}
	p.tools, err = tools.New(tcfg, tools.Deps{Store: st, Host: host, Logger: log.Named("tools"), Metrics: p.metrics, Audit: p.audit, HostRPCs: hostRPCs,
		Delegations: p.cascade, Span: p.toolSpan})
	if err != nil {
		return nil, fmt.Errorf("a2a plugin: a2a_agents: %w", err)
	}
	undo.add(func(context.Context) error { p.tools.Close(); return nil })

	var extended []a2a.AgentSkill
	for _, s := range cfg.ExtendedSkills {
		extended = append(extended, a2a.AgentSkill{ID: s.ID, Name: s.Name, Description: s.Description, Tags: orTags(s.Tags), Examples: s.Examples})
	}
	p.srvOpts = server.Options{
		Skills: hostSkills(host, cfg.AdvertisedToolsets),
		Card: server.CardConfig{
			Name: cfg.AgentName, Description: cfg.AgentDescription, Version: cfg.AgentVersion,
			ProviderOrganization: cfg.ProviderOrganization, ProviderURL: cfg.ProviderURL,
			DocumentationURL: cfg.DocumentationURL, IconURL: cfg.IconURL, PublicURL: cfg.PublicURL,
			ExtendedSkills: extended, Signer: signer,
		},
		Auth: auth, Policy: policy, Gate: gate,
		RateLimit:          security.NewRateLimiter(cfg.RateLimit, nil),
		RateLimitLocal:     cfg.RateLimitLocal,
		Streams:            security.NewStreamLimiter(cfg.MaxStreamsPerPeer),
		Turns:              security.NewTurnGuard(cfg.MaxPingPongTurns),
		MaxDelegationDepth: cfg.MaxDelegationDepth,
		Limits: server.Limits{MaxBodyBytes: cfg.MaxBodyBytes, MaxParts: cfg.MaxParts, MaxPartBytes: cfg.MaxPartBytes,
			ReadTimeout: time.Duration(cfg.BodyTimeout), MaxConnections: cfg.MaxConnections, MaxStreams: cfg.MaxStreams},
		Push:     server.PushOptions{Enabled: cfg.PushEnabled, CheckURL: p.guard.PrecheckURL},
		Audit:    p.audit,
		Observer: p.metrics.Exchange,
		Logger:   log,
		Tracer:   p.tracer,

		DisableGRPC: !cfg.GRPC,
	}
	p.srvOpts.Extra = append(p.srvOpts.Extra, signerRoutes...)
	if cfg.Pprof {
		// Profiles show the process's inner workings: Local callers only.
		p.srvOpts.Extra = append(p.srvOpts.Extra, server.ExtraRoute{Pattern: "/debug/pprof/", Handler: pprofHandler(), LongWrites: true})
	}
	if cfg.Metrics {
		// The local operator and trusted peers may scrape; a peer sees the
		// callers of its own agent only (several agents share the metrics).
		all := p.metrics.Handler()
		p.srvOpts.Extra = append(p.srvOpts.Extra, server.ExtraRoute{Pattern: "GET /metrics",
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				rc, ok := server.RouteCallerOf(r.Context())
				if ok && rc.Identity.Tier == security.TierLocal {
					all.ServeHTTP(w, r)
					return
				}
				p.metrics.ScopedHandler(rc.Agent).ServeHTTP(w, r)
			}),
			Allow: func(id security.Identity) bool { return id.Tier >= security.TierTrusted }})
	}
	return p, nil
}

// hostRPCs lists the optional host RPCs (RecordDelegation, Complete) the
// host said it serves in Configure; nil when it sent no host information,
// in which case the tools try them until the host answers Unimplemented.
func hostRPCs(req *pb.ConfigureRequest) []string {
	if req.GetHost() == nil {
		return nil
	}
	return append([]string{}, req.GetHost().GetOptionalRpcs()...)
}

// PushSecretFile is where a generated webhook signing key is kept when none
// is configured (A2A_PUSH_SECRET or the bearer token).
const PushSecretFile = "push-secret"

// pushSecretFile returns the webhook signing key kept in the data
// directory, creating a random one (mode 0600) the first time, so
// notifications are always signed and receivers can be given the key.
// Without a data directory the key lives as long as the process.
func pushSecretFile(dataDir string, log hclog.Logger) (string, error) {
	gen := func() string {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		return hex.EncodeToString(b)
	}
	if dataDir == "" {
		return gen(), nil
	}
	path := filepath.Join(dataDir, PushSecretFile)
	if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) >= 32 {
		return strings.TrimSpace(string(b)), nil
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("reading the webhook signing key %s: %w", path, err)
	}
	secret := gen()
	if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("writing the webhook signing key %s: %w", path, err)
	}
	log.Info("generated a webhook signing key; give it to webhook receivers to verify X-A2A-Signature (or set A2A_PUSH_SECRET)", "path", path)
	return secret, nil
}

// noLimit maps a setting's 0 ("no limit") to the tools' negative value
// (their 0 means the default).
func noLimit(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

func orTags(t []string) []string {
	if len(t) == 0 {
		return []string{"extended"}
	}
	return t
}

// notifier is what the task manager wakes when it queued webhook deliveries.
func (p *parts) notifier() tasks.Notifier {
	if p.push == nil {
		return nil
	}
	return p.push
}

// observer and bridgeObserver feed the shared metrics.
func (p *parts) observer() tasks.Observer        { return p.metrics }
func (p *parts) bridgeObserver() bridge.Observer { return p.metrics }

// start builds the server around the agents' task managers (the default
// agent's first) and starts push delivery (stopped by the closer newParts
// put on undo).
func (p *parts) start(agents []*agentRun, host plugin.Host, undo *undoList) error {
	opts, err := p.agentServerOptions(p.srvOpts, agents[0], host)
	if err != nil {
		return fmt.Errorf("a2a plugin: %w", err)
	}
	opts.AgentID = agents[0].id
	for _, ar := range agents[1:] {
		ao, err := p.agentServerOptions(p.srvOpts, ar, host)
		if err != nil {
			return fmt.Errorf("a2a plugin: %w", err)
		}
		ao.Extra = nil // the operator routes are the server's, at its root
		opts.Agents = append(opts.Agents, server.AgentOptions{ID: ar.id, Options: ao})
	}
	if err := p.startInspectors(agents, &opts, undo); err != nil {
		return fmt.Errorf("a2a plugin: %w", err)
	}
	srv, err := server.New(opts)
	if err != nil {
		return fmt.Errorf("a2a plugin: %w", err)
	}
	p.srv = srv
	p.metrics.SetStreams(srv.ActiveStreams)
	if p.push != nil {
		ctx, stop := context.WithCancel(context.Background())
		p.pushStop, p.pushDone = stop, make(chan struct{})
		go func() {
			defer close(p.pushDone)
			if err := p.push.Run(ctx); err != nil && !errors.Is(err, push.ErrClosed) {
				p.log.Error("push delivery stopped", "error", err)
			}
		}()
	}
	return nil
}

// startServing starts the HTTP server (Connect) and returns its URL.
func (p *parts) startServing(ctx context.Context) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.url != "" {
		return p.url, nil
	}
	url, err := p.srv.Start(ctx, p.cfg.Addr(), p.cfg.TLSCert, p.cfg.TLSKey)
	if err != nil {
		return "", err
	}
	p.url = url
	return url, nil
}

// stopServing stops the HTTP server (Disconnect, Drain).
func (p *parts) stopServing(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.url == "" {
		return nil
	}
	p.url = ""
	for _, in := range p.inspectors {
		in.EndStreams() // its live feeds would hold the shutdown
	}
	return p.srv.Shutdown(ctx)
}

// stopPush stops push delivery: the dispatcher, and its loop once start
// started it.
func (p *parts) stopPush(context.Context) error {
	err := p.push.Close()
	if p.pushDone != nil {
		p.pushStop()
		<-p.pushDone
	}
	return err
}

// hostSkills is the card's source of skills from the host's live tools
// (Host.ListTools, as bridge.SkillsOf makes them): only of the toolsets
// the operator opted in with advertised_toolsets, and nil without them or
// without a host, so that the card lists the agent's own skills (those
// its host declares, see agentServerOptions) or the server's one chat
// skill. A card is public: a host's tool registry says what the operator
// runs, not what a peer can get. The host lists only tools peers can reach.
func hostSkills(host plugin.Host, toolsets []string) func(context.Context) ([]a2a.AgentSkill, error) {
	if host == nil || len(toolsets) == 0 {
		return nil
	}
	return func(ctx context.Context) ([]a2a.AgentSkill, error) {
		defs, err := host.ListTools(ctx)
		if err != nil {
			return nil, err
		}
		return bridge.SkillsOf(defs, toolsets), nil
	}
}

func (p *parts) listTools(ctx context.Context) ([]*pb.ToolDefinition, error) {
	return p.tools.ListTools(ctx)
}

func (p *parts) callTool(ctx context.Context, org tools.Origin, req *pb.CallToolRequest, progress plugin.ProgressFunc) (*pb.ToolResult, error) {
	return p.tools.CallFrom(ctx, org, req, progress)
}

// toolSpan is the first recorder of every tool call's chain
// (tools.Deps.Span). It sets the trace that the outbound calls of the
// call continue in org — the one place a tool call's trace is decided:
// the host's own (req.trace), else the trace the host got with the
// inbound turn it is answering (org.Trace on entry, from the bridge),
// else a new trace, so a chain of agents is one trace from its first hop
// on. With export on, the tool call is a span, child of that trace, which
// the calls carry; the returned recorder ends it with the call's result.
// The span travels in that recorder, not in the call's context.
func (p *parts) toolSpan(ctx context.Context, org *tools.Origin, req *pb.CallToolRequest) tools.SpanEnd {
	tc := bridge.TraceFromProto(req.GetTrace())
	if !tc.Valid() {
		tc = org.Trace
	}
	if p.tracer.Enabled() {
		_, span := p.tracer.Start(ctx, "a2a.tool "+req.GetName(), tracing.KindClient, tc)
		span.SetString("a2a.tool", req.GetName())
		span.SetString("a2a.host.platform", req.GetPlatform())
		span.SetString("a2a.host.chat_id", req.GetChatId())
		org.Trace, org.TraceIsSpan = span.Context(), true
		return func(res *pb.ToolResult, err error) {
			if res.GetIsError() {
				span.Fail("the tool answered with an error")
			}
			span.End(err)
		}
	}
	if !tc.Valid() {
		tc = tracing.Context{Traceparent: tracing.NewRoot()}
	}
	org.Trace, org.TraceIsSpan = tc, false
	return nil
}

// pprofHandler serves net/http/pprof's index, profiles and traces under
// /debug/pprof/, without touching http.DefaultServeMux.
func pprofHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}
