package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2atest"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

// run records what one binding answered, step by step, in a form that
// must be identical for both bindings: results normalised (ids and
// timestamps replaced), errors summarised (code, reason, metadata keys).
type run struct {
	t     *testing.T
	b     bindingClient
	steps []string
}

func (r *run) record(label, what string) { r.steps = append(r.steps, label+": "+what) }

// call runs a unary operation and records its normalised result or error.
func (r *run) call(label, token string, op a2a.Operation, params any) (json.RawMessage, *a2a.Error) {
	r.t.Helper()
	res, e := r.b.call(token, op, params)
	if e != nil {
		r.record(label, "error "+errorSummary(e))
	} else {
		r.record(label, a2atest.Normalize(r.t, res))
	}
	return res, e
}

// jsonOnly runs a step that only the JSON bindings can express (a value
// that has no protobuf form); over gRPC the test named instead covers
// it. Every binding records the same line for it.
func (r *run) jsonOnly(label, grpcTest string, step func()) {
	r.t.Helper()
	if r.b.grpc {
		r.record(label, "JSON bindings only; gRPC: "+grpcTest)
		return
	}
	saved := r.steps
	step()
	r.steps = append(saved, label+": JSON bindings only; gRPC: "+grpcTest)
}

// mustCall is call for a step that must succeed.
func (r *run) mustCall(label, token string, op a2a.Operation, params any) json.RawMessage {
	r.t.Helper()
	res, e := r.call(label, token, op, params)
	if e != nil {
		r.t.Fatalf("%s %s: %v", r.b.name, label, e)
	}
	return res
}

// wantError runs a step that must fail with code.
func (r *run) wantError(label, token string, op a2a.Operation, params any, code int) {
	r.t.Helper()
	_, e := r.call(label, token, op, params)
	if e == nil || e.Code != code {
		r.t.Errorf("%s %s: error %v, want code %d", r.b.name, label, e, code)
	}
}

// stream runs a streaming operation and records each normalised event
// and the final error, if any.
func (r *run) stream(label, token string, op a2a.Operation, params any) []a2a.StreamResponse {
	r.t.Helper()
	evs, e := r.b.stream(token, op, params)
	for i, ev := range evs {
		r.record(fmt.Sprintf("%s[%d]", label, i), a2atest.Normalize(r.t, mustJSON(ev)))
	}
	r.record(label+" end", errorSummary(e))
	return evs
}

// sendTask sends a blocking message and returns the task it answered with.
func (r *run) sendTask(label, token string, req *a2a.SendMessageRequest) *a2a.Task {
	r.t.Helper()
	res := r.mustCall(label, token, a2a.OpSendMessage, req)
	sr := decode[a2a.SendMessageResponse](r.t, res)
	if sr.Task == nil {
		r.t.Fatalf("%s %s: want a task, got %s", r.b.name, label, res)
	}
	return sr.Task
}

// quietSend is sendTask for a step whose exact answer is timing
// dependent: only the task's kind is recorded.
func (r *run) quietSend(label, token string, req *a2a.SendMessageRequest) *a2a.Task {
	r.t.Helper()
	res, e := r.b.call(token, a2a.OpSendMessage, req)
	if e != nil {
		r.t.Fatalf("%s %s: %v", r.b.name, label, e)
	}
	sr := decode[a2a.SendMessageResponse](r.t, res)
	if sr.Task == nil {
		r.t.Fatalf("%s %s: want a task, got %s", r.b.name, label, res)
	}
	r.record(label, "a task")
	return sr.Task
}

// waitWorking waits until the task is WORKING with the agent's progress
// message (the "slow" turn is waiting for its release).
func (r *run) waitWorking(token, taskID string) {
	r.t.Helper()
	waitFor(r.t, "task "+taskID+" working", func() bool {
		res, e := r.b.call(token, a2a.OpGetTask, &a2a.GetTaskRequest{ID: taskID, HistoryLength: a2a.Int32(0)})
		if e != nil {
			return false
		}
		st := decode[a2a.Task](r.t, res).Status
		return st.State == a2a.TaskStateWorking && st.Message != nil
	})
}

