package server

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

// publicResolver resolves every name to a public address, so the SSRF
// guard can be exercised without DNS.
type publicResolver struct{}

func (publicResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
}

func TestPushMethodsWhenPushIsDisabled(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Push.Enabled = false })
	_, body := fetchCard(t, e, "/.well-known/agent-card.json", nil)
	if card, _ := splitCard(t, body); card.Capabilities.SupportsPushNotifications() {
		t.Error("card declares push notifications")
	}
	task := e.send(tokAlice, "hello", nil)
	cases := []struct {
		method string
		params any
	}{
		{"CreateTaskPushNotificationConfig", &a2a.TaskPushNotificationConfig{TaskID: task.ID, URL: "https://hooks.example.com/x"}},
		{"GetTaskPushNotificationConfig", &a2a.GetTaskPushNotificationConfigRequest{TaskID: task.ID, ID: "c"}},
		{"ListTaskPushNotificationConfigs", &a2a.ListTaskPushNotificationConfigsRequest{TaskID: task.ID}},
		{"DeleteTaskPushNotificationConfig", &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: task.ID, ID: "c"}},
		{"tasks/pushNotificationConfig/set", map[string]any{"taskId": task.ID, "pushNotificationConfig": map[string]any{"url": "https://hooks.example.com/x"}}},
		{"tasks/pushNotificationConfig/get", map[string]any{"id": task.ID}},
		{"tasks/pushNotificationConfig/list", map[string]any{"id": task.ID}},
		{"tasks/pushNotificationConfig/delete", map[string]any{"id": task.ID, "pushNotificationConfigId": "c"}},
		{"SendMessage", sendParams("hi", func(r *a2a.SendMessageRequest) {
			r.Configuration = &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{URL: "https://hooks.example.com/x"}}
		})},
		{"SendStreamingMessage", sendParams("hi", func(r *a2a.SendMessageRequest) {
			r.Configuration = &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{URL: "https://hooks.example.com/x"}}
		})},
		{"message/send", map[string]any{"message": map[string]any{"messageId": "m", "role": "user", "parts": []any{map[string]any{"kind": "text", "text": "hi"}}},
			"configuration": map[string]any{"pushNotificationConfig": map[string]any{"url": "https://hooks.example.com/x"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.method, func(t *testing.T) {
			r := e.rpc(tokAlice, tc.method, tc.params, map[string]string{"A2A-Version": versionFor(tc.method)})
			if r.err == nil || r.err.Code != a2a.CodePushNotificationNotSupported || r.err.Reason != "PUSH_NOTIFICATION_NOT_SUPPORTED" {
				t.Errorf("%s", r.body)
			}
		})
	}
	// Even a caller without the push permission learns the capability is
	// missing, not that it lacks a permission.
	if err := e.fails(tokCarol, "ListTaskPushNotificationConfigs", &a2a.ListTaskPushNotificationConfigsRequest{TaskID: task.ID}); err.Code != a2a.CodePushNotificationNotSupported {
		t.Errorf("public caller: %v", err)
	}
}

func TestPushWebhookURLsGoThroughTheSSRFGuard(t *testing.T) {
	guard := &security.SSRFGuard{Resolver: publicResolver{}}
	e := newEnv(t, func(o *Options) { o.Push.CheckURL = guard.CheckURL })
	task := e.send(tokAlice, "hello", nil)
	refused := []string{"http://127.0.0.1:9/hook", "http://10.0.0.7/hook", "http://169.254.169.254/latest/meta-data", "http://localhost/hook"}
	for _, url := range refused {
		t.Run(url, func(t *testing.T) {
			err := e.fails(tokAlice, "CreateTaskPushNotificationConfig", &a2a.TaskPushNotificationConfig{TaskID: task.ID, URL: url})
			if err.Code != a2a.CodeInvalidParams || !strings.Contains(err.Message, url) ||
				!strings.Contains(err.Message, "A2A_ALLOW_LOOPBACK_URLS") || !strings.Contains(err.Message, "A2A_ALLOW_PRIVATE_URLS") {
				t.Errorf("create: %d %s", err.Code, err.Message)
			}
			err = e.fails(tokAlice, "SendMessage", sendParams("hi", func(r *a2a.SendMessageRequest) {
				r.Configuration = &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{URL: url}}
			}))
			if err.Code != a2a.CodeInvalidParams || !strings.Contains(err.Message, "configuration.taskPushNotificationConfig.url") {
				t.Errorf("inline: %d %s", err.Code, err.Message)
			}
		})
	}
	e.ok(tokAlice, "CreateTaskPushNotificationConfig", &a2a.TaskPushNotificationConfig{TaskID: task.ID, URL: "https://hooks.example.com/ok"})
}

func TestInlinePushConfigIsStoredWithTheTask(t *testing.T) {
	e := newEnv(t)
	task := e.send(tokAlice, "hello", func(r *a2a.SendMessageRequest) {
		r.Configuration = &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{
			ID: "inline", URL: "https://hooks.example.com/inline", Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "s"}}}
	})
	list := decode[a2a.ListTaskPushNotificationConfigsResponse](t, e.ok(tokAlice, "ListTaskPushNotificationConfigs",
		&a2a.ListTaskPushNotificationConfigsRequest{TaskID: task.ID}))
	if len(list.Configs) != 1 || list.Configs[0].ID != "inline" || list.Configs[0].TaskID != task.ID {
		t.Errorf("configs = %s", mustJSON(list))
	}
}

