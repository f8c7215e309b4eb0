package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

// exchange is the state of one JSON-RPC exchange, shared by dispatch,
// logging and the audit record.
type exchange struct {
	start  time.Time
	ident  security.Identity
	method string
	op     a2a.Operation
	v03    bool
	id     json.RawMessage

	taskID, contextID string
	// turnContext is the context whose turn the loop guard counted for
	// this send ("" when none was).
	turnContext string

	// rest marks an exchange of the HTTP+JSON binding; ctype is the
	// media type of its JSON answers (see restContentType).
	rest  bool
	ctype []string

	status   int // HTTP status (the JSON-RPC binding's; see rest.go)
	code     int // JSON-RPC error code, 0 on success
	reason   string
	errMsg   string
	bytesIn  int64
	bytesOut int64
	events   int  // SSE events written
	stream   bool // answered with SSE
	cut      bool // the stream ended before its task settled
}

// logArgs returns the key/value pairs every log line about the exchange
// carries (task_id, context_id, peer, method; binding for HTTP+JSON),
// followed by kv.
func (ex *exchange) logArgs(kv ...any) []any {
	args := []any{"task_id", ex.taskID, "context_id", ex.contextID, "peer", ex.ident.ID, "method", ex.method}
	if ex.rest {
		args = append(args, "binding", a2a.BindingHTTPJSON)
	}
	return append(args, kv...)
}

// fail records a refusal in the exchange.
func (ex *exchange) fail(status int, e *a2a.Error) {
	ex.status, ex.code, ex.reason, ex.errMsg = status, e.Code, e.Reason, errMessage(e)
}

// bodyPool recycles request-body buffers; buffers that grew past
// maxPooledBody are dropped so one large request does not pin memory.
var bodyPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledBody = 64 << 10

// pooledBody returns an empty buffer from bodyPool and the func that
// gives it back (dropping it when it grew past maxPooledBody).
func pooledBody() (*bytes.Buffer, func()) {
	buf := bodyPool.Get().(*bytes.Buffer)
	buf.Reset()
	return buf, func() {
		if buf.Cap() <= maxPooledBody {
			bodyPool.Put(buf)
		}
	}
}

// opPerms maps each operation to the permission it needs.
var opPerms = [...]security.Permission{
	a2a.OpSendMessage:          security.PermSend,
	a2a.OpSendStreamingMessage: security.PermSend,
	a2a.OpGetTask:              security.PermGet,
	a2a.OpListTasks:            security.PermList,
	a2a.OpCancelTask:           security.PermCancel,
	a2a.OpSubscribeToTask:      security.PermSubscribe,
	a2a.OpCreatePushConfig:     security.PermPushConfig,
	a2a.OpGetPushConfig:        security.PermPushConfig,
	a2a.OpListPushConfigs:      security.PermPushConfig,
	a2a.OpDeletePushConfig:     security.PermPushConfig,
	a2a.OpGetExtendedCard:      security.PermExtendedCard,
}

// serveRPC is the JSON-RPC endpoint. Every step that can refuse the
// request runs before anything reaches the task manager, cheapest first:
// authentication, rate limit, body size, Content-Type, nesting depth,
// UTF-8, envelope, method, version, extensions, capability, permission,
// params. The steps shared with the HTTP+JSON binding (serveREST) are
// admit, checkJSON, checkVersion, authorize and dispatch.
func (s *Server) serveRPC(w http.ResponseWriter, r *http.Request) {
	ex := &exchange{start: s.now(), status: http.StatusOK}
	defer s.finish(ex, r)
	if !s.admit(w, r, ex) {
		return
	}

	rc := http.NewResponseController(w)
	buf, release := pooledBody()
	defer release()
	if status, e := s.readBody(w, r, buf); e != nil {
		s.refuse(w, ex, status, e)
		return
	}
	body := buf.Bytes()
	ex.bytesIn = int64(len(body))

	if ct := headerValue(r.Header, "Content-Type"); ct != "" && !isJSONContentType(ct) {
		if req, _ := a2a.ParseRequest(body); req != nil {
			ex.id = req.ResponseID()
			ex.method = req.Method
		}
		s.refuse(w, ex, http.StatusOK, errContentType(ct))
		return
	}
	if e := s.checkJSON(body); e != nil {
		s.refuse(w, ex, http.StatusOK, e)
		return
	}
	req, perr := a2a.ParseRequest(body)
	if perr != nil {
		if req != nil {
			ex.id = req.ResponseID()
		}
		s.refuse(w, ex, http.StatusOK, perr)
		return
	}
	// Copy the id: body goes back to the pool when the handler returns.
	ex.id = append(json.RawMessage(nil), req.ResponseID()...)
	ex.method = req.Method
	if req.IsNotification() {
		// JSON-RPC: a notification gets no response. A2A has no
		// notification methods, so nothing is processed (see doc.go).
		ex.status = http.StatusNoContent
		w.WriteHeader(http.StatusNoContent)
		return
	}
	op, v03, ok := a2a.LookupMethod(req.Method)
	if !ok {
		s.refuse(w, ex, http.StatusOK, a2a.ErrMethodNotFound(req.Method))
		return
	}
	ex.op, ex.v03 = op, v03
	if _, verr := a2a.NegotiateVersion(requestedVersion(r), v03); verr != nil {
		s.refuse(w, ex, http.StatusOK, verr)
		return
	}
	if e := s.authorize(w, r, ex); e != nil {
		s.refuse(w, ex, http.StatusOK, e)
		return
	}
	params, e := a2a.DecodeParams(op, v03, req.Params)
	if e != nil {
		s.refuse(w, ex, http.StatusOK, e)
		return
	}
	s.dispatch(w, r, rc, ex, params)
}

