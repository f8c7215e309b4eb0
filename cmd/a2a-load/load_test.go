package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
)

// fakeServer is a small A2A JSON-RPC echo server whose misbehaviour the
// tests choose.
type fakeServer struct {
	// failEvery makes every n-th request a JSON-RPC internal error.
	failEvery int64
	// noEcho answers completed tasks without the text.
	noEcho bool
	// closeEvery asks the client to close the connection every n-th answer.
	closeEvery int64
	// pendingPolls is how many GetTask calls see WORKING before COMPLETED.
	pendingPolls int

	n     atomic.Int64
	mu    sync.Mutex
	tasks map[string]*fakeTask
}

type fakeTask struct {
	text  string
	polls int
}

type rpcIn struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		ID      string `json:"id"`
		Message struct {
			MessageID string `json:"messageId"`
			Parts     []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"message"`
		Configuration struct {
			ReturnImmediately bool `json:"returnImmediately"`
		} `json:"configuration"`
	} `json:"params"`
}

func taskJSON(id, state, text string, echo bool) string {
	q, _ := json.Marshal(text)
	art := ""
	if echo {
		art = fmt.Sprintf(`,"artifacts":[{"artifactId":"a","parts":[{"text":%s}]}]`, q)
	}
	return fmt.Sprintf(`{"id":%q,"contextId":"c","status":{"state":%q},"history":[{"messageId":"m","role":"ROLE_USER","parts":[{"text":%s}]}]%s}`, id, state, q, art)
}

func (s *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := s.n.Add(1)
	if s.closeEvery > 0 && n%s.closeEvery == 0 {
		w.Header().Set("Connection", "close")
	}
	var in rpcIn
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if s.failEvery > 0 && n%s.failEvery == 0 {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"boom"}}`, in.ID)
		return
	}
	text := ""
	if len(in.Params.Message.Parts) > 0 {
		text = in.Params.Message.Parts[0].Text
	}
	id := fmt.Sprintf("t%d", n)
	switch in.Method {
	case "SendMessage":
		if in.Params.Configuration.ReturnImmediately {
			s.mu.Lock()
			if s.tasks == nil {
				s.tasks = map[string]*fakeTask{}
			}
			s.tasks[id] = &fakeTask{text: text}
			s.mu.Unlock()
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"task":%s}}`, in.ID, taskJSON(id, "TASK_STATE_SUBMITTED", text, false))
			return
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"task":%s}}`, in.ID, taskJSON(id, "TASK_STATE_COMPLETED", text, !s.noEcho))
	case "GetTask":
		s.mu.Lock()
		t := s.tasks[in.Params.ID]
		state := "TASK_STATE_COMPLETED"
		if t != nil && t.polls < s.pendingPolls {
			t.polls++
			state = "TASK_STATE_WORKING"
		}
		s.mu.Unlock()
		if t == nil {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32001,"message":"task not found"}}`, in.ID)
			return
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, in.ID, taskJSON(in.Params.ID, state, t.text, state == "TASK_STATE_COMPLETED"))
	case "SendStreamingMessage":
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		q, _ := json.Marshal(text)
		events := []string{
			fmt.Sprintf(`{"task":%s}`, taskJSON(id, "TASK_STATE_SUBMITTED", text, false)),
			fmt.Sprintf(`{"artifactUpdate":{"taskId":%q,"artifact":{"artifactId":"a","parts":[{"text":%s}]},"lastChunk":true}}`, id, q),
			fmt.Sprintf(`{"statusUpdate":{"taskId":%q,"status":{"state":"TASK_STATE_COMPLETED"}}}`, id),
		}
		for i, e := range events {
			// One event split over two data lines, as SSE allows.
			if i == 1 {
				fmt.Fprintf(w, "id: %d\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\ndata: \"result\":%s}\n\n", i, in.ID, e)
			} else {
				fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}\r\n\r\n", in.ID, e)
			}
			f.Flush()
		}
	case "ListTasks":
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tasks":[],"nextPageToken":""}}`, in.ID)
	default:
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no such method"}}`, in.ID)
	}
}

var clients = []string{"raw", "net/http"}

