package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// The HTTP+JSON (REST) binding. It is a second encoder over the same
// pipeline as the JSON-RPC binding: serveREST finds the operation from the
// route instead of the method name, builds the request object from the
// path, the query and the body, and then runs exactly the steps serveRPC
// runs (admit, checkJSON, version, authorize, a2a.DecodeParams, dispatch).
// Only the encoding differs: bare results, google.rpc.Status errors with
// the HTTP status of the specification's mapping, SSE events holding the
// bare StreamResponse. See doc.go for the routes and the decisions.

// restRoutes names the routes of the HTTP+JSON binding, for error messages.
var restRoutes = a2a.RESTRoutesText()

// Response media types of the HTTP+JSON binding.
var (
	valA2AJSON = []string{"application/a2a+json"}
)

// restBinding is the HTTP+JSON binding (see the routes in doc.go).
type restBinding struct{ httpBinding }

// ServeHTTP serves the HTTP+JSON binding. Paths that are no route answer
// 404 (or 405 for a route used with the wrong HTTP method) before
// authentication, as unknown paths always did; everything else is an
// exchange with the JSON-RPC binding's steps in the same order:
// authentication, rate limit, body size, Content-Type, nesting depth,
// UTF-8, version, extensions, capability, permission, params, operation.
func (b *restBinding) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt, allow := matchREST(r.Method, r.URL.EscapedPath())
	if rt.Op == 0 {
		restRouteMiss(w, r, allow)
		return
	}
	ctype := restContentType(r)
	peer := b.peer(r, a2a.BindingHTTPJSON)
	if rt.Tenant != "" {
		if peer.Tenant != "" {
			// /agents/{id}/{tenant}/…: one agent per path.
			restRouteMiss(w, r, "")
			return
		}
		peer.Tenant = rt.Tenant
	}
	ctx, c, err := b.h.Admit(r.Context(), peer)
	defer b.h.Finish(c)
	if err != nil {
		b.refuse(w, c, ctype, RefusalOf(err))
		return
	}
	// Named only once admitted, as a JSON-RPC method is only read then:
	// both bindings leave the same audit record.
	c.Op, c.Method = rt.Op, rt.Op.String()
	var body []byte
	if rt.HasBody {
		buf := pooledBody()
		defer releaseBody(buf)
		if rf := b.readBody(r, buf); rf != nil {
			b.refuse(w, c, ctype, rf)
			return
		}
		body = buf.Bytes()
		c.BytesIn = int64(len(body))
		if len(body) > 0 {
			if ct := headerValue(r.Header, "Content-Type"); ct != "" && !isJSONContentType(ct) {
				e := a2a.ErrContentTypeNotSupported(ct)
				e.Message = fmt.Sprintf("Content-Type %q is not supported: send HTTP+JSON request bodies as application/a2a+json or application/json", ct)
				b.refuse(w, c, ctype, refusal(e))
				return
			}
			if r := b.checkJSON(body); r != nil {
				b.refuse(w, c, ctype, r)
				return
			}
		}
	}
	err = b.h.Authorize(ctx, c)
	echoExtensions(w, c)
	if err != nil {
		b.refuse(w, c, ctype, RefusalOf(err))
		return
	}
	var query url.Values
	if !rt.HasBody && r.URL.RawQuery != "" {
		query = r.URL.Query()
	}
	params, e := restParams(&rt, query, body)
	if e != nil {
		b.refuse(w, c, ctype, refusal(e))
		return
	}
	res, st, err := invoke(ctx, b.h, c, params)
	switch {
	case err != nil:
		b.refuse(w, c, ctype, RefusalOf(err))
	case st != nil:
		b.stream(ctx, w, st, &sseSink{b: &b.httpBinding, c: c, rest: true})
	default:
		if c.Op == a2a.OpDeletePushConfig {
			res = emptyObject
		}
		out, encErr := a2a.Marshal(res)
		if encErr != nil {
			b.log.Error("encoding a response failed", c.logArgs("error", encErr)...)
			b.refuse(w, c, ctype, refusal(errInternal()))
			return
		}
		b.writeBody(w, c, ctype, out)
	}
}