// equivalenceScenarios are run against one server through both bindings;
// each binding's record must be the same.
var equivalenceScenarios = []struct {
	name string
	run  func(r *run)
}{
	{"blocking send, get with history", func(r *run) {
		task := r.sendTask("send", tokAlice, sendParams("hello both", nil))
		r.call("get", tokAlice, a2a.OpGetTask, &a2a.GetTaskRequest{ID: task.ID, HistoryLength: a2a.Int32(1)})
		r.call("get without history", tokAlice, a2a.OpGetTask, &a2a.GetTaskRequest{ID: task.ID, HistoryLength: a2a.Int32(0)})
		r.call("get full", tokAlice, a2a.OpGetTask, &a2a.GetTaskRequest{ID: task.ID})
	}},
	{"direct reply is a message", func(r *run) {
		r.mustCall("send", tokAlice, a2a.OpSendMessage, sendParams("direct hi there", nil))
	}},
	{"input required, continuation, then terminal", func(r *run) {
		task := r.sendTask("ask", tokAlice, sendParams("ask about colours", nil))
		if task.Status.State != a2a.TaskStateInputRequired {
			r.t.Errorf("%s: state %s", r.b.name, task.Status.State)
		}
		r.sendTask("answer", tokAlice, sendParams("blue", func(q *a2a.SendMessageRequest) { q.Message.TaskID = task.ID }))
		r.wantError("send to a terminal task", tokAlice, a2a.OpSendMessage,
			sendParams("again", func(q *a2a.SendMessageRequest) { q.Message.TaskID = task.ID }), a2a.CodeUnsupportedOperation)
		r.wantError("subscribe to a terminal task", tokAlice, a2a.OpSubscribeToTask, &a2a.SubscribeToTaskRequest{ID: task.ID}, a2a.CodeUnsupportedOperation)
	}},
	{"auth required", func(r *run) {
		r.sendTask("send", tokAlice, sendParams("auth please", nil))
	}},
	{"failed and rejected tasks", func(r *run) {
		r.sendTask("fail", tokAlice, sendParams("fail hard", nil))
		r.sendTask("reject", tokAlice, sendParams("reject this", nil))
	}},
	{"stream with progress and artifact chunks", func(r *run) {
		evs := r.stream("stream", tokAlice, a2a.OpSendStreamingMessage, sendParams("progress the report", nil))
		if got := kinds(evs); got != "task:SUBMITTED,statusUpdate:WORKING,statusUpdate:WORKING,artifactUpdate,artifactUpdate,artifactUpdate,statusUpdate:COMPLETED" {
			r.t.Errorf("%s: stream %s", r.b.name, got)
		}
	}},
	{"stream answered by a message", func(r *run) {
		r.stream("stream", tokAlice, a2a.OpSendStreamingMessage, sendParams("direct streamed", nil))
	}},
	{"cancel a running task", func(r *run) {
		task := r.quietSend("send", tokAlice, sendParams("slow cancel me", func(q *a2a.SendMessageRequest) {
			q.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
		}))
		r.waitWorking(tokAlice, task.ID)
		res := r.mustCall("cancel", tokAlice, a2a.OpCancelTask, &a2a.CancelTaskRequest{ID: task.ID, Metadata: map[string]any{"why": "test"}})
		if st := decode[a2a.Task](r.t, res).Status.State; st != a2a.TaskStateCanceled {
			r.t.Errorf("%s: canceled task is %s", r.b.name, st)
		}
		r.wantError("cancel again", tokAlice, a2a.OpCancelTask, &a2a.CancelTaskRequest{ID: task.ID}, a2a.CodeTaskNotCancelable)
	}},
	{"subscribe to a running task", func(r *run) {
		task := r.quietSend("send", tokAlice, sendParams("slow subscribe to me", func(q *a2a.SendMessageRequest) {
			q.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
		}))
		r.waitWorking(tokAlice, task.ID)
		next := r.b.open(tokAlice, a2a.OpSubscribeToTask, &a2a.SubscribeToTaskRequest{ID: task.ID})
		var evs []a2a.StreamResponse
		for {
			ev, e := next()
			if e != nil {
				r.t.Fatalf("%s: subscribe: %v", r.b.name, e)
			}
			if ev == nil {
				break
			}
			evs = append(evs, *ev)
			if len(evs) == 1 {
				// The first event is the snapshot; now let the task finish.
				r.b.e.exec.release(task.ID)
			}
		}
		for i, ev := range evs {
			r.record(fmt.Sprintf("event[%d]", i), a2atest.Normalize(r.t, mustJSON(ev)))
		}
		if got := kinds(evs); got != "task:WORKING,artifactUpdate,statusUpdate:COMPLETED" {
			r.t.Errorf("%s: subscribe %s", r.b.name, got)
		}
	}},
	{"list tasks of a context with filters and pages", func(r *run) {
		first := r.sendTask("send 1", tokAlice, sendParams("progress one", nil))
		in := func(q *a2a.SendMessageRequest) { q.Message.ContextID = first.ContextID }
		// Apart by more than the timestamps' millisecond, so the order
		// (newest status first) is the same in every run.
		time.Sleep(3 * time.Millisecond)
		r.sendTask("send 2", tokAlice, sendParams("fail two", in))
		time.Sleep(3 * time.Millisecond)
		r.sendTask("send 3", tokAlice, sendParams("echo three", in))
		r.call("list", tokAlice, a2a.OpListTasks, &a2a.ListTasksRequest{ContextID: first.ContextID})
		r.call("list completed with artifacts", tokAlice, a2a.OpListTasks, &a2a.ListTasksRequest{
			ContextID: first.ContextID, Status: a2a.TaskStateCompleted, IncludeArtifacts: true, HistoryLength: a2a.Int32(0)})
		r.call("list after a past timestamp", tokAlice, a2a.OpListTasks, &a2a.ListTasksRequest{
			ContextID: first.ContextID, StatusTimestampAfter: &a2a.Timestamp{Time: first.Status.Timestamp.Add(-1e9)}, HistoryLength: a2a.Int32(1)})
		res, e := r.b.call(tokAlice, a2a.OpListTasks, &a2a.ListTasksRequest{ContextID: first.ContextID, PageSize: a2a.Int32(2)})
		if e != nil {
			r.t.Fatal(e)
		}
		page := decode[a2a.ListTasksResponse](r.t, res)
		// The page token is opaque: only whether there is one is compared.
		r.record("page 1", fmt.Sprintf("%d tasks of %d, size %d, more %v", len(page.Tasks), page.TotalSize, page.PageSize, page.NextPageToken != ""))
		res, e = r.b.call(tokAlice, a2a.OpListTasks, &a2a.ListTasksRequest{ContextID: first.ContextID, PageSize: a2a.Int32(2), PageToken: page.NextPageToken})
		if e != nil {
			r.t.Fatal(e)
		}
		page = decode[a2a.ListTasksResponse](r.t, res)
		r.record("page 2", fmt.Sprintf("%d tasks of %d, more %v", len(page.Tasks), page.TotalSize, page.NextPageToken != ""))
		r.call("no such context", tokAlice, a2a.OpListTasks, &a2a.ListTasksRequest{ContextID: "no-such-context"})
	}},
	{"invalid requests", func(r *run) {
		r.wantError("page size over 100", tokAlice, a2a.OpListTasks, &a2a.ListTasksRequest{PageSize: a2a.Int32(500)}, a2a.CodeInvalidParams)
		r.jsonOnly("unknown state", "TestGRPCRefusesEnumValuesItDoesNotKnow", func() {
			r.wantError("unknown state", tokAlice, a2a.OpListTasks, &a2a.ListTasksRequest{Status: "TASK_STATE_SLEEPING"}, a2a.CodeInvalidParams)
		})
		r.wantError("negative history", tokAlice, a2a.OpGetTask, &a2a.GetTaskRequest{ID: "x", HistoryLength: a2a.Int32(-1)}, a2a.CodeInvalidParams)
		r.wantError("no parts", tokAlice, a2a.OpSendMessage, &a2a.SendMessageRequest{Message: a2a.Message{MessageID: "m1", Role: a2a.RoleUser}}, a2a.CodeInvalidParams)
		r.wantError("media type not accepted", tokAlice, a2a.OpSendMessage,
			&a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.URLPart("https://example.com/v.mp4", "video/mp4", "v.mp4"))}, a2a.CodeContentTypeNotSupported)
		r.wantError("id with a control character", tokAlice, a2a.OpSendMessage,
			sendParams("hi", func(q *a2a.SendMessageRequest) { q.Message.ContextID = "bad\x01ctx" }), a2a.CodeInvalidParams)
		r.wantError("push config without url", tokAlice, a2a.OpCreatePushConfig, &a2a.TaskPushNotificationConfig{TaskID: "t", ID: "c"}, a2a.CodeInvalidParams)
	}},
	{"unknown and foreign tasks look the same", func(r *run) {
		task := r.sendTask("alice's task", tokAlice, sendParams("hello mine", nil))
		for _, c := range []struct{ who, tok, id string }{{"unknown", tokAlice, "no-such-task"}, {"foreign", tokBob, task.ID}} {
			r.wantError(c.who+" get", c.tok, a2a.OpGetTask, &a2a.GetTaskRequest{ID: c.id}, a2a.CodeTaskNotFound)
			r.wantError(c.who+" cancel", c.tok, a2a.OpCancelTask, &a2a.CancelTaskRequest{ID: c.id}, a2a.CodeTaskNotFound)
			r.wantError(c.who+" subscribe", c.tok, a2a.OpSubscribeToTask, &a2a.SubscribeToTaskRequest{ID: c.id}, a2a.CodeTaskNotFound)
			r.wantError(c.who+" continue", c.tok, a2a.OpSendMessage, sendParams("more", func(q *a2a.SendMessageRequest) { q.Message.TaskID = c.id }), a2a.CodeTaskNotFound)
			r.wantError(c.who+" push config", c.tok, a2a.OpCreatePushConfig,
				&a2a.TaskPushNotificationConfig{TaskID: c.id, URL: "https://client.example/cb"}, a2a.CodeTaskNotFound)
			r.wantError(c.who+" push list", c.tok, a2a.OpListPushConfigs, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: c.id}, a2a.CodeTaskNotFound)
		}
		r.call("bob's list", tokBob, a2a.OpListTasks, &a2a.ListTasksRequest{ContextID: task.ContextID})
	}},
	{"push config lifecycle", func(r *run) {
		task := r.sendTask("send", tokAlice, sendParams("hello push", nil))
		cfg := &a2a.TaskPushNotificationConfig{TaskID: task.ID, ID: "cfg-1", URL: "https://client.example/cb", Token: "opaque",
			Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "secret"}}
		r.mustCall("create", tokAlice, a2a.OpCreatePushConfig, cfg)
		r.mustCall("create generated id", tokAlice, a2a.OpCreatePushConfig, &a2a.TaskPushNotificationConfig{TaskID: task.ID, URL: "https://client.example/cb2"})
		r.mustCall("get", tokAlice, a2a.OpGetPushConfig, &a2a.GetTaskPushNotificationConfigRequest{TaskID: task.ID, ID: "cfg-1"})
		r.mustCall("list", tokAlice, a2a.OpListPushConfigs, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: task.ID})
		r.mustCall("delete", tokAlice, a2a.OpDeletePushConfig, &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: task.ID, ID: "cfg-1"})
		r.mustCall("delete again", tokAlice, a2a.OpDeletePushConfig, &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: task.ID, ID: "cfg-1"})
		r.wantError("get deleted", tokAlice, a2a.OpGetPushConfig, &a2a.GetTaskPushNotificationConfigRequest{TaskID: task.ID, ID: "cfg-1"}, a2a.CodeTaskNotFound)
		r.sendTask("send with inline config", tokAlice, sendParams("hello inline push", func(q *a2a.SendMessageRequest) {
			q.Configuration = &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{URL: "https://client.example/inline"}}
		}))
	}},
	{"permissions of a public peer", func(r *run) {
		r.sendTask("send", tokCarol, sendParams("hello from carol", nil))
		r.wantError("list", tokCarol, a2a.OpListTasks, &a2a.ListTasksRequest{}, a2a.CodeUnauthorized)
		r.wantError("push config", tokCarol, a2a.OpCreatePushConfig, &a2a.TaskPushNotificationConfig{TaskID: "t", URL: "https://client.example/cb"}, a2a.CodeUnauthorized)
		r.wantError("inline push config", tokCarol, a2a.OpSendMessage, sendParams("hi", func(q *a2a.SendMessageRequest) {
			q.Configuration = &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{URL: "https://client.example/cb"}}
		}), a2a.CodeUnauthorized)
	}},
	{"authentication", func(r *run) {
		r.wantError("bad token", "wrong-token-0123456789", a2a.OpGetTask, &a2a.GetTaskRequest{ID: "x"}, a2a.CodeUnauthorized)
		r.wantError("no token", "", a2a.OpListTasks, &a2a.ListTasksRequest{}, a2a.CodeUnauthorized)
		r.wantError("extended card, anonymous", "", a2a.OpGetExtendedCard, &a2a.GetExtendedAgentCardRequest{}, a2a.CodeUnauthorized)
	}},
	{"version", func(r *run) {
		b := r.b
		r.b.hdr = map[string]string{"A2A-Version": "9.9"}
		r.wantError("unsupported version", tokAlice, a2a.OpGetTask, &a2a.GetTaskRequest{ID: "x"}, a2a.CodeVersionNotSupported)
		r.b.hdr = map[string]string{"A2A-Version": "1.0.3"}
		r.wantError("patch ignored", tokAlice, a2a.OpGetTask, &a2a.GetTaskRequest{ID: "x"}, a2a.CodeTaskNotFound)
		r.b = b
	}},
}

