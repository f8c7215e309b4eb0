package server

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

// httpBinding is what the two bindings over HTTP (JSON-RPC, HTTP+JSON)
// share: the Peer of a request, the body read within its limits, the JSON
// checks, the headers of a refusal and of the activated extensions, and
// the SSE writer (sse.go).
type httpBinding struct {
	h      Handler
	limits *Limits
	log    hclog.Logger
}

// peer is what the handler needs of an HTTP request before reading it.
func (b *httpBinding) peer(r *http.Request, binding string) Peer {
	p := Peer{
		Binding:       binding,
		RemoteAddr:    r.RemoteAddr,
		Authorization: r.Header[hdrAuthorization],
		Host:          r.Host,
		Origin:        headerValue(r.Header, "Origin"),
		FetchSite:     headerValue(r.Header, "Sec-Fetch-Site"),
		TLS:           r.TLS != nil,
		Trace:         traceContext(headerValue(r.Header, "Traceparent"), headerValue(r.Header, "Tracestate")),
		Version:       requestedVersion(r),
	}
	p.LocalAddr, _ = r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	p.Tenant, _ = r.Context().Value(agentPathKey{}).(string)
	for _, name := range []string{hdrExtensions, hdrExtensionsV03} {
		for _, v := range r.Header[name] {
			for _, uri := range strings.Split(v, ",") {
				if uri = strings.TrimSpace(uri); uri != "" {
					p.Extensions = append(p.Extensions, uri)
				}
			}
		}
	}
	return p
}

// refusalHeaders sets the headers a refusal's class asks for.
func refusalHeaders(w http.ResponseWriter, r *Refusal) {
	if r.RetryAfter > 0 {
		w.Header().Set("Retry-After", retryAfter(r.RetryAfter))
	}
	if r.Challenge != "" {
		w.Header().Set("WWW-Authenticate", r.Challenge)
	}
	if r.Status == http.StatusRequestEntityTooLarge || r.Status == http.StatusRequestTimeout {
		// What is left of the body is not read.
		w.Header().Set("Connection", "close")
	}
}

// echoExtensions answers A2A-Extensions with the activated extensions.
func echoExtensions(w http.ResponseWriter, c *Call) {
	if len(c.Activated) > 0 {
		w.Header()[hdrExtensions] = []string{strings.Join(c.Activated, ", ")}
	}
}

// bodyPool recycles request-body buffers; buffers that grew past
// maxPooledBody are dropped so one large request does not pin memory.
var bodyPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledBody = 64 << 10

// pooledBody returns an empty buffer from bodyPool; releaseBody gives it
// back. (A func returned to release it would cost an allocation per call,
// two per JSON-RPC exchange.)
func pooledBody() *bytes.Buffer {
	buf := bodyPool.Get().(*bytes.Buffer)
	buf.Reset()
	return buf
}

// releaseBody gives buf back to bodyPool, or drops it when it grew past
// maxPooledBody.
func releaseBody(buf *bytes.Buffer) {
	if buf.Cap() <= maxPooledBody {
		bodyPool.Put(buf)
	}
}

// readBody reads the request body into buf within the size limit; the
// time limit is guardBody's deadline (Limits.ReadTimeout from the start of
// the request). Memory follows the bytes that arrive: an announced
// Content-Length is checked against the limit but never allocated ahead
// (the buffer grows as a bytes.Buffer does, at most doubling what came).
// A failure is the refusal to answer with; the connection is closed after
// the answer (what is left of the body is not read).
func (b *httpBinding) readBody(r *http.Request, buf *bytes.Buffer) *Refusal {
	limit := b.limits.MaxBodyBytes
	if r.ContentLength > limit {
		return refusedWith(http.StatusRequestEntityTooLarge, errTooLarge(limit))
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
		return refusedWith(http.StatusRequestEntityTooLarge, errTooLarge(limit))
	}
	if err == nil {
		return nil
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return refusedWith(http.StatusRequestTimeout, errBodyTimeout(b.limits.ReadTimeout))
	}
	return refusedWith(http.StatusBadRequest, a2a.ErrInvalidRequest("the request body could not be read"))
}

// checkJSON refuses a body nested deeper than Limits.MaxJSONDepth,
// holding more values than its size allows (valueBudget: HTTP 413, as a
// body over the size limit) or not valid UTF-8, before any decoder looks
// at it.
func (b *httpBinding) checkJSON(body []byte) *Refusal {
	deep, tooMany := scanJSON(body, b.limits.MaxJSONDepth)
	if deep {
		return refusal(errTooDeep(b.limits.MaxJSONDepth))
	}
	if tooMany > 0 {
		return refusedWith(http.StatusRequestEntityTooLarge, errTooManyValues(tooMany, len(body)))
	}
	if !utf8.Valid(body) {
		return refusal(a2a.ErrParse("the body is not valid UTF-8, which JSON requires"))
	}
	return nil
}

// writeBody writes a JSON answer and counts it. Its writing is bounded by
// the write deadline trackingWriter set as the response started.
func (b *httpBinding) writeBody(w http.ResponseWriter, c *Call, ctype []string, body []byte) {
	setJSONHeaders(w.Header(), len(body))
	if ctype != nil {
		w.Header()["Content-Type"] = ctype
	}
	w.WriteHeader(http.StatusOK)
	n, _ := w.Write(body)
	c.BytesOut += int64(n)
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

// hostOf returns the host part of a "host:port" address.
func hostOf(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

// remoteAddr returns the host part of the TCP peer address.
func remoteAddr(r *http.Request) string { return hostOf(r.RemoteAddr) }

// scope returns the task scope of a caller: its own tasks, or every task
// for a local caller.
func scope(id security.Identity) string {
	if id.Tier == security.TierLocal {
		return ""
	}
	return id.ID
}
