package inspector

import (
	"context"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/metrics"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
)

// Prefix is the path the inspector is served under.
const Prefix = "/inspector/"

// Watcher tells about every change of every task (tasks.Manager.Watch).
type Watcher interface {
	Watch(fn func(tasks.Change)) (stop func())
}

// Peer is one configured outbound peer as the inspector shows it.
type Peer struct {
	Name  string
	URL   string
	Trust string
	// Signed says the peer's card must carry a verifying signature;
	// VerifiedKey names the key that verified it.
	Signed      bool
	VerifiedKey string
	// Credential says how the tools authenticate to it ("bearer token",
	// "header", "" for none); never the secret.
	Credential string
	Reachable  bool
	// RateLimited says the peer answered the check with HTTP 429: up, but
	// busy — shown as such, not as unreachable.
	RateLimited bool
	Error       string
	Checked     time.Time
	// Card is the peer's card as last fetched (nil: never fetched), from
	// CardURL, spoken to through Interface.
	Card      *a2a.AgentCard
	CardURL   string
	Interface a2a.AgentInterface
}

// ToolResult is what a tool call answered: its text, and whether it is an
// error the model would see.
type ToolResult struct {
	Content string
	IsError bool
}

// Store is the part of the store the inspector reads: one agent's view of
// the tasks and conversations (store.ForAgent), and the delegations.
type Store interface {
	store.Tasks
	store.Delegations
	store.Conversations
}

// Options configure an Inspector. Tasks and Store are required.
type Options struct {
	// Tasks tells the live views about task changes.
	Tasks Watcher
	// Store is read for the task list, a task's history and artifacts,
	// and the outbound conversations.
	Store Store
	// Server returns the plugin's HTTP handler; the overview reads the
	// public Agent Card through it, exactly as a peer gets it (built from
	// the host's live tools). Nil: the overview shows no card.
	Server func() http.Handler
	// Peers reports the configured outbound peers with their reachability
	// (nil: none). It may fetch cards; PeerNames answers at once.
	Peers func(ctx context.Context) []Peer
	// PeerNames are the configured peers' names, for the send form and
	// for checking a peer send (nil: the names Peers reports).
	PeerNames func() []string
	// CallTool runs one of the plugin's tools by name, with its arguments
	// as JSON, the way the host's model does; sending to a peer is an
	// a2a_call through it (nil: the send form offers only this agent).
	// progress gets each progress message; an error from it stops the
	// call.
	CallTool func(ctx context.Context, tool, argumentsJSON string, progress func(message string) error) (ToolResult, error)
	// Metrics are the plugin's shared metrics (nil: no charts).
	Metrics *metrics.Metrics
	// Agent is the host agent whose inspector this is ("" with one
	// agent): the per-peer figures show its inbound callers only.
	Agent string
	// PublicURL is the configured public base URL; its host name is
	// accepted in the Host header besides loopback names and addresses.
	PublicURL string
	// RPCPath is the JSON-RPC endpoint's path (default "/").
	RPCPath string
	// Prefix is the path the inspector is served under (default Prefix);
	// an agent of a host with several has its own, /agents/{id}/inspector/.
	// Requests are routed as if they came in under Prefix.
	Prefix string
	// CardPath is the path of the agent's public card (default
	// /.well-known/agent-card.json).
	CardPath string
	// AgentName names the agent in the pages' header.
	AgentName string
	Logger    hclog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Inspector serves the operator's pages. Create it with New and mount
// Handler at Prefix behind the server's Local-only protection.
type Inspector struct {
	opts    Options
	log     hclog.Logger
	now     func() time.Time
	pages   map[string]*template.Template
	static  map[string]asset
	handler http.Handler
	hosts   map[string]bool // host names accepted besides loopback ones

	feed      *hub
	stopWatch func()
	samples   *sampler

	mu     sync.Mutex
	closed bool
}

// New checks opts, starts watching task changes and returns the inspector.
// Close stops it.
func New(opts Options) (*Inspector, error) {
	if opts.Tasks == nil || opts.Store == nil {
		return nil, errors.New("inspector: Options.Tasks and Options.Store are required")
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.RPCPath == "" {
		opts.RPCPath = "/"
	}
	if opts.Prefix == "" {
		opts.Prefix = Prefix
	}
	if opts.CardPath == "" {
		opts.CardPath = "/.well-known/agent-card.json"
	}
	pages, err := parsePages(opts.Prefix)
	if err != nil {
		return nil, err
	}
	static, err := loadStatic()
	if err != nil {
		return nil, err
	}
	in := &Inspector{
		opts: opts, log: opts.Logger, now: opts.Now, pages: pages, static: static,
		hosts: map[string]bool{"localhost": true}, feed: newHub(),
		samples: newSampler(opts.Metrics, opts.Agent, opts.Now),
	}
	if opts.PublicURL != "" {
		if u, err := url.Parse(opts.PublicURL); err == nil && u.Hostname() != "" {
			in.hosts[strings.ToLower(u.Hostname())] = true
		}
	}
	in.handler = in.guard(in.under(in.routes()))
	in.stopWatch = opts.Tasks.Watch(in.feed.publish)
	return in, nil
}

// Handler serves every inspector route under Prefix.
func (in *Inspector) Handler() http.Handler { return in.handler }

// EndStreams ends the open live feeds and peer sends, so that a server
// shutdown does not wait for them; browsers reconnect on their own. New
// feeds may open afterwards (the server may serve again).
func (in *Inspector) EndStreams() {
	if in != nil {
		in.feed.endStreams()
	}
}

// Close stops watching tasks and ends every open stream. A nil Inspector
// (the inspector is off) does nothing, as EndStreams.
func (in *Inspector) Close() {
	if in == nil {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return
	}
	in.closed = true
	in.stopWatch()
	in.feed.endStreams()
}

// under serves next, whose routes are under Prefix, at opts.Prefix.
func (in *Inspector) under(next http.Handler) http.Handler {
	if in.opts.Prefix == Prefix {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, in.opts.Prefix)
		if !ok {
			http.NotFound(w, r)
			return
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path, r2.URL.RawPath = Prefix+rest, ""
		next.ServeHTTP(w, r2)
	})
}

func (in *Inspector) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /inspector/{$}", in.serveOverview)
	mux.HandleFunc("GET /inspector/tasks", in.serveTasks)
	mux.HandleFunc("GET /inspector/tasks/{id}", in.serveTask)
	mux.HandleFunc("GET /inspector/tasks/{id}/parts/{where}", in.servePart)
	mux.HandleFunc("GET /inspector/send", in.serveSend)
	mux.HandleFunc("GET /inspector/peers", in.servePeers)
	mux.HandleFunc("GET /inspector/conversations/{id}", in.serveConversation)
	mux.HandleFunc("GET /inspector/static/{name}", in.serveStatic)
	mux.HandleFunc("GET /inspector/api/events", in.serveEvents)
	mux.HandleFunc("GET /inspector/api/metrics", in.serveMetrics)
	mux.HandleFunc("POST /inspector/api/peers/{name}/send", in.servePeerSend)
	mux.HandleFunc("/inspector/", func(w http.ResponseWriter, r *http.Request) {
		in.fail(w, r, http.StatusNotFound, "There is no inspector page at "+r.URL.Path+".")
	})
	return mux
}