// TestBindingsAreEquivalent runs every scenario against one server through
// the JSON-RPC, the HTTP+JSON and the gRPC binding and requires the same
// results (modulo ids and timestamps) and the same errors (code, reason,
// metadata keys; for HTTP+JSON also the HTTP status and google.rpc.Code
// of the specification's mapping, for gRPC the status code and the
// ErrorInfo in its details, checked by bindingClient.call).
func TestBindingsAreEquivalent(t *testing.T) {
	e := newEnv(t)
	for _, sc := range equivalenceScenarios {
		t.Run(sc.name, func(t *testing.T) {
			env := *e
			env.t = t
			bs := bindings(&env)
			records := make([][]string, len(bs))
			for i, b := range bs {
				r := &run{t: t, b: b}
				sc.run(r)
				records[i] = r.steps
			}
			rpc := records[0]
			if len(rpc) == 0 {
				t.Fatal("the scenario recorded nothing")
			}
			for k := 1; k < len(bs); k++ {
				other := records[k]
				for i := range max(len(rpc), len(other)) {
					var a, b string
					if i < len(rpc) {
						a = rpc[i]
					}
					if i < len(other) {
						b = other[i]
					}
					if a != b {
						t.Errorf("step %d differs:\n  JSONRPC:   %s\n  %-10s %s", i, a, bs[k].name+":", b)
					}
				}
			}
			if testing.Verbose() {
				t.Logf("%d steps:\n  %s", len(rpc), strings.Join(rpc, "\n  "))
			}
		})
	}
}

