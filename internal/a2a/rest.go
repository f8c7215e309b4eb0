package a2a

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// The routes of the HTTP+JSON binding, in one table for the client that
// calls them (RESTRequest), the server that serves them (MatchREST) and
// the tests of both. They follow the proto's HTTP annotations (gRPC
// transcoding): path parameters name request fields, a POST route's body
// is the request without them, a GET or DELETE route's other fields are
// query parameters; every route may be prefixed by /{tenant}.

// RESTRoute is one route of the HTTP+JSON binding.
type RESTRoute struct {
	Method string
	// Pattern is the path: literal segments, {field} for a path parameter
	// (a request field), {field}:verb for a parameter with a custom verb.
	Pattern string
	Op      Operation
}

// RESTRoutes are the binding's routes. A path is matched against the
// patterns in this order, so the custom verbs come before /tasks/{id}; the
// methods of one pattern are listed in this order in an Allow header.
var RESTRoutes = []RESTRoute{
	{http.MethodPost, "/message:send", OpSendMessage},
	{http.MethodPost, "/message:stream", OpSendStreamingMessage},
	{http.MethodPost, "/tasks/{id}:cancel", OpCancelTask},
	{http.MethodGet, "/tasks/{id}:subscribe", OpSubscribeToTask},
	{http.MethodPost, "/tasks/{id}:subscribe", OpSubscribeToTask},
	{http.MethodGet, "/tasks/{id}", OpGetTask},
	{http.MethodGet, "/tasks", OpListTasks},
	{http.MethodPost, "/tasks/{taskId}/pushNotificationConfigs", OpCreatePushConfig},
	{http.MethodGet, "/tasks/{taskId}/pushNotificationConfigs", OpListPushConfigs},
	{http.MethodGet, "/tasks/{taskId}/pushNotificationConfigs/{id}", OpGetPushConfig},
	{http.MethodDelete, "/tasks/{taskId}/pushNotificationConfigs/{id}", OpDeletePushConfig},
	{http.MethodGet, "/extendedAgentCard", OpGetExtendedCard},
}

// restCallMethod is the method RESTRequest uses for an operation with two
// routes: SubscribeToTask is GET in the proto and POST in the
// specification's text; servers of both official SDKs, and ours, accept
// POST.
var restCallMethod = map[Operation]string{OpSubscribeToTask: http.MethodPost}

// RESTRoutesText lists the routes for error messages: "POST /message:send,
// …, GET or DELETE /tasks/{taskId}/pushNotificationConfigs/{id}, …".
func RESTRoutesText() string {
	var patterns []string
	methods := map[string][]string{}
	for _, r := range RESTRoutes {
		if _, ok := methods[r.Pattern]; !ok {
			patterns = append(patterns, r.Pattern)
		}
		methods[r.Pattern] = append(methods[r.Pattern], r.Method)
	}
	out := make([]string, len(patterns))
	for i, p := range patterns {
		out[i] = strings.Join(methods[p], " or ") + " " + p
	}
	return strings.Join(out, ", ") + " (each optionally under /{tenant})"
}

// RESTCall is an operation as an HTTP+JSON request: the route's method,
// the path (ids escaped, under /{tenant} when the request names one), the
// query and the JSON body (nil for none).
type RESTCall struct {
	Method string
	Path   string
	Query  url.Values
	Body   []byte
}

// URL is the call's path and query under base (an interface URL).
func (c RESTCall) URL(base string) string {
	u := strings.TrimRight(base, "/") + c.Path
	if len(c.Query) > 0 {
		u += "?" + c.Query.Encode()
	}
	return u
}

// RESTRequest maps an operation and its v1.0 request (a pointer to the
// operation's request type, as DecodeParams returns it) to its HTTP+JSON
// request: the path parameters are taken from the request's fields, and
// the other fields go to the body (POST) or the query (GET, DELETE).
func RESTRequest(op Operation, req any) (RESTCall, error) {
	var route *RESTRoute
	for i := range RESTRoutes {
		r := &RESTRoutes[i]
		if r.Op == op && (restCallMethod[op] == "" || restCallMethod[op] == r.Method) {
			route = r
			break
		}
	}
	if route == nil {
		return RESTCall{}, fmt.Errorf("%v has no HTTP+JSON route", op)
	}
	fields := map[string]json.RawMessage{}
	var whole []byte // the request as Marshal wrote it
	if req != nil {
		b, err := Marshal(req)
		if err != nil {
			return RESTCall{}, fmt.Errorf("encoding the %v request: %w", op, err)
		}
		whole = b
		if err := json.Unmarshal(b, &fields); err != nil {
			return RESTCall{}, fmt.Errorf("the %v request (%T) is not a JSON object: %w", op, req, err)
		}
	}
	str := func(field string) string {
		var s string
		_ = json.Unmarshal(fields[field], &s)
		delete(fields, field)
		return s
	}
	call := RESTCall{Method: route.Method}
	if t := str("tenant"); t != "" {
		call.Path = "/" + url.PathEscape(t)
	}
	for _, seg := range strings.Split(strings.TrimPrefix(route.Pattern, "/"), "/") {
		call.Path += "/"
		name, verb, param := pathParamOf(seg)
		if !param {
			call.Path += seg
			continue
		}
		v := str(name)
		if v == "" {
			return RESTCall{}, fmt.Errorf("the %v request has no %s for the path %s", op, name, route.Pattern)
		}
		call.Path += url.PathEscape(v)
		if verb != "" {
			call.Path += ":" + verb
		}
	}
	if len(fields) == 0 {
		return call, nil
	}
	if route.Method == http.MethodPost {
		if !strings.Contains(route.Pattern, "{") && call.Path == route.Pattern {
			call.Body = whole // nothing went to the path: the request as it is
			return call, nil
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(fields); err != nil {
			return RESTCall{}, err
		}
		call.Body = bytes.TrimSpace(buf.Bytes())
		return call, nil
	}
	call.Query = url.Values{}
	for k, raw := range fields {
		switch raw[0] {
		case '"':
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return RESTCall{}, err
			}
			call.Query.Set(k, s)
		case '{', '[':
			return RESTCall{}, fmt.Errorf("the %v request's %s cannot be a query parameter of %s %s", op, k, route.Method, route.Pattern)
		default: // numbers and booleans as written
			call.Query.Set(k, string(raw))
		}
	}
	return call, nil
}