func runAgainst(t *testing.T, s *fakeServer, cfg Config) *Result {
	t.Helper()
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	cfg.URL = ts.URL + "/"
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.PageSize == 0 {
		cfg.PageSize = 50
	}
	if cfg.Client == "" {
		cfg.Client = "raw"
	}
	if cfg.Text == "" {
		cfg.Text = `hello "quoted" <text>`
	}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestEveryModeSucceedsAgainstAnEchoServer(t *testing.T) {
	for _, cl := range clients {
		for _, mode := range []string{"send", "send-async", "stream", "list"} {
			t.Run(cl+"/"+mode, func(t *testing.T) {
				res := runAgainst(t, &fakeServer{pendingPolls: 2, closeEvery: 7}, Config{Mode: mode, Concurrency: 4, Requests: 60, Client: cl, Poll: time.Millisecond})
				if res.OK != 60 || res.ErrorsTotal != 0 {
					t.Fatalf("ok %d errors %v %v", res.OK, res.Errors, res.ErrorSamples)
				}
				if res.Latency.N != 60 || res.Latency.P50 <= 0 || res.Latency.P99 < res.Latency.P50 || res.Latency.Max < res.Latency.P99 {
					t.Errorf("latency %+v", res.Latency)
				}
				if res.RPS <= 0 {
					t.Errorf("rps %v", res.RPS)
				}
				switch mode {
				case "stream":
					if res.Events != 180 || res.EventsPerStream != 3 || res.FirstEvent == nil || res.FirstEvent.N != 60 {
						t.Errorf("events %d per stream %.2f first %+v", res.Events, res.EventsPerStream, res.FirstEvent)
					}
				case "send-async":
					if res.PollsPerTask != 3 || res.Ack == nil || res.Ack.N != 60 {
						t.Errorf("polls per task %.2f ack %+v", res.PollsPerTask, res.Ack)
					}
					if res.HTTPRequests != 60*4 {
						t.Errorf("http requests %d, want %d", res.HTTPRequests, 60*4)
					}
				}
			})
		}
	}
}

func TestFailuresAreCountedByKind(t *testing.T) {
	for _, cl := range clients {
		t.Run(cl, func(t *testing.T) {
			res := runAgainst(t, &fakeServer{failEvery: 4}, Config{Mode: "send", Concurrency: 2, Requests: 100, Client: cl})
			if res.OK+res.ErrorsTotal != 100 || res.Errors["rpc_-32603"] != 25 || res.ErrorsTotal != 25 {
				t.Fatalf("ok %d errors %v", res.OK, res.Errors)
			}
			if len(res.ErrorSamples) != 1 || !strings.Contains(res.ErrorSamples[0], "boom") {
				t.Errorf("samples %q", res.ErrorSamples)
			}
		})
	}
}

func TestAnAnswerWithoutTheEchoIsAFailure(t *testing.T) {
	res := runAgainst(t, &fakeServer{noEcho: true}, Config{Mode: "send", Concurrency: 1, Requests: 10})
	if res.OK != 0 || res.Errors["no_echo"] != 10 {
		t.Fatalf("ok %d errors %v", res.OK, res.Errors)
	}
}

func TestAStreamAnsweredWithAnRPCErrorIsCounted(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`)
	}))
	defer ts.Close()
	res, err := Run(context.Background(), Config{URL: ts.URL, Mode: "stream", Concurrency: 1, Requests: 3, Timeout: 5 * time.Second, PageSize: 1, Client: "raw"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors["rpc_-32601"] != 3 {
		t.Fatalf("errors %v", res.Errors)
	}
}

func TestHTTPFailuresAndRefusedConnectionsAreCounted(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "slow down", http.StatusTooManyRequests)
	}))
	res, err := Run(context.Background(), Config{URL: ts.URL, Mode: "send", Concurrency: 2, Requests: 10, Timeout: 5 * time.Second, PageSize: 1, Client: "raw"})
	ts.Close()
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors["http_429"] != 10 {
		t.Fatalf("errors %v", res.Errors)
	}
	// Nothing listens on the closed server's address any more.
	res, err = Run(context.Background(), Config{URL: ts.URL, Mode: "send", Concurrency: 2, Requests: 4, Timeout: 5 * time.Second, PageSize: 1, Client: "raw"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors["transport"] != 4 || res.OK != 0 {
		t.Fatalf("ok %d errors %v", res.OK, res.Errors)
	}
}

func TestDurationRunStopsAndMeasuresItsWindow(t *testing.T) {
	res := runAgainst(t, &fakeServer{}, Config{Mode: "send", Concurrency: 2, Duration: 300 * time.Millisecond, Warmup: 100 * time.Millisecond})
	if res.WindowSec != 0.3 || res.OK == 0 || res.ErrorsTotal != 0 {
		t.Fatalf("window %v ok %d errors %v", res.WindowSec, res.OK, res.Errors)
	}
	if res.AllOps < res.OK {
		t.Errorf("all ops %d < ok %d", res.AllOps, res.OK)
	}
}

func TestRequestBodyIsValidJSONWithUniqueMarkers(t *testing.T) {
	r := &runner{prefix: "abcd", textJSON: []byte(`"say \"hi\"`)}
	w := &worker{r: r}
	seen := map[string]bool{}
	for i := 0; i < 3; i++ {
		w.buildSend("SendMessage", i == 2)
		var v rpcIn
		if err := json.Unmarshal(w.buf, &v); err != nil {
			t.Fatalf("%s: %v", w.buf, err)
		}
		text := v.Params.Message.Parts[0].Text
		if !strings.HasPrefix(text, `say "hi" #abcd-`) || seen[v.Params.Message.MessageID] {
			t.Errorf("text %q id %q", text, v.Params.Message.MessageID)
		}
		seen[v.Params.Message.MessageID] = true
		if want := text[strings.Index(text, "#"):] + `"`; string(w.marker) != want {
			t.Errorf("marker %q, want %q", w.marker, want)
		}
		if v.Params.Configuration.ReturnImmediately != (i == 2) {
			t.Errorf("returnImmediately %v", v.Params.Configuration.ReturnImmediately)
		}
	}
	w.buildGet(`task-"1"`)
	var v rpcIn
	if err := json.Unmarshal(w.buf, &v); err != nil || v.Method != "GetTask" || v.Params.ID != `task-"1"` {
		t.Errorf("%s: %v", w.buf, err)
	}
}

func TestChunkedReaderDecodesExtensionsAndTrailers(t *testing.T) {
	in := "5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nX-Trailer: y\r\n\r\nNEXT"
	br := bufio.NewReaderSize(strings.NewReader(in), 16)
	cr := &chunkedReader{br: br}
	got, err := io.ReadAll(cr)
	if err != nil || string(got) != "hello, world" || !cr.done {
		t.Fatalf("%q %v done=%v", got, err, cr.done)
	}
	rest, _ := io.ReadAll(br)
	if string(rest) != "NEXT" {
		t.Errorf("left %q after the body", rest)
	}
	cr = &chunkedReader{br: bufio.NewReader(strings.NewReader("zz\r\n"))}
	if _, err := io.ReadAll(cr); err == nil {
		t.Error("a bad chunk size was accepted")
	}
}

func TestPercentilesUseNearestRank(t *testing.T) {
	var ns []int64
	for i := 100; i >= 1; i-- {
		ns = append(ns, int64(i)*1e6)
	}
	p := percentiles(ns)
	if p.P50 != 50 || p.P90 != 90 || p.P99 != 99 || p.Max != 100 || p.Mean != 50.5 || p.N != 100 {
		t.Fatalf("%+v", p)
	}
	if one := percentiles([]int64{3e6}); one.P50 != 3 || one.P99 != 3 {
		t.Fatalf("%+v", one)
	}
}

func TestFlagsAreChecked(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-url", "http://x/", "-mode", "poke"},
		{"-url", "http://x/", "-c", "0"},
		{"-url", "http://x/", "-client", "curl"},
		{"-url", "http://x/", "extra"},
	} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != exitUsage {
			t.Errorf("%q: exit %d, stderr %s", args, code, errb.String())
		}
	}
}

