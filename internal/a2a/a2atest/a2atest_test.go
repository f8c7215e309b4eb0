package a2atest

import (
	"strings"
	"testing"
)

func TestEveryDefinitionCompiles(t *testing.T) {
	names, err := Definitions()
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 40 {
		t.Fatalf("only %d definitions", len(names))
	}
	for _, n := range names {
		if _, err := schema(n); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
}

func TestCheckJSONAcceptsValidAndRejectsInvalid(t *testing.T) {
	cases := []struct {
		name, def, doc string
		wantErr        string
	}{
		{"minimal task", "Task", `{"id":"t1","status":{"state":"TASK_STATE_WORKING"}}`, ""},
		{"unknown key", "Task", `{"id":"t1","status":{"state":"TASK_STATE_WORKING"},"bogus":1}`, "validate"},
		{"bad enum", "Task", `{"id":"t1","status":{"state":"working"}}`, "validate"},
		{"integer enum", "Task", `{"id":"t1","status":{"state":2}}`, "enum"},
		{"snake case", "Task", `{"id":"t1","context_id":"c","status":{"state":"TASK_STATE_WORKING"}}`, "snake_case"},
		{"kind", "Message", `{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}],"kind":"message"}`, "validate"},
		{"bad timestamp", "Task", `{"id":"t1","status":{"state":"TASK_STATE_WORKING","timestamp":"yesterday"}}`, "validate"},
		{"user metadata keeps snake case", "Task", `{"id":"t1","status":{"state":"TASK_STATE_WORKING"},"metadata":{"my_key":{"kind":1}}}`, ""},
		{"url-safe raw", "Part", `{"raw":"-_-_"}`, "validate"},
		{"unknown definition", "Nope", `{}`, "no definition"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckJSON(c.def, []byte(c.doc))
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("error = %v, want one mentioning %q", err, c.wantErr)
			}
		})
	}
}

func TestCheckJSONRPCResponseEnvelope(t *testing.T) {
	info := `{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":{"taskId":"t"}}`
	cases := []struct {
		name, doc, def string
		ok             bool
	}{
		{"result", `{"jsonrpc":"2.0","id":1,"result":{"id":"t","status":{"state":"TASK_STATE_COMPLETED"}}}`, "Task", true},
		{"string id", `{"jsonrpc":"2.0","id":"a","result":null}`, "", true},
		{"null id error", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x","data":[` + info + `]}}`, "", true},
		{"both", `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`, "", false},
		{"neither", `{"jsonrpc":"2.0","id":1}`, "", false},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"result":{}}`, "", false},
		{"no id", `{"jsonrpc":"2.0","result":{}}`, "", false},
		{"extra error member", `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"x","data":[` + info + `],"extra":1}}`, "", false},
		{"free-form data", `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"x","data":{"a":1}}}`, "", false},
		{"no error info", `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"x","data":[{"@type":"x"}]}}`, "", false},
		{"invalid result", `{"jsonrpc":"2.0","id":1,"result":{"id":"t","status":{"state":"done"}}}`, "Task", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := CheckJSONRPCResponse([]byte(c.doc), c.def)
			if (err == nil) != c.ok {
				t.Fatalf("ok=%v, err=%v", c.ok, err)
			}
		})
	}
}

func TestNormalizeKeepsWhatDiffersAndHidesWhatMayDiffer(t *testing.T) {
	const a, b = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
	run1 := `{"task":{"id":"` + a + `","contextId":"` + b + `","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-01-01T00:00:00Z"}},"nextPageToken":"abc"}`
	run2 := `{"nextPageToken":"xyz","task":{"contextId":"` + a + `","id":"` + b + `","status":{"timestamp":"2027-02-02T00:00:00Z","state":"TASK_STATE_COMPLETED"}}}`
	if n1, n2 := Normalize(t, []byte(run1)), Normalize(t, []byte(run2)); n1 != n2 {
		t.Fatalf("same shape with other ids, times and tokens:\n%s\n%s", n1, n2)
	}
	same := `{"task":{"id":"` + a + `","contextId":"` + a + `"}}`
	other := `{"task":{"id":"` + a + `","contextId":"` + b + `"}}`
	if Normalize(t, []byte(same)) == Normalize(t, []byte(other)) {
		t.Fatal("one id used twice normalizes like two ids")
	}
	if Normalize(t, []byte(`{"state":"TASK_STATE_COMPLETED"}`)) == Normalize(t, []byte(`{"state":"TASK_STATE_FAILED"}`)) {
		t.Fatal("different states normalize alike")
	}
	if got := ReplaceIDs("task " + a + " not found"); got != "task <id> not found" {
		t.Fatalf("ReplaceIDs = %q", got)
	}
}
