package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

// Server serves the agent card and the A2A JSON-RPC endpoint. Create it
// with New; serve it with Start or mount Handler in your own http.Server.
type Server struct {
	opts Options
	log  hclog.Logger
	now  func() time.Time

	handler http.Handler
	card    cardState
	// skillCache holds the card's skills built from the host's tools.
	skillCache skillCache
	// inputModes is CardConfig.InputModes, parsed once.
	inputModes mediaMatcher
	// extensions indexes CardConfig.Extensions by URI.
	extensions map[string]bool
	required   []string

	// auditHook, set by tests, sees every audit record and the number of
	// SSE events of the exchange.
	auditHook func(rec security.AuditRecord, events int)

	mu      sync.Mutex
	httpSrv *http.Server
	baseURL string
	// tlsLeaf is the certificate Start serves (nil without TLS): a Host
	// it covers may be named in the card.
	tlsLeaf *x509.Certificate
	// hostHint logs once that a Host was not reflected into the card.
	hostHint sync.Once

	closing     atomic.Bool
	stopStreams chan struct{}
	stopOnce    sync.Once
	streams     streamCount // open streams
	// streamSlots counts the streams holding a place under
	// Limits.MaxStreams; conns caps the connections Start accepts.
	streamSlots atomic.Int64
	conns       *connLimiter
	// localHosts are the DNS names (besides localhost) a loopback caller
	// may use in Host and still be Local: the public URL's host.
	localHosts map[string]bool
}

// New checks opts, fills in defaults and returns a server.
func New(opts Options) (*Server, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Server{
		opts:        o,
		log:         o.Logger.Named("server"),
		now:         o.Now,
		stopStreams: make(chan struct{}),
		extensions:  make(map[string]bool, len(o.Card.Extensions)),
	}
	if s.inputModes, err = newMediaMatcher(o.Card.InputModes); err != nil {
		return nil, err
	}
	for _, e := range o.Card.Extensions {
		s.extensions[e.URI] = true
		if e.Required {
			s.required = append(s.required, e.URI)
		}
	}
	// Fail at start-up, not at the first card request, when the card the
	// configuration describes would be invalid. (Skills built from the
	// host's tools are valid by construction; the host is not asked here.)
	probe := s.buildCard("http://127.0.0.1/", []a2a.AgentSkill{s.chatSkill()}, false)
	if err := probe.Validate(); err != nil {
		return nil, fmt.Errorf("server: the configured agent card is invalid: %w", err)
	}
	s.conns = newConnLimiter(o.Limits.MaxConnections, s.log)
	s.localHosts = map[string]bool{}
	if u, err := url.Parse(o.Card.PublicURL); err == nil && u.Hostname() != "" {
		s.localHosts[strings.ToLower(u.Hostname())] = true
	}
	s.handler = s.guardBody(s.traceRequests(s.routes()))
	return s, nil
}

// routes builds the handler tree.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/agent-card.json", s.serveCard)
	mux.HandleFunc("GET /.well-known/agent.json", s.serveCard)
	mux.HandleFunc("GET /healthz", s.serveHealth)
	mux.HandleFunc("POST /{$}", s.serveRPC)
	mux.HandleFunc("POST /a2a", s.serveRPC)
	mux.HandleFunc("POST /rpc", s.serveRPC)
	// The HTTP+JSON binding: its routes are path-distinct from the
	// JSON-RPC endpoint, so it shares the base URL (see rest.go).
	mux.HandleFunc("/", s.serveREST)
	for _, e := range s.opts.Extra {
		mux.Handle(e.Pattern, s.protect(e))
	}
	return s.recoverer(mux)
}

