package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

// Server serves the agent card and the three A2A bindings — JSON-RPC,
// HTTP+JSON and gRPC — over one transport-neutral handler (pipeline over
// service). Create it with New; serve it with Start, or mount Handler (the
// HTTP bindings and the card) in your own http.Server.
type Server struct {
	opts Options
	log  hclog.Logger

	// pipe and card are the default agent's; router sends each exchange
	// to its agent's (the default agent's alone without AgentOptions).
	pipe   *pipeline
	card   *cardHandler
	router *router
	rpc    *jsonrpcBinding
	rest   *restBinding
	// grpc is the gRPC server of the binding (grpcb); nil with
	// DisableGRPC.
	grpc  *grpc.Server
	grpcb *grpcBinding

	handler http.Handler
	conns   *connLimiter

	mu      sync.Mutex
	httpSrv *http.Server
	mux     *connMux
}

// New checks opts, fills in defaults and returns a server.
func New(opts Options) (*Server, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Server{opts: o, log: o.Logger.Named("server")}
	def := &site{id: o.AgentID, opts: o}
	if err := s.buildSite(def, nil); err != nil {
		return nil, err
	}
	s.pipe, s.card = def.pipe, def.card
	s.router = &router{def: def, sites: map[string]*site{}}
	if len(o.Agents) > 0 {
		if !ValidAgentID(o.AgentID) {
			return nil, fmt.Errorf("server: the default agent's id %q is not an agent id (lower-case letters, digits, '-' and '_', at most 64)", o.AgentID)
		}
		s.router.sites[o.AgentID], s.router.ids = def, []string{o.AgentID}
	}
	for _, ag := range o.Agents {
		if !ValidAgentID(ag.ID) {
			return nil, fmt.Errorf("server: agent id %q is not an agent id (lower-case letters, digits, '-' and '_', at most 64)", ag.ID)
		}
		if s.router.sites[ag.ID] != nil {
			return nil, fmt.Errorf("server: agent %q is configured twice", ag.ID)
		}
		ao := ag.Options
		ao.Limits, ao.Streams, ao.Audit, ao.Observer = o.Limits, o.Streams, o.Audit, o.Observer
		ao.Tracer, ao.DisableGRPC, ao.Logger, ao.Now = o.Tracer, o.DisableGRPC, o.Logger.With("agent", ag.ID), o.Now
		ao.AgentID, ao.Agents = ag.ID, nil
		if ao, err = ao.withDefaults(); err != nil {
			return nil, fmt.Errorf("server: agent %q: %w", ag.ID, err)
		}
		st := &site{id: ag.ID, prefix: "/agents/" + ag.ID, opts: ao}
		if err := s.buildSite(st, def.pipe.lifecycle); err != nil {
			return nil, fmt.Errorf("server: agent %q: %w", ag.ID, err)
		}
		if len(ao.Extra) > 0 {
			st.extra = http.NewServeMux()
			for _, e := range ao.Extra {
				st.extra.Handle(e.Pattern, s.protectAt(st, e))
			}
		}
		s.router.sites[ag.ID] = st
		s.router.ids = append(s.router.ids, ag.ID)
	}
	s.conns = newConnLimiter(o.Limits.MaxConnections, s.log)
	hb := httpBinding{h: s.router, limits: &s.opts.Limits, log: s.log}
	s.rpc, s.rest = &jsonrpcBinding{hb}, &restBinding{hb}
	if !o.DisableGRPC {
		s.grpcb = &grpcBinding{h: s.router, limits: &s.opts.Limits, log: s.log}
		s.grpc = s.grpcb.newServer()
	}
	s.handler = s.grpcOverTLS(s.guardBody(s.traceRequests(s.routes())))
	return s, nil
}

// buildSite builds an agent's service, pipeline (on the server's
// lifecycle lc; nil for the first) and card, and checks that its card is
// valid: at start-up, not at the first card request. (Skills built from
// the host's tools are valid by construction; the host is not asked here.)
func (s *Server) buildSite(st *site, lc *lifecycle) error {
	log := s.log
	if st.prefix != "" {
		log = log.With("agent", st.id)
	}
	svc := &service{opts: &st.opts, log: log}
	var err error
	if svc.inputModes, err = newMediaMatcher(st.opts.Card.InputModes); err != nil {
		return err
	}
	st.pipe = newPipeline(&st.opts, log, svc, lc)
	st.card = &cardHandler{opts: &st.opts, log: log, now: st.opts.Now, pipe: st.pipe, prefix: st.prefix, tenant: st.id}
	if st.prefix == "" {
		st.card.tenant = ""
	}
	svc.card = st.card
	probe := st.card.buildCard(st.card.prefixed("http://127.0.0.1/"), []a2a.AgentSkill{st.card.chatSkill()}, false)
	if err := probe.Validate(); err != nil {
		return fmt.Errorf("server: the configured agent card is invalid: %w", err)
	}
	return nil
}

