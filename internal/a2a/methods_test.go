package a2a

import "testing"

func TestLookupMethodMapsEveryName(t *testing.T) {
	cases := []struct {
		name string
		op   Operation
		v03  bool
	}{
		{"SendMessage", OpSendMessage, false},
		{"SendStreamingMessage", OpSendStreamingMessage, false},
		{"GetTask", OpGetTask, false},
		{"ListTasks", OpListTasks, false},
		{"CancelTask", OpCancelTask, false},
		{"SubscribeToTask", OpSubscribeToTask, false},
		{"CreateTaskPushNotificationConfig", OpCreatePushConfig, false},
		{"GetTaskPushNotificationConfig", OpGetPushConfig, false},
		{"ListTaskPushNotificationConfigs", OpListPushConfigs, false},
		{"DeleteTaskPushNotificationConfig", OpDeletePushConfig, false},
		{"GetExtendedAgentCard", OpGetExtendedCard, false},
		{"message/send", OpSendMessage, true},
		{"message/stream", OpSendStreamingMessage, true},
		{"tasks/get", OpGetTask, true},
		{"tasks/cancel", OpCancelTask, true},
		{"tasks/resubscribe", OpSubscribeToTask, true},
		{"tasks/pushNotificationConfig/set", OpCreatePushConfig, true},
		{"tasks/pushNotificationConfig/get", OpGetPushConfig, true},
		{"tasks/pushNotificationConfig/list", OpListPushConfigs, true},
		{"tasks/pushNotificationConfig/delete", OpDeletePushConfig, true},
		{"agent/getAuthenticatedExtendedCard", OpGetExtendedCard, true},
		{"tasks/list", OpListTasks, false},
		{"tasks/subscribe", OpSubscribeToTask, false},
		{"tasks/pushNotificationConfig/create", OpCreatePushConfig, false},
		{"ListTaskPushNotificationConfig", OpListPushConfigs, false},
		{"SetTaskPushNotificationConfig", OpCreatePushConfig, false},
	}
	for _, c := range cases {
		op, v03, ok := LookupMethod(c.name)
		if !ok || op != c.op || v03 != c.v03 {
			t.Errorf("LookupMethod(%q) = %v, %v, %v; want %v, %v", c.name, op, v03, ok, c.op, c.v03)
		}
	}
	for _, bad := range []string{"", "sendMessage", "tasks/send", "tasks/sendSubscribe", "message/Send"} {
		if _, _, ok := LookupMethod(bad); ok {
			t.Errorf("LookupMethod(%q) found", bad)
		}
	}
}

func TestOperationNames(t *testing.T) {
	for op := OpSendMessage; op <= OpGetExtendedCard; op++ {
		back, v03, ok := LookupMethod(op.String())
		if !ok || back != op || v03 {
			t.Errorf("%v does not round trip", op)
		}
		if n := MethodV03(op); n != "" {
			if back, v03, _ := LookupMethod(n); back != op || !v03 {
				t.Errorf("MethodV03(%v) = %q does not round trip", op, n)
			}
		} else if op != OpListTasks {
			t.Errorf("%v has no 0.3 name", op)
		}
	}
	if Operation(0).String() != "Operation(0)" || MethodV03(0) != "" {
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
// — v1.0, 0.3 or an alias — is read without encoding/json, and the name
// resolves.
func TestEveryMethodNameTakesTheFastEnvelopePath(t *testing.T) {
	if len(methodTable) < 11+10+len(aliases) {
		t.Fatalf("the method table has %d names", len(methodTable))
	}
	for name := range methodTable {
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"` + name + `","params":{}}`)
		req, ok := parseRequestFast(body)
		if !ok || req.Method != name {
			t.Errorf("%s: the fast path did not read it (%v, %+v)", name, ok, req)
		}
		if _, _, ok := LookupMethod(name); !ok {
			t.Errorf("%s: LookupMethod does not know it", name)
		}
	}
	for _, alias := range []string{"tasks/list", "tasks/subscribe", "tasks/pushNotificationConfig/create",
		"ListTaskPushNotificationConfig", "SetTaskPushNotificationConfig"} {
		if op, v03, ok := LookupMethod(alias); !ok || v03 || op == 0 {
			t.Errorf("alias %s: %v %v %v", alias, op, v03, ok)
		}
	}
}
