package a2a

import (
	"testing"
	"unsafe"
)

func TestLookupMethodMapsEveryName(t *testing.T) {
	cases := []struct {
		name string
		op   Operation
	}{
		{"SendMessage", OpSendMessage},
		{"SendStreamingMessage", OpSendStreamingMessage},
		{"GetTask", OpGetTask},
		{"ListTasks", OpListTasks},
		{"CancelTask", OpCancelTask},
		{"SubscribeToTask", OpSubscribeToTask},
		{"CreateTaskPushNotificationConfig", OpCreatePushConfig},
		{"GetTaskPushNotificationConfig", OpGetPushConfig},
		{"ListTaskPushNotificationConfigs", OpListPushConfigs},
		{"DeleteTaskPushNotificationConfig", OpDeletePushConfig},
		{"GetExtendedAgentCard", OpGetExtendedCard},
		{"tasks/list", OpListTasks},
		{"tasks/subscribe", OpSubscribeToTask},
		{"tasks/pushNotificationConfig/create", OpCreatePushConfig},
		{"ListTaskPushNotificationConfig", OpListPushConfigs},
		{"SetTaskPushNotificationConfig", OpCreatePushConfig},
	}
	for _, c := range cases {
		op, ok := LookupMethod(c.name)
		if !ok || op != c.op {
			t.Errorf("LookupMethod(%q) = %v, %v; want %v", c.name, op, ok, c.op)
		}
	}
	// The 0.3 names are package a2av03's.
	for _, bad := range []string{"", "sendMessage", "tasks/send", "tasks/sendSubscribe", "message/Send", "message/send", "tasks/get"} {
		if _, ok := LookupMethod(bad); ok {
			t.Errorf("LookupMethod(%q) found", bad)
		}
	}
}

func TestOperationNames(t *testing.T) {
	for op := OpSendMessage; op <= OpGetExtendedCard; op++ {
		back, ok := LookupMethod(op.String())
		if !ok || back != op {
			t.Errorf("%v does not round trip", op)
		}
	}
	if Operation(0).String() != "Operation(0)" {
		t.Error("zero operation")
	}
	if !OpSubscribeToTask.Streaming() || !OpSendStreamingMessage.Streaming() || OpSendMessage.Streaming() {
		t.Error("Streaming()")
	}
}

func TestNegotiateVersion(t *testing.T) {
	cases := []struct {
		header string
		v03    bool
		want   string
		err    bool
	}{
		{"", true, "0.3", false},
		{"", false, "1.0", false},
		{"  ", false, "1.0", false},
		{"1.0", false, "1.0", false},
		{"1.0.3", false, "1.0", false},
		{" 1.0 ", true, "1.0", false},
		{"0.3", true, "0.3", false},
		{"0.3.0", false, "0.3", false},
		{"99.0", false, "", true},
		{"1.1", false, "", true},
		{"2.0", false, "", true},
		{"1", false, "", true},
		{"1.", false, "", true},
		{"v1.0", false, "", true},
		{"1.0.x", false, "", true},
		{"garbage", true, "", true},
	}
	for _, c := range cases {
		got, e := NegotiateVersion(c.header, c.v03)
		if c.err {
			if e == nil || e.Code != CodeVersionNotSupported || e.Metadata["version"] != stringsTrim(c.header) {
				t.Errorf("NegotiateVersion(%q) = %q, %v; want -32009 naming the version", c.header, got, e)
			}
			continue
		}
		if e != nil || got != c.want {
			t.Errorf("NegotiateVersion(%q, %v) = %q, %v; want %q", c.header, c.v03, got, e, c.want)
		}
	}
}

func stringsTrim(s string) string {
	for len(s) > 0 && s[0] == ' ' {
		s = s[1:]
	}
	for len(s) > 0 && s[len(s)-1] == ' ' {
		s = s[:len(s)-1]
	}
	return s
}

// TestEveryMethodNameTakesTheFastEnvelopePath keeps ParseRequest's fast
// path and LookupMethod on one table: a request naming any accepted method
// — v1.0 or an alias — is read without encoding/json, the name resolves,
// and the request's Method is the table's own string. Other plain names
// (a 0.3 name of package a2av03, an unknown one) take the fast path too;
// escaped, empty or non-UTF-8 names are left to encoding/json.
func TestEveryMethodNameTakesTheFastEnvelopePath(t *testing.T) {
	if len(methodTable) < 11+len(aliases) {
		t.Fatalf("the method table has %d names", len(methodTable))
	}
	for name, e := range methodTable {
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"` + name + `","params":{}}`)
		req, ok := parseRequestFast(body)
		if !ok || req.Method != name || unsafe.StringData(req.Method) != unsafe.StringData(e.name) {
			t.Errorf("%s: the fast path did not read it from the table (%v, %+v)", name, ok, req)
		}
		if _, ok := LookupMethod(name); !ok {
			t.Errorf("%s: LookupMethod does not know it", name)
		}
	}
	for _, alias := range []string{"tasks/list", "tasks/subscribe", "tasks/pushNotificationConfig/create",
		"ListTaskPushNotificationConfig", "SetTaskPushNotificationConfig"} {
		if op, ok := LookupMethod(alias); !ok || op == 0 {
			t.Errorf("alias %s: %v %v", alias, op, ok)
		}
	}
	for _, name := range []string{"message/send", "tasks/pushNotificationConfig/get", "no/such method", "ünïcode"} {
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"` + name + `","params":{}}`)
		if req, ok := parseRequestFast(body); !ok || req.Method != name {
			t.Errorf("%s: the fast path did not read it (%v, %+v)", name, ok, req)
		}
	}
	for _, raw := range []string{`""`, `"message\/send"`, "\"bad\xff\""} {
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":` + raw + `,"params":{}}`)
		if _, ok := parseRequestFast(body); ok {
			t.Errorf("%q: the fast path took it", body)
		}
	}
}