// routes builds the handler tree.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /.well-known/agent-card.json", s.card)
	mux.Handle("GET /.well-known/agent.json", s.card)
	mux.HandleFunc("GET /healthz", s.serveHealth)
	mux.Handle("POST /{$}", s.rpc)
	mux.Handle("POST /a2a", s.rpc)
	mux.Handle("POST /rpc", s.rpc)
	// The HTTP+JSON binding: its routes are path-distinct from the
	// JSON-RPC endpoint, so it shares the base URL (see rest.go).
	mux.Handle("/", s.rest)
	// Every agent of a host with several: its card, JSON-RPC endpoint and
	// HTTP+JSON routes under /agents/{id}. With one agent /agents/ is the
	// HTTP+JSON tenant prefix "agents", ignored like any other, as before
	// contract 1.4.
	if s.router.multi() {
		mux.HandleFunc("/agents/{agent}", s.serveAgentPath)
		mux.HandleFunc("/agents/{agent}/", s.serveAgentPath)
	}
	for _, e := range s.opts.Extra {
		mux.Handle(e.Pattern, s.protect(e))
	}
	return s.recoverer(mux)
}

// grpcOverTLS passes the gRPC requests of an HTTP/2 connection (TLS with
// ALPN h2; see listen.go) to the gRPC server.
func (s *Server) grpcOverTLS(next http.Handler) http.Handler {
	if s.grpc == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
			s.grpc.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// protect serves an extra route only to callers it admits: Local callers,
// and others that e.Allow accepts. It answers 401 for a bad token and 403
// for everyone else. Like the A2A endpoints it refuses browser requests
// from other origins (403) and loopback callers that address the agent by
// a DNS name that is not its own (421): both are how a web page in the
// operator's browser would reach the Local tier.
func (s *Server) protect(e ExtraRoute) http.Handler { return s.protectAt(s.router.def, e) }

// protectAt is protect for an extra route of the agent st, whose tokens
// authenticate its callers.
func (s *Server) protectAt(st *site, e ExtraRoute) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if crossSite(Peer{Host: r.Host, Origin: r.Header.Get("Origin"), FetchSite: r.Header.Get("Sec-Fetch-Site")}) {
			http.Error(w, "forbidden: "+errCrossSite(r.Header.Get("Origin")).Message, http.StatusForbidden)
			return
		}
		ident, err := st.opts.Auth.Authenticate(r)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="a2a", error="invalid_token"`)
			http.Error(w, "unauthorized: the bearer token is not valid for this agent", http.StatusUnauthorized)
			return
		}
		if ident.Tier == security.TierLocal && !ident.Authenticated && !security.SafeLocalHost(r.Host, st.pipe.localHosts) {
			http.Error(w, "misdirected request: "+errMisdirected(r.Host).Message, http.StatusMisdirectedRequest)
			return
		}
		if ident.Tier != security.TierLocal && (e.Allow == nil || !e.Allow(ident)) {
			http.Error(w, "forbidden: this route is for the local operator (or callers the configuration allows)", http.StatusForbidden)
			return
		}
		if tw, ok := w.(*trackingWriter); ok && e.LongWrites {
			tw.timeout = 0
		}
		e.Handler.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), routeCallerKey{}, RouteCaller{Identity: ident, Agent: st.id})))
	})
}

// routeCallerKey carries an extra route's RouteCaller.
type routeCallerKey struct{}

// RouteCaller is who an extra route (ExtraRoute) serves: the caller
// protect admitted, and the agent whose tokens authenticated it (its id;
// the default agent's for a route at the root).
type RouteCaller struct {
	Identity security.Identity
	Agent    string
}

// RouteCallerOf is the RouteCaller of a request an extra route serves;
// ok is false outside one.
func RouteCallerOf(ctx context.Context) (rc RouteCaller, ok bool) {
	rc, ok = ctx.Value(routeCallerKey{}).(RouteCaller)
	return rc, ok
}

// ActiveStreams is the number of open streams, all bindings together.
func (s *Server) ActiveStreams() int64 { return s.pipe.streams.open() }

// Handler returns the server's HTTP handler: the agent card at
// /.well-known/agent-card.json (and the legacy /.well-known/agent.json),
// the JSON-RPC endpoint at POST / (aliases /a2a and /rpc), the HTTP+JSON
// routes (POST /message:send, GET /tasks/{id}, …), GET /healthz, and —
// on HTTP/2 — gRPC requests. A plaintext gRPC client needs Start, which
// routes h2c connections to the gRPC server.
func (s *Server) Handler() http.Handler { return s.handler }

func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if s.pipe.closing.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("shutting down"))
		return
	}
	_, _ = w.Write([]byte("ok"))
}

// Start listens on addr ("host:port") and serves in the background; with
// tlsCert and tlsKey (PEM file paths) it serves HTTPS. The gRPC binding
// shares the port (see listen.go). It returns the base URL clients can use
// (an unspecified host such as 0.0.0.0 is reported as 127.0.0.1). ctx
// bounds only the listen step; stop the server with Shutdown.
func (s *Server) Start(ctx context.Context, addr, tlsCert, tlsKey string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.httpSrv != nil {
		return "", errors.New("server: already started")
	}
	if (tlsCert == "") != (tlsKey == "") {
		return "", errors.New("server: TLS needs both a certificate and a key file (set both or neither)")
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return "", fmt.Errorf("server: cannot listen on %s: the address is already in use (another process, or another copy of this plugin, holds the port); choose a free port with A2A_PORT: %w", addr, err)
		}
		return "", fmt.Errorf("server: cannot listen on %s (check A2A_HOST and A2A_PORT): %w", addr, err)
	}
	scheme := "http"
	l := s.opts.Limits
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
		// ReadTimeout and WriteTimeout stay 0: a connection-wide deadline
		// would cut long SSE streams. Handlers set per-request deadlines
		// with http.ResponseController instead.
		ErrorLog:  s.log.StandardLogger(&hclog.StandardLoggerOptions{ForceLevel: hclog.Debug}),
		ConnState: s.conns.track,
	}
	ln = s.conns.listener(ln, tlsCert != "")
	if tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(tlsCert, tlsKey)
		if err != nil {
			_ = ln.Close()
			return "", fmt.Errorf("server: loading TLS certificate %s and key %s: %w", tlsCert, tlsKey, err)
		}
		srv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
		if s.grpc != nil {
			// HTTP/2 for gRPC clients (HTTP clients may use it too).
			srv.TLSConfig.NextProtos = []string{"h2", "http/1.1"}
		}
		leaf := cert.Leaf
		if leaf == nil && len(cert.Certificate) > 0 {
			leaf, _ = x509.ParseCertificate(cert.Certificate[0])
		}
		for _, card := range s.cards() {
			card.mu.Lock()
			card.tlsLeaf = leaf
			card.mu.Unlock()
		}
		ln = tls.NewListener(ln, srv.TLSConfig)
		scheme = "https"
	}
	s.httpSrv = srv
	base := baseURL(scheme, ln.Addr())
	for _, card := range s.cards() {
		card.mu.Lock()
		card.baseURL = base
		card.mu.Unlock()
	}
	httpLn := ln
	if s.grpc != nil && tlsCert == "" {
		s.mux = newConnMux(ln, l.ReadHeaderTimeout)
		httpLn = s.mux.http
		go s.mux.serve()
		go func() {
			if err := s.grpc.Serve(s.mux.grpc); err != nil && !errors.Is(err, grpc.ErrServerStopped) && !s.pipe.closing.Load() {
				s.log.Error("A2A gRPC server stopped", "addr", addr, "error", err)
			}
		}()
	}
	go func() {
		if err := srv.Serve(httpLn); err != nil && !errors.Is(err, http.ErrServerClosed) && !s.pipe.closing.Load() {
			s.log.Error("A2A server stopped", "addr", addr, "error", err)
		}
	}()
	s.log.Info("A2A server listening", "addr", ln.Addr().String(), "url", base, "grpc", s.grpc != nil)
	return base, nil
}

// cards are every agent's card handler, the default agent's first: what
// Start learns (the certificate served, the base URL) is every card's.
func (s *Server) cards() []*cardHandler {
	cards := []*cardHandler{s.card}
	for _, st := range s.router.sites {
		if st.card != s.card {
			cards = append(cards, st.card)
		}
	}
	return cards
}

// baseURL renders a listener address as a base URL.
func baseURL(scheme string, a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return scheme + "://" + a.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	// An IPv6 zone ("fe80::1%eth0") is escaped as a URL needs it.
	host = strings.ReplaceAll(host, "%", "%25")
	return scheme + "://" + net.JoinHostPort(host, port)
}

// Shutdown stops accepting requests and lets open streams finish until ctx
// is done; streams still open then get a final error event (gRPC: status
// UNAVAILABLE, "server shutting down; resubscribe") and are closed. It
// returns nil when everything drained in time.
func (s *Server) Shutdown(ctx context.Context) error {
	s.pipe.shutdown()
	s.mu.Lock()
	srv, mux := s.httpSrv, s.mux
	s.mu.Unlock()
	if mux != nil {
		_ = mux.Close()
	}
	var err error
	if srv != nil {
		err = srv.Shutdown(ctx)
	}
	if err == nil && s.grpcb != nil {
		// The gRPC calls in flight, as net/http waits for its requests.
		err = s.grpcb.active.wait(ctx)
	}
	if err == nil {
		err = s.pipe.streams.wait(ctx) // the streams of a Handler mounted elsewhere
	}
	if err == nil {
		s.stopGRPC()
		return nil
	}
	open := s.pipe.streams.open()
	s.pipe.stopAllStreams()
	// Give the streams a moment to write their goodbye event.
	goodbye, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	_ = s.pipe.streams.wait(goodbye)
	cancel()
	if srv != nil {
		// The cut streams' handlers have returned; let net/http finish
		// their responses before the connections are closed.
		ctx2, cancel := context.WithTimeout(context.Background(), time.Second)
		if srv.Shutdown(ctx2) != nil {
			_ = srv.Close()
		}
		cancel()
	}
	s.stopGRPC()
	if open > 0 {
		return fmt.Errorf("server: shutdown cut %d open stream(s): %w", open, err)
	}
	return err
}

// stopGRPC stops the gRPC server once its calls are done (or cut): a
// graceful stop (GOAWAY) for the clients that answer it, then at once —
// a client that never acknowledges must not hold the shutdown.
func (s *Server) stopGRPC() {
	if s.grpc == nil {
		return
	}
	done := make(chan struct{})
	go func() { s.grpc.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(500 * time.Millisecond):
		s.grpc.Stop()
	}
}

// recoverer turns a panic in a handler into a -32603 answer in the
// request's binding (when nothing was written yet) and a log line with
// the stack; the peer never sees the stack and the process never crashes.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tw := &trackingWriter{ResponseWriter: w, timeout: s.opts.Limits.WriteTimeout}
		defer func() {
			p := recover()
			if p == nil {
				return
			}
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.log.Error("panic while serving a request", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr,
				"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			if !tw.wrote {
				switch r.URL.Path {
				case "/", "/a2a", "/rpc":
					writeJSONRPCError(tw, http.StatusOK, nil, errInternal())
				default:
					writeStatusError(tw, restContentType(r), http.StatusOK, errInternal())
				}
			}
		}()
		next.ServeHTTP(tw, r)
	})
}

// trackingWriter records whether the response has started, and bounds
// its writing: as it starts, the connection's write deadline is set to
// Limits.WriteTimeout from then, so that a client that stops reading
// cannot hold the handler (and its connection) forever — also for the
// part of an answer net/http writes after the handler returns. net/http
// lifts the deadline once the response is finished, before it reads the
// connection's next request (HTTP/2: the deadline is the stream's). A
// stream's sink sets a deadline per event (sse.go).
type trackingWriter struct {
	http.ResponseWriter
	timeout time.Duration
	wrote   bool
}

// start marks the response started and sets its write deadline.
func (t *trackingWriter) start() {
	t.wrote = true
	if t.timeout > 0 {
		if d, ok := t.ResponseWriter.(interface{ SetWriteDeadline(time.Time) error }); ok {
			_ = d.SetWriteDeadline(time.Now().Add(t.timeout))
		} else {
			_ = http.NewResponseController(t.ResponseWriter).SetWriteDeadline(time.Now().Add(t.timeout))
		}
	}
}

func (t *trackingWriter) WriteHeader(code int) {
	if !t.wrote {
		t.start()
	}
	t.ResponseWriter.WriteHeader(code)
}

func (t *trackingWriter) Write(b []byte) (int, error) {
	if !t.wrote {
		t.start()
	}
	return t.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// Flush keeps the writer an http.Flusher.
func (t *trackingWriter) Flush() {
	if !t.wrote {
		t.start()
	}
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// retryAfter renders a wait as a Retry-After value (whole seconds, ≥ 1).
func retryAfter(d time.Duration) string {
	secs := int((d + time.Second - 1) / time.Second)
	return strconv.Itoa(max(secs, 1))
}