func TestListTasksFiltersPagesAndShapes(t *testing.T) {
	e := newEnv(t)
	// Two conversations: the first message of each opens it, the others
	// name the context the agent returned.
	conv := map[string]string{}
	var alice []*a2a.Task
	for _, s := range []struct{ text, label string }{
		{"one", "a"}, {"two", "a"}, {"three", "a"}, {"ask four", "b"}, {"fail five", "b"},
	} {
		task := e.send(tokAlice, s.text, func(r *a2a.SendMessageRequest) { r.Message.ContextID = conv[s.label] })
		conv[s.label] = task.ContextID
		alice = append(alice, task)
		time.Sleep(3 * time.Millisecond) // distinct status timestamps
	}
	e.send(tokBob, "bob one", nil)
	e.send(tokBob, "bob two", nil)
	list := func(token string, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, string) {
		t.Helper()
		raw := e.ok(token, "ListTasks", req)
		return decode[a2a.ListTasksResponse](t, raw), string(raw)
	}
	ids := func(l *a2a.ListTasksResponse) []string {
		var out []string
		for _, t := range l.Tasks {
			out = append(out, t.ID)
		}
		return out
	}

	all, raw := list(tokAlice, &a2a.ListTasksRequest{})
	if all.TotalSize != 5 || len(all.Tasks) != 5 || all.NextPageToken != "" {
		t.Fatalf("all = %s", raw)
	}
	for i := range all.Tasks { // newest first
		if all.Tasks[i].ID != alice[len(alice)-1-i].ID {
			t.Errorf("order = %v", ids(all))
			break
		}
	}
	if strings.Contains(raw, `"artifacts"`) {
		t.Errorf("artifacts present without includeArtifacts: %s", raw)
	}

	cases := []struct {
		name string
		req  a2a.ListTasksRequest
		want int
	}{
		{"context a", a2a.ListTasksRequest{ContextID: conv["a"]}, 3},
		{"context b", a2a.ListTasksRequest{ContextID: conv["b"]}, 2},
		{"completed", a2a.ListTasksRequest{Status: a2a.TaskStateCompleted}, 3},
		{"input required", a2a.ListTasksRequest{Status: a2a.TaskStateInputRequired}, 1},
		{"failed in b", a2a.ListTasksRequest{ContextID: conv["b"], Status: a2a.TaskStateFailed}, 1},
		{"since the third", a2a.ListTasksRequest{StatusTimestampAfter: all.Tasks[2].Status.Timestamp}, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l, raw := list(tokAlice, &tc.req)
			if len(l.Tasks) != tc.want || int(l.TotalSize) != tc.want {
				t.Errorf("got %d (total %d), want %d: %s", len(l.Tasks), l.TotalSize, tc.want, raw)
			}
		})
	}

	t.Run("pagination", func(t *testing.T) {
		var seen []string
		token := ""
		for page := 0; ; page++ {
			l, raw := list(tokAlice, &a2a.ListTasksRequest{PageSize: a2a.Int32(2), PageToken: token})
			if l.PageSize != 2 || l.TotalSize != 5 || len(l.Tasks) > 2 {
				t.Fatalf("page %d = %s", page, raw)
			}
			seen = append(seen, ids(l)...)
			if l.NextPageToken == "" {
				break
			}
			token = l.NextPageToken
			if page > 5 {
				t.Fatal("pagination does not end")
			}
		}
		if strings.Join(seen, ",") != strings.Join(ids(all), ",") {
			t.Errorf("pages = %v, want %v", seen, ids(all))
		}
		if err := e.fails(tokAlice, "ListTasks", &a2a.ListTasksRequest{PageToken: "garbage"}); err.Code != a2a.CodeInvalidParams {
			t.Errorf("bad page token: %v", err)
		}
	})
	t.Run("history and artifacts", func(t *testing.T) {
		l, raw := list(tokAlice, &a2a.ListTasksRequest{HistoryLength: a2a.Int32(0), IncludeArtifacts: true, Status: a2a.TaskStateCompleted})
		if strings.Contains(raw, `"history"`) || len(l.Tasks[0].Artifacts) == 0 {
			t.Errorf("historyLength 0 / includeArtifacts: %s", raw)
		}
		l, _ = list(tokAlice, &a2a.ListTasksRequest{HistoryLength: a2a.Int32(1)})
		for _, task := range l.Tasks {
			if len(task.History) > 1 {
				t.Errorf("task %s has %d history messages", task.ID, len(task.History))
			}
		}
	})
	t.Run("scoped to the caller", func(t *testing.T) {
		if l, raw := list(tokBob, &a2a.ListTasksRequest{}); l.TotalSize != 2 {
			t.Errorf("bob = %s", raw)
		}
	})
	t.Run("local callers see everything", func(t *testing.T) {
		local := newEnv(t, func(o *Options) { o.Auth = testAuth(t, true) })
		local.send(tokAlice, "a", nil)
		local.send(tokBob, "b", nil)
		l := decode[a2a.ListTasksResponse](t, local.ok("", "ListTasks", &a2a.ListTasksRequest{}))
		if l.TotalSize != 2 {
			t.Errorf("local caller sees %d tasks", l.TotalSize)
		}
	})
}