// refuse answers with a google.rpc.Status error and records it.
func (b *restBinding) refuse(w http.ResponseWriter, c *Call, ctype []string, r *Refusal) {
	c.Refused(r)
	refusalHeaders(w, r)
	c.BytesOut += int64(writeStatusError(w, ctype, r.Status, r.Err))
}

// matchREST resolves an HTTP method and escaped path to a route
// (a2a.MatchREST). When the path is a route but not for this method, Op is
// 0 and allow lists the methods it takes; the JSON-RPC endpoint's paths
// take POST; any other path is no route and both are zero.
func matchREST(method, escapedPath string) (a2a.RESTMatch, string) {
	rt, allow, found := a2a.MatchREST(method, escapedPath)
	if !found {
		switch escapedPath {
		case "/", "/a2a", "/rpc": // the JSON-RPC endpoint
			return a2a.RESTMatch{}, http.MethodPost
		}
		return a2a.RESTMatch{}, ""
	}
	return rt, allow
}

// restRouteMiss answers a path that is no route (404) or a route used with
// the wrong method (405, with Allow).
func restRouteMiss(w http.ResponseWriter, r *http.Request, allow string) {
	e := a2a.ErrMethodNotFound(r.Method + " " + r.URL.Path)
	status := http.StatusNotFound
	if allow != "" {
		status = http.StatusMethodNotAllowed
		w.Header().Set("Allow", allow)
		e.Message = fmt.Sprintf("%s is not served at %s: use %s", r.Method, r.URL.Path, allow)
	} else {
		e.Message = fmt.Sprintf("No A2A route %s %s: the HTTP+JSON routes are %s; the JSON-RPC endpoint is POST /", r.Method, r.URL.Path, restRoutes)
	}
	writeStatusError(w, restContentType(r), status, e)
}

// restParams builds the request of rt's operation from the path
// parameters, the query (GET and DELETE routes) or the JSON body (POST
// routes), and decodes and validates it with a2a.DecodeParams, the
// JSON-RPC binding's decoder: both bindings accept the same requests and
// refuse them with the same errors. Query values are JSON strings, which
// the decoder reads as numbers, enums and timestamps where the field
// wants one; booleans are converted here.
func restParams(rt *a2a.RESTMatch, query url.Values, body []byte) (any, *a2a.Error) {
	if len(bytes.TrimSpace(body)) > 0 {
		if !json.Valid(body) {
			e := a2a.ErrParse("")
			e.Message = "Parse error: the request body is not valid JSON; send the request as a JSON object"
			return nil, e
		}
		if bytes.TrimSpace(body)[0] != '{' {
			return nil, a2a.ErrInvalidRequest("the request body must be a JSON object holding the request's fields (or be empty where the route takes no fields)")
		}
	}
	if len(rt.Path) == 0 && len(query) == 0 {
		return a2a.DecodeParams(rt.Op, body) // the body is the whole request
	}
	obj := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(body)) > 0 {
		if err := json.Unmarshal(body, &obj); err != nil {
			return nil, a2a.ErrInvalidRequest("the request body must be a JSON object: " + err.Error())
		}
	}
	for key, vs := range query {
		if len(vs) == 0 || key == a2a.HeaderVersion {
			continue
		}
		v := vs[0]
		switch key {
		case "lastUpdatedAfter": // the official Go SDK v2.4.0's name for statusTimestampAfter
			if _, ok := query["statusTimestampAfter"]; ok {
				continue
			}
			key = "statusTimestampAfter"
		}
		switch key {
		case "includeArtifacts", "include_artifacts":
			if b, err := strconv.ParseBool(v); err == nil {
				obj[key] = json.RawMessage(strconv.FormatBool(b))
				continue
			}
		}
		obj[key] = jsonString(v)
	}
	for _, p := range rt.Path {
		// The path wins; a body or query value that says otherwise is an
		// error rather than silently ignored.
		for _, k := range []string{p.Field, snakeCase(p.Field)} {
			raw, ok := obj[k]
			if !ok {
				continue
			}
			var v string
			if json.Unmarshal(raw, &v) == nil && v != "" && v != p.Value {
				return nil, a2a.ErrInvalidParams(p.Field, fmt.Sprintf(
					"is %q in the request but %q in the URL path; leave it out of the body and query, or make them agree", v, p.Value))
			}
			delete(obj, k)
		}
		obj[p.Field] = jsonString(p.Value)
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, a2a.ErrInvalidRequest("the request could not be assembled: " + err.Error())
	}
	return a2a.DecodeParams(rt.Op, raw)
}