// TestBindingsAgreeOnConfiguredCapabilities covers what needs another
// server configuration: push disabled (-32003), a required extension
// (-32008), the extended card, and streaming refusals.
func TestBindingsAgreeOnConfiguredCapabilities(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*Options)
		run  func(r *run)
	}{
		{"push disabled", func(o *Options) { o.Push.Enabled = false }, func(r *run) {
			r.wantError("create", tokAlice, a2a.OpCreatePushConfig, &a2a.TaskPushNotificationConfig{TaskID: "t", URL: "https://client.example/cb"}, a2a.CodePushNotificationNotSupported)
			r.wantError("list", tokAlice, a2a.OpListPushConfigs, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: "t"}, a2a.CodePushNotificationNotSupported)
			r.wantError("inline", tokAlice, a2a.OpSendMessage, sendParams("hi", func(q *a2a.SendMessageRequest) {
				q.Configuration = &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{URL: "https://client.example/cb"}}
			}), a2a.CodePushNotificationNotSupported)
		}},
		{"required extension", func(o *Options) {
			o.Card.Extensions = []a2a.AgentExtension{{URI: "https://example.com/ext/v1", Required: true}}
		}, func(r *run) {
			r.wantError("without it", tokAlice, a2a.OpGetTask, &a2a.GetTaskRequest{ID: "x"}, a2a.CodeExtensionSupportRequired)
			b := r.b
			r.b.hdr = map[string]string{"A2A-Extensions": "https://example.com/ext/v1"}
			r.sendTask("with it", tokAlice, sendParams("hello extended", nil))
			r.b = b
		}},
		{"extended card", func(o *Options) {
			o.Card.ExtendedSkills = []a2a.AgentSkill{{ID: "secret", Name: "Secret", Description: "For friends", Tags: []string{"x"}}}
		}, func(r *run) {
			r.mustCall("card", tokAlice, a2a.OpGetExtendedCard, &a2a.GetExtendedAgentCardRequest{})
		}},
		{"stream limit", func(o *Options) { o.Streams = security.NewStreamLimiter(1) }, func(r *run) {
			next := r.b.open(tokAlice, a2a.OpSendStreamingMessage, sendParams("slow held open", nil))
			first, e := next()
			if e != nil || first == nil || first.Task == nil {
				r.t.Fatalf("%s: first event %+v %v", r.b.name, first, e)
			}
			r.stream("second stream", tokAlice, a2a.OpSendStreamingMessage, sendParams("hello streamed", nil))
			r.b.e.exec.release(first.Task.ID)
			for ev, e := next(); ev != nil || e != nil; ev, e = next() {
				if e != nil {
					r.t.Errorf("%s: held stream: %v", r.b.name, e)
				}
			}
			r.stream("after release", tokAlice, a2a.OpSendStreamingMessage, sendParams("direct streamed", nil))
		}},
		{"invalid stream request", nil, func(r *run) {
			r.stream("no parts", tokAlice, a2a.OpSendStreamingMessage, &a2a.SendMessageRequest{Message: a2a.Message{MessageID: "m", Role: a2a.RoleUser}})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var mods []func(*Options)
			if c.mod != nil {
				mods = append(mods, c.mod)
			}
			e := newEnv(t, mods...)
			bs := bindings(e)
			records := make([][]string, len(bs))
			for i, b := range bs {
				r := &run{t: t, b: b}
				c.run(r)
				records[i] = r.steps
			}
			for k := 1; k < len(bs); k++ {
				if strings.Join(records[0], "\n") != strings.Join(records[k], "\n") {
					t.Errorf("bindings differ:\nJSONRPC:\n  %s\n%s:\n  %s", strings.Join(records[0], "\n  "), bs[k].name, strings.Join(records[k], "\n  "))
				}
			}
		})
	}
}