// crossSiteBrowserRequest reports whether a browser sent r from a page of
// another origin: an Origin header naming another host (or "null"), or
// Sec-Fetch-Site "cross-site". Non-browser clients send neither.
func crossSiteBrowserRequest(r *http.Request) bool {
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return true
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return true // "null" and malformed origins
	}
	return !strings.EqualFold(u.Host, r.Host)
}

// admit runs the steps every A2A request of either binding starts with:
// refuse while shutting down, authenticate, apply the rate limit. It
// records the caller in ex and reports whether the request may go on; a
// refusal has been answered.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, ex *exchange) bool {
	if s.closing.Load() {
		s.refuse(w, ex, http.StatusServiceUnavailable, errUnavailable())
		return false
	}
	if crossSiteBrowserRequest(r) {
		// A web page in the operator's browser must not drive the local
		// agent (loopback callers are the Local tier): A2A clients are not
		// browsers, and the inspector is same-origin.
		ex.ident = security.Identity{ID: "cross-site:" + remoteAddr(r), Remote: remoteAddr(r)}
		s.refuse(w, ex, http.StatusForbidden, errCrossSite(r.Header.Get("Origin")))
		return false
	}
	ident, err := s.opts.Auth.Authenticate(r)
	if err == nil {
		err = s.opts.Auth.Admit(ident)
	}
	if err != nil {
		remote := remoteAddr(r)
		ex.ident = security.Identity{ID: "unauthenticated:" + remote, Remote: remote}
		// Failed attempts count against the caller's address, which slows
		// down token guessing.
		if rl := s.opts.RateLimit; rl != nil {
			if ok, wait := rl.Allow(ex.ident.ID); !ok {
				w.Header().Set("Retry-After", retryAfter(wait))
				s.refuse(w, ex, http.StatusTooManyRequests, errRateLimited(wait))
				return false
			}
		}
		challenge := `Bearer realm="a2a"`
		if r.Header.Get("Authorization") != "" {
			challenge += `, error="invalid_token"`
		}
		w.Header().Set("WWW-Authenticate", challenge)
		s.refuse(w, ex, http.StatusUnauthorized, errUnauthenticated(err))
		return false
	}
	ex.ident = ident
	if ident.Tier == security.TierLocal && !ident.Authenticated && !security.SafeLocalHost(r.Host, s.localHosts) {
		// Local by virtue of the loopback connection alone, but addressed
		// by a DNS name: a rebinding web page in the operator's browser
		// would look exactly like this.
		s.refuse(w, ex, http.StatusMisdirectedRequest, errMisdirected(r.Host))
		return false
	}
	if ok, wait := s.allowRate(ident); !ok {
		w.Header().Set("Retry-After", retryAfter(wait))
		s.refuse(w, ex, http.StatusTooManyRequests, errRateLimited(wait))
		return false
	}
	return true
}

// allowRate applies the rate limit to one request of ident. Local callers
// are exempt unless Options.RateLimitLocal is set.
func (s *Server) allowRate(ident security.Identity) (bool, time.Duration) {
	rl := s.opts.RateLimit
	if rl == nil || (ident.Tier == security.TierLocal && !s.opts.RateLimitLocal) {
		return true, 0
	}
	return rl.Allow(ident.ID)
}