// jsonString encodes s as a JSON string.
func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// snakeCase is the snake_case spelling of a camelCase field name, which
// the decoder also accepts.
func snakeCase(s string) string {
	var b strings.Builder
	for _, c := range s {
		if c >= 'A' && c <= 'Z' {
			b.WriteByte('_')
			c += 'a' - 'A'
		}
		b.WriteRune(c)
	}
	return b.String()
}

// restContentType picks the media type of the HTTP+JSON binding's JSON
// answers: application/a2a+json, as the specification asks, unless the
// client's Accept names application/json (or only text/event-stream)
// without application/a2a+json — some clients, such as the official Go SDK
// v2.4.0, read error bodies only under application/json. The bytes are the
// same either way.
func restContentType(r *http.Request) []string {
	accept := r.Header.Values("Accept")
	if len(accept) == 0 {
		return valA2AJSON
	}
	a2aOK, other := false, false
	for _, v := range accept {
		for _, part := range strings.Split(v, ",") {
			mt, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(mt)) {
			case "application/a2a+json", "*/*", "application/*":
				a2aOK = true
			case "application/json", "text/event-stream":
				other = true
			}
		}
	}
	if !a2aOK && other {
		return valJSON
	}
	return valA2AJSON
}

// restStatus is the google.rpc.Status form of e for the HTTP+JSON binding.
// status is the JSON-RPC binding's HTTP status for the same refusal: an
// HTTP-level refusal (401, 408, 413, 429, 503, …) keeps it; a protocol
// error (200 there) gets the specification's mapping (a2a.HTTPStatus),
// except that an operation the caller's tier may not use is 403 and a
// stream cut by shutdown 503.
func restStatus(status int, e *a2a.Error) a2a.Status {
	st := e.Status()
	switch {
	case status != http.StatusOK:
		st.Code = status
	case e.Reason == reasonUnauthorized:
		st.Code = http.StatusForbidden
	case e.Reason == reasonUnavailable: // a stream cut by shutdown
		st.Code = http.StatusServiceUnavailable
	}
	switch st.Code {
	case http.StatusUnauthorized:
		st.Status = "UNAUTHENTICATED"
	case http.StatusForbidden:
		st.Status = "PERMISSION_DENIED"
	case http.StatusRequestTimeout:
		st.Status = "DEADLINE_EXCEEDED"
	case http.StatusTooManyRequests:
		st.Status = "RESOURCE_EXHAUSTED"
	case http.StatusServiceUnavailable:
		st.Status = "UNAVAILABLE"
	case http.StatusMethodNotAllowed:
		st.Status = "UNIMPLEMENTED"
	}
	return st
}

// statusBody encodes {"error": st}. Should a detail not encode, it is
// dropped (the ErrorInfo, made of strings, always encodes).
func statusBody(st a2a.Status) []byte {
	type body struct {
		Error a2a.Status `json:"error"`
	}
	b, err := a2a.Marshal(body{st})
	if err != nil {
		if len(st.Details) > 0 {
			if _, ok := st.Details[0].(a2a.ErrorInfo); ok {
				st.Details = st.Details[:1]
			} else {
				st.Details = nil
			}
		}
		b, _ = a2a.Marshal(body{st})
	}
	return b
}

// writeStatusError writes an HTTP+JSON error response and returns the
// number of body bytes written.
func writeStatusError(w http.ResponseWriter, ctype []string, status int, e *a2a.Error) int {
	st := restStatus(status, e)
	b := statusBody(st)
	setJSONHeaders(w.Header(), len(b))
	w.Header()["Content-Type"] = ctype
	w.WriteHeader(st.Code)
	n, _ := w.Write(b)
	return n
}
