package a2atest

import (
	"strings"
	"testing"
)

func TestEveryDefinitionNamesAProtoMessage(t *testing.T) {
	names := Definitions()
	// The specification's JSON Schema bundle has 47 definitions: the 44
	// messages of lf.a2a.v1 and Struct, Value, Timestamp.
	if len(names) != 47 {
		t.Fatalf("%d definitions, want 47: %v", len(names), names)
	}
	for _, n := range names {
		if _, err := descriptor(n); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	// The names the tests use, and the bundle's own odd spellings.
	for _, n := range []string{"Task", "Message", "Artifact", "Part", "Stream Response", "Send Message Response",
		"Send Message Request", "List Tasks Response", "List Tasks Request", "Get Task Request", "Cancel Task Request",
		"Agent Card", "Task Push Notification Config", "List Task Push Notification Configs Response",
		"Authorization CodeO Auth Flow", "O Auth Flows", "HTTP Auth Security Scheme", "Timestamp", "Struct"} {
		if _, err := descriptor(n); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
}

// card is a v1.0 Agent Card with every required field; cases splice
// defects into it.
const card = `{"name":"A","description":"d","version":"1","supportedInterfaces":[{"url":"http://127.0.0.1:1/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],` +
	`"capabilities":{"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],` +
	`"skills":[{"id":"s","name":"S","description":"d","tags":["t"]}]` +
	`%s}`

func withCard(extra string) string { return strings.Replace(card, "%s", extra, 1) }

func TestCheckJSONAcceptsValidAndRejectsEachKindOfDefect(t *testing.T) {
	const msg = `{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}`
	cases := []struct {
		name, def, doc string
		wantErr        string // "" for a valid document
	}{
		// Valid documents.
		{"minimal task", "Task", `{"id":"t1","status":{"state":"TASK_STATE_WORKING"}}`, ""},
		{"full task", "Task", `{"id":"t1","contextId":"c","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-01-01T00:00:00Z","message":` + msg + `},` +
			`"artifacts":[{"artifactId":"a","parts":[{"raw":"AAEC+/8=","mediaType":"application/octet-stream"},{"data":{"k":[1,null]}},{"url":"http://x/y"}]}],"history":[` + msg + `],"metadata":{"n":1}}`, ""},
		{"message", "Message", msg, ""},
		{"agent card", "Agent Card", withCard(`,"securitySchemes":{"my_bearer":{"httpAuthSecurityScheme":{"scheme":"Bearer"}}},"securityRequirements":[{"schemes":{"my_bearer":{"list":[]}}}]`), ""},
		{"stream response status update", "Stream Response", `{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`, ""},
		{"send message response", "Send Message Response", `{"message":` + msg + `}`, ""},
		{"list tasks response, int64 as string", "List Tasks Response", `{"tasks":[],"nextPageToken":"","pageSize":50,"totalSize":"0"}`, ""},
		{"push config", "Task Push Notification Config", `{"taskId":"t","id":"c","url":"https://h/p","authentication":{"scheme":"Bearer"}}`, ""},
		{"user metadata keeps snake case and kind", "Task", `{"id":"t1","status":{"state":"TASK_STATE_WORKING"},"metadata":{"my_key":{"kind":1}}}`, ""},
		{"required empty list left out, as protojson does", "Agent Card", strings.Replace(withCard(""), `,"skills":[{"id":"s","name":"S","description":"d","tags":["t"]}]`, "", 1), ""},
		{"data part holds anything", "Part", `{"data":{"kind":"task","context_id":null}}`, ""},

		// Missing required fields (google.api.field_behavior = REQUIRED).
		{"task without status", "Task", `{"id":"t1"}`, `required field "status" is missing`},
		{"status without state", "Task", `{"id":"t1","status":{}}`, `.status: required field "state" is missing`},
		{"message without role", "Message", `{"messageId":"m","parts":[{"text":"x"}]}`, `required field "role" is missing`},
		{"card without capabilities", "Agent Card", strings.Replace(withCard(""), `"capabilities":{"streaming":true},`, "", 1), `required field "capabilities" is missing`},
		{"skill without name", "Agent Card", strings.Replace(withCard(""), `"name":"S",`, "", 1), `.skills[0]: required field "name" is missing`},
		{"list response without page size", "List Tasks Response", `{"tasks":[],"nextPageToken":"","totalSize":0}`, `required field "pageSize" is missing`},

		// Unknown and 0.3 keys.
		{"unknown key", "Task", `{"id":"t1","status":{"state":"TASK_STATE_WORKING"},"bogus":1}`, `.bogus: unknown key`},
		{"kind on a message", "Message", `{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}],"kind":"message"}`, "`kind` is a 0.3 key"},
		{"kind on a card", "Agent Card", withCard(`,"kind":"agent-card"`), "`kind` is a 0.3 key"},
		{"0.3 card url", "Agent Card", withCard(`,"url":"http://127.0.0.1:1/a2a","protocolVersion":"0.3.0"`), `.protocolVersion: unknown key`},
		{"0.3 part", "Part", `{"kind":"text","text":"x"}`, "`kind` is a 0.3 key"},

		// Enums.
		{"enum name that does not exist", "Task", `{"id":"t1","status":{"state":"working"}}`, `invalid value for enum`},
		{"enum as number", "Task", `{"id":"t1","status":{"state":2}}`, "enum must be emitted as its name string"},
		{"role as number", "Message", `{"messageId":"m","role":1,"parts":[{"text":"x"}]}`, "enum must be emitted as its name string"},

		// Types.
		{"string as number", "Task", `{"id":5,"status":{"state":"TASK_STATE_WORKING"}}`, `invalid value for string field id`},
		{"list as object", "Message", `{"messageId":"m","role":"ROLE_USER","parts":{"text":"x"}}`, ".parts: must be an array"},
		{"message as string", "Task", `{"id":"t1","status":"TASK_STATE_WORKING"}`, ".status: TaskStatus must be a JSON object"},
		{"null field", "Task", `{"id":"t1","contextId":null,"status":{"state":"TASK_STATE_WORKING"}}`, ".contextId: null"},
		{"bad timestamp", "Task", `{"id":"t1","status":{"state":"TASK_STATE_WORKING","timestamp":"yesterday"}}`, "invalid google.protobuf.Timestamp"},
		{"url-safe raw", "Part", `{"raw":"-_-_"}`, "standard base64"},
		{"not JSON", "Task", `{"id":`, "not valid JSON"},

		// camelCase.
		{"snake case", "Task", `{"id":"t1","context_id":"c","status":{"state":"TASK_STATE_WORKING"}}`, `.context_id: snake_case key (emit camelCase "contextId")`},
		{"snake case deep", "Agent Card", withCard(`,"security_schemes":{}`), `snake_case key`},

		// Oneofs.
		{"part with two contents", "Part", `{"text":"x","url":"http://x"}`, "oneof content must have exactly one"},
		{"part with no content", "Part", `{"mediaType":"text/plain"}`, "oneof content must have exactly one"},
		{"empty stream response", "Stream Response", `{}`, "oneof payload must have exactly one"},
		{"stream response with two payloads", "Stream Response", `{"message":` + msg + `,"task":{"id":"t","status":{"state":"TASK_STATE_WORKING"}}}`, "oneof payload"},

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