// CSRFHeader must be sent (with value "1") on every state-changing
// inspector request. A cross-site page cannot add it without a CORS
// preflight, which the inspector never grants.
const CSRFHeader = "X-A2A-Inspector"

// guard sets the headers every inspector answer carries and refuses
// requests that could come from another site: a Host header that is not a
// loopback name or address (or the configured public host) — a DNS
// rebinding page would send its own name — and state-changing requests
// without the CSRF header or from another origin.
func (in *Inspector) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		if !in.hostAllowed(r.Host) {
			http.Error(w, "misdirected request: the inspector answers only at a loopback address, localhost, or the configured public_url host", http.StatusMisdirectedRequest)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if err := sameOrigin(r); err != nil {
				http.Error(w, "forbidden: "+err.Error(), http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// hostAllowed accepts IP literals (no DNS name is involved, so no rebinding
// is possible), localhost names and the public URL's host.
func (in *Inspector) hostAllowed(hostport string) bool {
	return security.SafeLocalHost(hostport, in.hosts)
}

// sameOrigin checks a state-changing request: the CSRF header, and when
// the browser says where the request comes from, that it is this origin.
func sameOrigin(r *http.Request) error {
	if r.Header.Get(CSRFHeader) != "1" {
		return errors.New("state-changing inspector requests need the header " + CSRFHeader + ": 1")
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return errors.New("the request comes from another site (Sec-Fetch-Site: " + site + ")")
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || !strings.EqualFold(u.Host, r.Host) {
			return errors.New("the request comes from another origin (" + o + ")")
		}
	}
	return nil
}
