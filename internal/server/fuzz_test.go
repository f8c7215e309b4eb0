package server

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2atest"
	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2av03"
)

// fuzzSeeds are request bodies that reach every branch of the endpoint.
var fuzzSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`,
	`{"jsonrpc":"2.0","id":"s","method":"SendStreamingMessage","params":{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`,
	`{"jsonrpc":"2.0","id":2,"method":"message/send","params":{"message":{"kind":"message","messageId":"m3","role":"user","parts":[{"kind":"text","text":"hi"}]},"configuration":{"blocking":true}}}`,
	`{"jsonrpc":"2.0","id":3,"method":"message/stream","params":{"message":{"kind":"message","messageId":"m4","role":"user","parts":[{"kind":"file","file":{"bytes":"aGk=","mimeType":"text/plain"}}]}}}`,
	`{"jsonrpc":"2.0","id":4,"method":"GetTask","params":{"id":"t","historyLength":2}}`,
	`{"jsonrpc":"2.0","id":5,"method":"ListTasks","params":{"page_size":3,"status":"TASK_STATE_COMPLETED","includeArtifacts":true}}`,
	`{"jsonrpc":"2.0","id":6,"method":"CancelTask","params":{"id":"t"}}`,
	`{"jsonrpc":"2.0","id":7,"method":"SubscribeToTask","params":{"id":"t"}}`,
	`{"jsonrpc":"2.0","id":8,"method":"CreateTaskPushNotificationConfig","params":{"taskId":"t","url":"https://x.example/h"}}`,
	`{"jsonrpc":"2.0","id":9,"method":"tasks/pushNotificationConfig/list","params":{"id":"t"}}`,
	`{"jsonrpc":"2.0","id":10,"method":"GetExtendedAgentCard"}`,
	`{"jsonrpc":"2.0","method":"SendMessage","params":{}}`,
	`[{"jsonrpc":"2.0","id":1,"method":"ListTasks"}]`,
	`{"jsonrpc":"2.0","id":{},"method":"ListTasks"}`,
	`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}]}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"\u0000","taskId":"\ud800","role":"ROLE_USER","parts":[{"raw":"!!"}]}}}`,
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"GetTask\",\"params\":{\"id\":\"\xff\"}}",
	`{"jsonrpc":"2.0","id":1e400,"method":"GetTask"}`,
	``,
	`null`,
	`"\\`,
}

// FuzzJSONRPCHandler sends random bodies, versions and content types
// through the whole handler: it must never panic, and must always answer
// with a well-formed JSON-RPC response (JSON or SSE) or one of the
// documented HTTP refusals.
func FuzzJSONRPCHandler(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), "1.0", "application/json")
	}
	f.Add([]byte(fuzzSeeds[0]), "", "text/plain")
	f.Add([]byte(fuzzSeeds[2]), "0.3", "application/a2a+json; charset=utf-8")
	f.Add([]byte(fuzzSeeds[4]), "99", "")
	srv, _ := newInstantServer(f, func(o *Options) {
		o.Limits.MaxBodyBytes = 64 << 10
		o.Limits.MaxParts = 8
	})
	h := srv.Handler()
	f.Fuzz(func(t *testing.T, body []byte, version, contentType string) {
		req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		req.RemoteAddr = "127.0.0.1:4242"
		req.Host = "127.0.0.1:41241" // a loopback caller names a loopback host
		if version != "" && validHeaderValue(version) {
			req.Header.Set("A2A-Version", version)
		}
		if contentType != "" && validHeaderValue(contentType) {
			req.Header.Set("Content-Type", contentType)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		out := rec.Body.Bytes()
		switch rec.Code {
		case http.StatusNoContent:
			if len(out) != 0 {
				t.Fatalf("204 with a body: %q", out)
			}
			return
		case http.StatusOK, http.StatusRequestEntityTooLarge, http.StatusBadRequest, http.StatusRequestTimeout:
		default:
			t.Fatalf("undocumented HTTP status %d: %s", rec.Code, out)
		}
		if strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream") {
			a2atest.ValidateSSE(t, out, "")
			return
		}
		if _, err := a2atest.CheckJSONRPCResponse(out, ""); err != nil {
			// A 0.3 method's errors have the 0.3 shape once the method
			// is known.
			if req, _ := a2a.ParseRequest(body); req != nil {
				if _, v03 := a2av03.LookupMethod(req.Method); v03 {
					if _, err03 := a2atest.CheckJSONRPCResponseV03(out); err03 == nil {
						return
					}
				}
			}
			t.Fatalf("HTTP %d: %v\nbody %q\nresponse %s", rec.Code, err, body, out)
		}
	})
}

// validHeaderValue keeps the fuzzer to values net/http could receive.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}
