package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2atest"
)

// FuzzRESTHandler sends random methods, paths (with queries) and bodies
// through the whole handler: it must never panic, and must answer with a
// documented status and either a bare result, an SSE stream of bare
// StreamResponses (and at most a final error event), or a google.rpc.Status
// error whose code is the HTTP status.
func FuzzRESTHandler(f *testing.F) {
	send := `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`
	for _, s := range []struct{ method, target, body string }{
		{"POST", "/message:send", send},
		{"POST", "/message:stream", send},
		{"POST", "/acme/message:send", `{"message":{"messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]},"configuration":{"returnImmediately":true}}`},
		{"GET", "/tasks/t1?historyLength=2", ""},
		{"GET", "/tasks?pageSize=3&status=TASK_STATE_COMPLETED&includeArtifacts=true&statusTimestampAfter=2026-01-01T00:00:00Z", ""},
		{"GET", "/tasks?page_size=x&include_artifacts=maybe&lastUpdatedAfter=now", ""},
		{"POST", "/tasks/t1:cancel", `{"id":"t2"}`},
		{"GET", "/tasks/t1:subscribe", ""},
		{"POST", "/tasks/t%2F1:subscribe", ""},
		{"POST", "/tasks/t1/pushNotificationConfigs", `{"url":"https://x.example/h","taskId":"t1"}`},
		{"GET", "/tasks/t1/pushNotificationConfigs/c1", ""},
		{"DELETE", "/tasks/t1/pushNotificationConfigs/c1", ""},
		{"GET", "/extendedAgentCard", ""},
		{"PUT", "/tasks", ""},
		{"GET", "/%zz/tasks", ""},
		{"POST", "/message:send", `[1]`},
		{"POST", "/message:send", `{"message":` + strings.Repeat("[", 100)},
		{"POST", "/message:send", "{\"x\":\"\xff\"}"},
	} {
		f.Add(s.method, s.target, []byte(s.body))
	}
	srv, _ := newInstantServer(f, func(o *Options) {
		o.Limits.MaxBodyBytes = 64 << 10
		o.Limits.MaxParts = 8
	})
	h := srv.Handler()
	f.Fuzz(func(t *testing.T, method, target string, body []byte) {
		if !validHeaderValue(method) || method == "" || strings.ContainsAny(method, " \t()<>@,;:\\\"/[]?={}") ||
			!strings.HasPrefix(target, "/") || strings.ContainsAny(target, " \t\r\n#") || strings.HasPrefix(target, "//") {
			return // not something net/http would hand to a handler
		}
		var req *http.Request
		func() {
			defer func() { _ = recover() }() // httptest.NewRequest panics on targets net/http would refuse
			req = httptest.NewRequest(method, target, bytes.NewReader(body))
		}()
		if req == nil || req.URL.Path == "" {
			return
		}
		req.RemoteAddr = "127.0.0.1:4242"
		req.Host = "127.0.0.1:41241" // a loopback caller names a loopback host
		req.Header.Set("A2A-Version", "1.0")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		out := rec.Body.Bytes()
		ct := rec.Header().Get("Content-Type")
		switch {
		case strings.HasPrefix(ct, "text/event-stream"):
			if rec.Code != http.StatusOK {
				t.Fatalf("a stream with HTTP %d", rec.Code)
			}
			checkRESTSSE(t, out)
			return
		case ct == "application/json" && (req.URL.Path == "/" || req.URL.Path == "/a2a" || req.URL.Path == "/rpc") && method == http.MethodPost:
			return // the JSON-RPC endpoint, fuzzed by FuzzJSONRPCHandler
		case rec.Code == http.StatusMovedPermanently || rec.Code == http.StatusTemporaryRedirect || rec.Code == http.StatusPermanentRedirect:
			return // net/http cleaning the path
		case strings.HasPrefix(req.URL.Path, "/.well-known/") || req.URL.Path == "/healthz":
			return // not A2A operations
		}
		if ct != "application/a2a+json" {
			t.Fatalf("HTTP %d Content-Type %q: %s", rec.Code, ct, out)
		}
		if rec.Code == http.StatusOK {
			if !json.Valid(out) {
				t.Fatalf("HTTP 200 with invalid JSON: %s", out)
			}
			return
		}
		switch rec.Code {
		case 400, 401, 403, 404, 405, 408, 413, 429, 500, 503:
		default:
			t.Fatalf("undocumented HTTP status %d: %s", rec.Code, out)
		}
		var w struct {
			Error *struct {
				Code    int               `json:"code"`
				Status  string            `json:"status"`
				Details []json.RawMessage `json:"details"`
			} `json:"error"`
		}
		if json.Unmarshal(out, &w) != nil || w.Error == nil || w.Error.Code != rec.Code || w.Error.Status == "" || len(w.Error.Details) == 0 {
			t.Fatalf("HTTP %d: not a google.rpc.Status body: %s", rec.Code, out)
		}
	})
}

// checkRESTSSE checks an HTTP+JSON event stream: bare StreamResponses,
// then at most one "error" event holding a google.rpc.Status.
func checkRESTSSE(t *testing.T, body []byte) {
	t.Helper()
	r := a2a.NewSSEReader(bytes.NewReader(body), 0)
	ended := false
	for {
		data, err := r.Next()
		if err != nil {
			return
		}
		if ended {
			t.Fatalf("an event after the error event: %s", data)
		}
		if r.Event() == "error" {
			ended = true
			if statusOf(data) == "" {
				t.Fatalf("error event without a google.rpc.Status: %s", data)
			}
			continue
		}
		if err := a2atest.CheckJSON("Stream Response", data); err != nil {
			t.Fatalf("%v: %s", err, data)
		}
	}
}

// statusOf returns the status name of a google.rpc.Status body, or "".
func statusOf(b []byte) string {
	var w struct {
		Error struct {
			Status string `json:"status"`
		} `json:"error"`
	}
	_ = json.Unmarshal(b, &w)
	return w.Error.Status
}