// checkJSON refuses a body nested deeper than Limits.MaxJSONDepth or not
// valid UTF-8, before any decoder looks at it.
func (s *Server) checkJSON(body []byte) *a2a.Error {
	if tooDeep(body, s.opts.Limits.MaxJSONDepth) {
		return errTooDeep(s.opts.Limits.MaxJSONDepth)
	}
	if !utf8.Valid(body) {
		return a2a.ErrParse("the body is not valid UTF-8, which JSON requires")
	}
	return nil
}

// requestedVersion is the A2A-Version header, or the ?A2A-Version= query
// parameter the specification allows instead.
func requestedVersion(r *http.Request) string {
	version := headerValue(r.Header, hdrVersion)
	if version == "" && r.URL.RawQuery != "" {
		version = r.URL.Query().Get(a2a.HeaderVersion)
	}
	return version
}

// authorize runs the checks between the operation and its params, the
// same for both bindings: extensions, capability (answered the same to
// every caller, so before permissions), the caller's permission.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request, ex *exchange) *a2a.Error {
	if e := s.negotiateExtensions(w, r); e != nil {
		return e
	}
	if e := s.capability(ex.op); e != nil {
		return e
	}
	return s.permit(ex.method, ex.op, opPerms[ex.op], ex.ident)
}

// permit checks that the caller may use perm: its tier's policy must
// allow it and, for an OAuth caller, its token must carry the scope.
func (s *Server) permit(method string, op a2a.Operation, perm security.Permission, ident security.Identity) *a2a.Error {
	if !s.opts.Policy.Allows(ident.Tier, perm) {
		return errForbidden(method, op, perm, ident.Tier)
	}
	if !ident.Permits(perm) {
		scope := perm.String()
		if v := s.opts.Auth.OAuth(); v != nil {
			scope = v.ScopeFor(ident, perm)
		}
		return errMissingScope(method, op, perm, scope)
	}
	return nil
}

// readBody reads the request body into buf within the size limit; the
// time limit is guardBody's deadline (Limits.ReadTimeout from the start of
// the request). Memory follows the bytes that arrive: an announced
// Content-Length is checked against the limit but never allocated ahead
// (the buffer grows as a bytes.Buffer does, at most doubling what came).
// On failure it returns the HTTP status and error to answer with, and the
// connection is closed after the answer (what is left of the body is not
// read).
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, buf *bytes.Buffer) (int, *a2a.Error) {
	limit := s.opts.Limits.MaxBodyBytes
	if r.ContentLength > limit {
		w.Header().Set("Connection", "close")
		return http.StatusRequestEntityTooLarge, errTooLarge(limit)
	}
	// Read up to one byte past the limit (http.MaxBytesReader would cost an
	// allocation per request).
	var err error
	for {
		if buf.Len() > int(limit) {
			break
		}
		buf.Grow(bytes.MinRead)
		free := buf.AvailableBuffer()
		free = free[:min(cap(free), int(limit)+1-buf.Len())]
		n, rerr := r.Body.Read(free)
		buf.Write(free[:n])
		if rerr != nil {
			if rerr != io.EOF {
				err = rerr
			}
			break
		}
	}
	if buf.Len() > int(limit) {
		w.Header().Set("Connection", "close")
		return http.StatusRequestEntityTooLarge, errTooLarge(limit)
	}
	if err == nil {
		return 0, nil
	}
	w.Header().Set("Connection", "close")
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return http.StatusRequestTimeout, errBodyTimeout(s.opts.Limits.ReadTimeout)
	}
	return http.StatusBadRequest, a2a.ErrInvalidRequest("the request body could not be read")
}

// refuse answers with an error in the exchange's binding and records it.
// status is the JSON-RPC binding's HTTP status: 200 for protocol errors,
// the status of an HTTP-level refusal otherwise (the HTTP+JSON binding
// maps the former with a2a.HTTPStatus, see restStatus).
func (s *Server) refuse(w http.ResponseWriter, ex *exchange, status int, e *a2a.Error) {
	ex.fail(status, e)
	if ex.rest {
		ex.bytesOut += int64(writeStatusError(w, ex.ctype, status, e))
		return
	}
	if ex.v03 {
		e = e.AsV03() // 0.3 clients decode `data` as an object
	}
	ex.bytesOut += int64(writeJSONRPCError(w, status, ex.id, e))
}

// capability refuses operations the agent card does not offer.
func (s *Server) capability(op a2a.Operation) *a2a.Error {
	switch op {
	case a2a.OpCreatePushConfig, a2a.OpGetPushConfig, a2a.OpListPushConfigs, a2a.OpDeletePushConfig:
		if !s.opts.Push.Enabled {
			return a2a.ErrPushNotSupported()
		}
	case a2a.OpGetExtendedCard:
		if len(s.opts.Card.ExtendedSkills) == 0 {
			return a2a.ErrUnsupportedOperation("GetExtendedAgentCard is not supported: this agent does not offer an extended agent card (capabilities.extendedAgentCard is not set); use the public card at /.well-known/agent-card.json")
		}
	}
	return nil
}