// protect serves an extra route only to callers it admits: Local callers,
// and others that e.Allow accepts. It answers 401 for a bad token and 403
// for everyone else. Like the A2A endpoints it refuses browser requests
// from other origins (403) and loopback callers that address the agent by
// a DNS name that is not its own (421): both are how a web page in the
// operator's browser would reach the Local tier.
func (s *Server) protect(e ExtraRoute) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if crossSiteBrowserRequest(r) {
			http.Error(w, "forbidden: "+errCrossSite(r.Header.Get("Origin")).Message, http.StatusForbidden)
			return
		}
		ident, err := s.opts.Auth.Authenticate(r)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="a2a", error="invalid_token"`)
			http.Error(w, "unauthorized: the bearer token is not valid for this agent", http.StatusUnauthorized)
			return
		}
		if ident.Tier == security.TierLocal && !ident.Authenticated && !security.SafeLocalHost(r.Host, s.localHosts) {
			http.Error(w, "misdirected request: "+errMisdirected(r.Host).Message, http.StatusMisdirectedRequest)
			return
		}
		if ident.Tier != security.TierLocal && (e.Allow == nil || !e.Allow(ident)) {
			http.Error(w, "forbidden: this route is for the local operator (or callers the configuration allows)", http.StatusForbidden)
			return
		}
		e.Handler.ServeHTTP(w, r)
	})
}

// ActiveStreams is the number of open SSE streams.
func (s *Server) ActiveStreams() int64 { return s.streams.open() }

// Handler returns the server's HTTP handler: the agent card at
// /.well-known/agent-card.json (and the legacy /.well-known/agent.json),
// the JSON-RPC endpoint at POST / (aliases /a2a and /rpc), the HTTP+JSON
// routes (POST /message:send, GET /tasks/{id}, …) and GET /healthz.
func (s *Server) Handler() http.Handler { return s.handler }

func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if s.closing.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("shutting down"))
		return
	}
	_, _ = w.Write([]byte("ok"))
}

// Start listens on addr ("host:port") and serves in the background; with
// tlsCert and tlsKey (PEM file paths) it serves HTTPS. It returns the base
// URL clients can use (an unspecified host such as 0.0.0.0 is reported as
// 127.0.0.1). ctx bounds only the listen step; stop the server with
// Shutdown.
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
		s.tlsLeaf = cert.Leaf
		if s.tlsLeaf == nil && len(cert.Certificate) > 0 {
			s.tlsLeaf, _ = x509.ParseCertificate(cert.Certificate[0])
		}
		ln = tls.NewListener(ln, srv.TLSConfig)
		scheme = "https"
	}
	s.httpSrv = srv
	s.baseURL = baseURL(scheme, ln.Addr())
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("A2A server stopped", "addr", addr, "error", err)
		}
	}()
	s.log.Info("A2A server listening", "addr", ln.Addr().String(), "url", s.baseURL)
	return s.baseURL, nil
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
// is done; streams still open then get a final JSON-RPC error event
// ("server shutting down; resubscribe") and are closed. It returns nil
// when everything drained in time.
func (s *Server) Shutdown(ctx context.Context) error {
	s.closing.Store(true)
	s.mu.Lock()
	srv := s.httpSrv
	s.mu.Unlock()
	var err error
	if srv != nil {
		err = srv.Shutdown(ctx)
	} else {
		err = s.streams.wait(ctx)
	}
	if err == nil {
		return nil
	}
	open := s.streams.open()
	s.stopOnce.Do(func() { close(s.stopStreams) })
	// Give the streams a moment to write their goodbye event.
	goodbye, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	_ = s.streams.wait(goodbye)
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
	if open > 0 {
		return fmt.Errorf("server: shutdown cut %d open stream(s): %w", open, err)
	}
	return err
}

// recoverer turns a panic in a handler into a -32603 answer in the
// request's binding (when nothing was written yet) and a log line with
// the stack; the peer never sees the stack and the process never crashes.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tw := &trackingWriter{ResponseWriter: w}
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

// trackingWriter records whether the response has started.
type trackingWriter struct {
	http.ResponseWriter
	wrote bool
}

func (t *trackingWriter) WriteHeader(code int) {
	t.wrote = true
	t.ResponseWriter.WriteHeader(code)
}

func (t *trackingWriter) Write(b []byte) (int, error) {
	t.wrote = true
	return t.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// Flush keeps the writer an http.Flusher.
func (t *trackingWriter) Flush() {
	t.wrote = true
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// retryAfter renders a wait as a Retry-After value (whole seconds, ≥ 1).
func retryAfter(d time.Duration) string {
	secs := int((d + time.Second - 1) / time.Second)
	return strconv.Itoa(max(secs, 1))
}

// streamCount counts open streams and says when none is left. Unlike a
// sync.WaitGroup it may gain a stream while Shutdown waits for the others
// (a request admitted just before shutdown began).
type streamCount struct {
	mu   sync.Mutex
	n    int64
	zero chan struct{} // closed when n drops to 0; nil while n is 0
}

func (c *streamCount) add() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == 0 {
		c.zero = make(chan struct{})
	}
	c.n++
}

func (c *streamCount) done() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n--
	if c.n == 0 {
		close(c.zero)
		c.zero = nil
	}
}

func (c *streamCount) open() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// wait returns once no stream is open — streams that start while it
// waits are waited for too — or with ctx's error when ctx ends first.
func (c *streamCount) wait(ctx context.Context) error {
	for {
		c.mu.Lock()
		zero := c.zero
		c.mu.Unlock()
		if zero == nil {
			return nil
		}
		select {
		case <-zero:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