// pathParamOf reads a pattern segment: "{id}:cancel" is the parameter id
// with the verb cancel; a literal segment is no parameter.
func pathParamOf(seg string) (name, verb string, param bool) {
	if !strings.HasPrefix(seg, "{") {
		return "", "", false
	}
	name, rest, _ := strings.Cut(seg[1:], "}")
	return name, strings.TrimPrefix(rest, ":"), true
}

// RESTMatch is a request matched to a route.
type RESTMatch struct {
	// Op is the route's operation; 0 when the path is a route but not for
	// the method (see MatchREST).
	Op Operation
	// Tenant is the optional /{tenant} prefix.
	Tenant string
	// Path holds the path parameters, by request field ("id", "taskId"),
	// unescaped.
	Path []PathParam
	// HasBody says the route takes a JSON body (POST routes).
	HasBody bool
}

// PathParam is one path parameter: the request field it fills and its
// (unescaped) value.
type PathParam struct{ Field, Value string }

// MatchREST resolves an HTTP method and escaped path to a route. When the
// path is a route but not for this method, Op is 0 and allow lists the
// methods it takes ("GET, POST"); when it is no route at all, found is
// false. Custom verbs are matched on the escaped segment, so an id holding
// an escaped colon stays an id; a parameter must not be empty.
func MatchREST(method, escapedPath string) (m RESTMatch, allow string, found bool) {
	p := strings.TrimPrefix(escapedPath, "/")
	if len(p) > 1 {
		p = strings.TrimSuffix(p, "/")
	}
	segs := strings.Split(p, "/")
	if m, allow, found = matchSegments(method, segs); found || len(segs) < 2 {
		return m, allow, found
	}
	// An optional /{tenant} prefix.
	tenant, err := url.PathUnescape(segs[0])
	if err != nil || tenant == "" {
		return RESTMatch{}, "", false
	}
	m, allow, found = matchSegments(method, segs[1:])
	m.Tenant = tenant
	return m, allow, found
}

// matchSegments matches the path segments (still escaped) of a path
// without tenant against RESTRoutes: the first pattern that fits decides,
// so /tasks/{id}:cancel is tried before /tasks/{id}.
func matchSegments(method string, segs []string) (RESTMatch, string, bool) {
	var (
		pattern string
		params  []PathParam
		methods []string
	)
	for _, r := range RESTRoutes {
		if pattern != "" && r.Pattern != pattern {
			continue
		}
		if pattern == "" {
			ps, ok := matchPattern(r.Pattern, segs)
			if !ok {
				continue
			}
			pattern, params = r.Pattern, ps
		}
		if r.Method == method {
			return RESTMatch{Op: r.Op, Path: params, HasBody: method == http.MethodPost}, "", true
		}
		methods = append(methods, r.Method)
	}
	if pattern == "" {
		return RESTMatch{}, "", false
	}
	return RESTMatch{}, strings.Join(methods, ", "), true
}

// matchPattern matches escaped path segments against a route pattern.
func matchPattern(pattern string, segs []string) ([]PathParam, bool) {
	want := strings.Split(strings.TrimPrefix(pattern, "/"), "/")
	if len(want) != len(segs) {
		return nil, false
	}
	var params []PathParam
	for i, w := range want {
		name, verb, param := pathParamOf(w)
		if !param {
			if segs[i] != w {
				return nil, false
			}
			continue
		}
		seg := segs[i]
		if verb != "" {
			var ok bool
			if seg, ok = strings.CutSuffix(seg, ":"+verb); !ok {
				return nil, false
			}
		}
		v, err := url.PathUnescape(seg)
		if err != nil || v == "" {
			return nil, false
		}
		params = append(params, PathParam{name, v})
	}
	return params, true
}