// negotiateExtensions reads A2A-Extensions (and the 0.3 X-A2A-Extensions),
// echoes the activated ones and refuses a request that omits a required
// extension. Unknown extensions are ignored, as the specification asks.
func (s *Server) negotiateExtensions(w http.ResponseWriter, r *http.Request) *a2a.Error {
	if len(s.extensions) == 0 {
		return nil
	}
	requested := map[string]bool{}
	for _, name := range []string{hdrExtensions, hdrExtensionsV03} {
		for _, v := range r.Header[name] {
			for _, uri := range strings.Split(v, ",") {
				if uri = strings.TrimSpace(uri); uri != "" {
					requested[uri] = true
				}
			}
		}
	}
	for _, uri := range s.required {
		if !requested[uri] {
			return a2a.ErrExtensionSupportRequired(uri)
		}
	}
	var activated []string
	for _, e := range s.opts.Card.Extensions {
		if requested[e.URI] {
			activated = append(activated, e.URI)
		}
	}
	if len(activated) > 0 {
		w.Header()[hdrExtensions] = []string{strings.Join(activated, ", ")}
	}
	return nil
}

// headerValue is Header.Get for a name already in canonical form.
func headerValue(h http.Header, canonical string) string {
	if v := h[canonical]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// isJSONContentType accepts application/json and application/*+json, with
// any parameters.
func isJSONContentType(ct string) bool {
	if ct == "application/json" || strings.HasPrefix(ct, "application/json;") {
		return true // the usual case, without parsing
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	sub, ok := strings.CutPrefix(mt, "application/")
	return ok && (sub == "json" || strings.HasSuffix(sub, "+json"))
}

// tooDeep reports whether the JSON in b nests objects and arrays deeper
// than limit. It is a single pass that only tracks strings and brackets,
// so a hostile body is refused before any decoder recurses into it.
func tooDeep(b []byte, limit int) bool {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			// Skip the string, honouring escapes.
			for i++; i < len(b); i++ {
				if c := b[i]; c == '\\' {
					i++
				} else if c == '"' {
					break
				}
			}
		case '{', '[':
			depth++
			if depth > limit {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

// remoteAddr returns the host part of the TCP peer address.
func remoteAddr(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

// scope returns the task scope of a caller: its own tasks, or every task
// for a local caller.
func scope(id security.Identity) string {
	if id.Tier == security.TierLocal {
		return ""
	}
	return id.ID
}

// writeResult writes a success response: the result in a JSON-RPC
// envelope, or (HTTP+JSON) the bare result. A response that cannot be
// encoded becomes -32603 (logged).
func (s *Server) writeResult(w http.ResponseWriter, rc *http.ResponseController, ex *exchange, result any) {
	var (
		b   []byte
		err error
	)
	if ex.rest {
		b, err = a2a.Marshal(result)
	} else {
		b, err = a2a.EncodeResult(ex.id, result)
	}
	if err != nil {
		s.log.Error("encoding a response failed", ex.logArgs("error", err)...)
		s.refuse(w, ex, http.StatusOK, errInternal())
		return
	}
	_ = rc.SetWriteDeadline(time.Now().Add(s.opts.Limits.WriteTimeout))
	setJSONHeaders(w.Header(), len(b))
	if ex.rest {
		w.Header()["Content-Type"] = ex.ctype
	}
	w.WriteHeader(http.StatusOK)
	n, _ := w.Write(b)
	ex.bytesOut += int64(n)
	_ = rc.SetWriteDeadline(time.Time{})
}

// finish logs the exchange and hands its audit record to the auditor.
func (s *Server) finish(ex *exchange, r *http.Request) {
	d := s.now().Sub(ex.start)
	s.audit(ex, d)
	switch {
	case ex.code == 0 && s.log.IsDebug():
		s.log.Debug("a2a request", ex.logArgs("tier", ex.ident.Tier.String(), "status", ex.status, "events", ex.events, "duration", d)...)
	case ex.code != 0 && ex.code != a2a.CodeRateLimited:
		s.log.Info("a2a request refused", ex.logArgs("tier", ex.ident.Tier.String(), "status", ex.status, "code", ex.code,
			"reason", ex.reason, "duration", d)...)
	}
}