func TestJSONOutput(t *testing.T) {
	ts := httptest.NewServer(&fakeServer{})
	defer ts.Close()
	var out, errb bytes.Buffer
	code := run([]string{"-url", ts.URL, "-n", "20", "-c", "2", "-warmup", "0", "-json"}, &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var res Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.OK != 20 || res.Mode != "send" {
		t.Fatalf("%v %+v", err, res)
	}
}

// TestGRPCTransportSendsToAnA2AService runs the gRPC transport against a
// minimal lf.a2a.v1.A2AService that echoes the message into a completed
// task.
func TestGRPCTransportSendsToAnA2AService(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	a2apb.RegisterA2AServiceServer(gs, echoGRPC{})
	go func() { _ = gs.Serve(ln) }()
	defer gs.Stop()
	res, err := Run(context.Background(), Config{URL: ln.Addr().String(), Transport: "grpc", Mode: "send", Concurrency: 2,
		Requests: 20, Timeout: 5 * time.Second, Text: "hi", Client: "raw", PageSize: 50})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK != 20 || res.ErrorsTotal != 0 {
		t.Fatalf("ok %d, errors %d %v", res.OK, res.ErrorsTotal, res.ErrorSamples)
	}
}

type echoGRPC struct {
	a2apb.UnimplementedA2AServiceServer
}

func (echoGRPC) SendMessage(_ context.Context, r *a2apb.SendMessageRequest) (*a2apb.SendMessageResponse, error) {
	m := r.GetMessage()
	return &a2apb.SendMessageResponse{Payload: &a2apb.SendMessageResponse_Task{Task: &a2apb.Task{Id: "t", ContextId: "c",
		Status:    &a2apb.TaskStatus{State: a2apb.TaskState_TASK_STATE_COMPLETED},
		History:   []*a2apb.Message{m},
		Artifacts: []*a2apb.Artifact{{ArtifactId: "a", Parts: m.GetParts()}}}}}, nil
}
