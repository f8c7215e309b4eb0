package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
)

// maxBody bounds one response body (a ListTasks page of big tasks fits).
const maxBody = 64 << 20

// maxErrorSamples is how many failure details a run keeps for the report.
const maxErrorSamples = 5

// runner holds what all workers of one run share.
type runner struct {
	cfg      Config
	urls     []*url.URL      // worker i drives urls[i mod len]
	tr       *http.Transport // -client net/http
	ctx      context.Context // canceled at the end of the run
	prefix   string          // random per run, so message ids never repeat across runs
	textJSON []byte          // cfg.Text as a JSON string without its closing quote
	header   http.Header     // template; each worker clones it once

	measureStart time.Time // end of the warm-up
	deadline     time.Time // end of the measurement (-d); zero with -n
	seq          atomic.Int64
	tickets      atomic.Int64 // measured operations started (-n)
}

// Run drives the configured load and returns the measurement.
func Run(parent context.Context, cfg Config) (*Result, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	var target string
	var urls []*url.URL
	if cfg.Transport == "grpc" {
		var err error
		if target, err = grpcTarget(cfg.URL); err != nil {
			return nil, err
		}
		urls = []*url.URL{{Scheme: "http", Host: target, Path: "/"}} // the unused HTTP client's
	} else {
		var err error
		if urls, err = parseURLs(cfg.URL); err != nil {
			return nil, err
		}
	}
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	text, _ := json.Marshal(cfg.Text)
	r := &runner{
		cfg:      cfg,
		urls:     urls,
		prefix:   hex.EncodeToString(rnd[:]),
		textJSON: text[:len(text)-1],
		header: http.Header{
			"Content-Type": {"application/json"},
			"A2A-Version":  {"1.0"},
			"Accept":       {"application/json"},
		},
	}
	if cfg.Mode == "stream" {
		r.header.Set("Accept", "text/event-stream")
	}
	if cfg.Token != "" {
		r.header.Set("Authorization", "Bearer "+cfg.Token)
	}
	if cfg.Client == "net/http" {
		r.tr = newStdTransport(cfg)
		defer r.tr.CloseIdleConnections()
	}

	cpu0 := cpuTime()
	start := time.Now()
	r.measureStart = start.Add(cfg.Warmup)
	var cancel context.CancelFunc
	if cfg.Requests > 0 {
		r.ctx, cancel = context.WithCancel(parent)
	} else {
		r.deadline = r.measureStart.Add(cfg.Duration)
		r.ctx, cancel = context.WithDeadline(parent, r.deadline)
	}
	defer cancel()

	workers := make([]*worker, cfg.Concurrency)
	var wg sync.WaitGroup
	for i := range workers {
		w := r.newWorker(i)
		if target != "" {
			if err := w.dialGRPC(target); err != nil {
				return nil, err
			}
			defer w.grpcConn.Close()
		}
		workers[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.loop()
		}()
	}
	go func() {
		// Unblock raw connections at the end of the run (net/http requests
		// carry the context themselves).
		<-r.ctx.Done()
		for _, w := range workers {
			w.cl.abort()
		}
	}()
	wg.Wait()
	end := time.Now()
	for _, w := range workers {
		w.cl.release(false)
	}
	cpu := cpuTime() - cpu0

	// The measured window: the configured duration, or up to the last
	// measured completion with -n, or up to an interruption.
	window := cfg.Duration
	if cfg.Requests > 0 {
		var last time.Time
		for _, w := range workers {
			if w.lastEnd.After(last) {
				last = w.lastEnd
			}
		}
		window = last.Sub(r.measureStart)
	} else if end.Before(r.deadline) {
		window = end.Sub(r.measureStart)
	}
	if parent.Err() != nil && end.Before(r.measureStart) {
		return nil, errors.New("interrupted during the warm-up")
	}
	return r.collect(workers, window, cpu), nil
}

// worker is one client: it runs operations back to back on its own
// connection and keeps its own samples, so the hot path takes no lock.
type worker struct {
	r      *runner
	cl     client
	buf    []byte // request body
	resp   []byte // response body
	ev     []byte // SSE event data being assembled
	marker []byte // `#<prefix>-<seq>"`: must come back in the answer
	br     *bufio.Reader
	timer  *time.Timer
	dec    taskEnvelope

	// -transport grpc
	grpcConn *grpc.ClientConn
	grpcAPI  a2apb.A2AServiceClient
	grpcMD   metadata.MD

	lat, ack, first []int64 // nanoseconds
	ok, polls       int64
	events          int64
	allOps, httpReq int64
	lastEnd         time.Time
	errs            map[string]int64
	samples         []string
}

// parseURLs parses -url: one http(s) URL, or several separated by commas
// (the workers spread over them in turn, e.g. the agents of one host).
func parseURLs(list string) ([]*url.URL, error) {
	var out []*url.URL
	for _, s := range strings.Split(list, ",") {
		u, err := url.Parse(strings.TrimSpace(s))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("-url %q is not an http(s) URL", s)
		}
		out = append(out, u)
	}
	return out, nil
}

func (r *runner) newWorker(i int) *worker {
	u := r.urls[i%len(r.urls)]
	w := &worker{
		r:    r,
		buf:  make([]byte, 0, 512),
		resp: make([]byte, 0, 8<<10),
		br:   bufio.NewReaderSize(nil, 16<<10),
		errs: map[string]int64{},
	}
	if r.cfg.Client == "net/http" {
		w.cl = newStdClient(r.ctx, r.tr, u, r.header)
	} else {
		w.cl = newRawClient(u, r.header, r.cfg.Timeout)
	}
	hint := 4096
	if r.cfg.Requests > 0 {
		hint = int(r.cfg.Requests/int64(r.cfg.Concurrency)) + 1
	}
	w.lat = make([]int64, 0, hint)
	w.timer = time.NewTimer(time.Hour)
	w.timer.Stop()
	switch r.cfg.Mode {
	case "send-async":
		w.ack = make([]int64, 0, hint)
	case "stream":
		w.first = make([]int64, 0, hint)
	}
	return w
}

// outcome is what one operation reports besides its total time.
type outcome struct {
	kind   string // "" on success, else the error kind
	detail string
	ack    time.Duration // send-async: the first answer
	first  time.Duration // stream: the first event
	polls  int64
	events int64
}

func (w *worker) loop() {
	r := w.r
	for r.ctx.Err() == nil {
		start := time.Now()
		measured := !start.Before(r.measureStart)
		if r.cfg.Requests > 0 && measured && r.tickets.Add(1) > r.cfg.Requests {
			return
		}
		var o outcome
		switch r.cfg.Mode {
		case "send":
			if w.grpcAPI != nil {
				o = w.sendGRPC()
			} else {
				o = w.send(start)
			}
		case "send-async":
			o = w.sendAsync(start)
		case "stream":
			o = w.stream(start)
		case "list":
			o = w.list()
		}
		end := time.Now()
		if o.kind != "" && r.ctx.Err() != nil {
			return // cut off by the end of the run: neither a result nor an error
		}
		w.allOps++
		if r.cfg.Requests > 0 {
			if !measured {
				continue
			}
		} else if end.Before(r.measureStart) || end.After(r.deadline) {
			continue
		}
		w.lastEnd = end
		if o.kind != "" {
			if w.errs[o.kind] == 0 && len(w.samples) < maxErrorSamples {
				w.samples = append(w.samples, o.kind+": "+o.detail)
			}
			w.errs[o.kind]++
			if o.kind == "transport" {
				w.pause(backoff) // a refused or broken connection: do not spin
			}
			continue
		}
		w.ok++
		w.lat = append(w.lat, int64(end.Sub(start)))
		switch r.cfg.Mode {
		case "send-async":
			w.ack = append(w.ack, int64(o.ack))
			w.polls += o.polls
		case "stream":
			w.first = append(w.first, int64(o.first))
			w.events += o.events
		}
	}
}

// backoff is the pause after a transport error.
const backoff = 10 * time.Millisecond

// pause waits for d or the end of the run.
func (w *worker) pause(d time.Duration) bool {
	w.timer.Reset(d)
	select {
	case <-w.timer.C:
		return true
	case <-w.r.ctx.Done():
		w.timer.Stop()
		return false
	}
}

// post sends w.buf and returns the response with its headers read; the
// caller reads the body and releases the client.
func (w *worker) post() (response, outcome) {
	w.httpReq++
	resp, err := w.cl.send(w.buf)
	if err != nil {
		kind := "transport"
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			kind = "timeout"
		}
		return response{}, outcome{kind: kind, detail: err.Error()}
	}
	return resp, outcome{}
}

// call posts w.buf and reads the whole answer into w.resp; the outcome
// names an HTTP or JSON-RPC failure.
func (w *worker) call() outcome {
	resp, o := w.post()
	if o.kind != "" {
		return o
	}
	err := w.readBody(resp.body)
	w.cl.release(err == nil)
	if err != nil {
		return outcome{kind: "read", detail: err.Error()}
	}
	if resp.status != http.StatusOK {
		return outcome{kind: "http_" + strconv.Itoa(resp.status), detail: snippet(w.resp)}
	}
	return rpcOutcome(w.resp)
}

func (w *worker) readBody(body io.Reader) error {
	b := w.resp[:0]
	for {
		if len(b) == cap(b) {
			if len(b) >= maxBody {
				return fmt.Errorf("response larger than %d bytes", maxBody)
			}
			b = append(b, 0)[:len(b)]
		}
		n, err := body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			w.resp = b
			return nil
		}
		if err != nil {
			w.resp = b
			return err
		}
	}
}

var (
	keyResult    = []byte(`"result"`)
	keyCompleted = []byte(`"TASK_STATE_COMPLETED"`)
	keyTasks     = []byte(`"tasks"`)
	keyState     = []byte(`"state":"`)
)

// rpcOutcome classifies a JSON-RPC response body: a success has a result.
// The check is a byte search (the load tool must stay cheap); only a
// failure is decoded, to name its error code. A quoted "result" cannot
// appear inside a JSON string, where quotes are escaped.
func rpcOutcome(body []byte) outcome {
	if bytes.Contains(body, keyResult) {
		return outcome{}
	}
	var e struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		return outcome{kind: "invalid_json", detail: snippet(body)}
	}
	if e.Error == nil {
		return outcome{kind: "no_result", detail: snippet(body)}
	}
	return outcome{kind: "rpc_" + strconv.Itoa(e.Error.Code), detail: e.Error.Message}
}

// stateOf returns the first task state in body, for error reports.
func stateOf(body []byte) string {
	i := bytes.Index(body, keyState)
	if i < 0 {
		return "none"
	}
	s := body[i+len(keyState):]
	if j := bytes.IndexByte(s, '"'); j >= 0 && j < 64 {
		return string(s[:j])
	}
	return "unreadable"
}

func snippet(b []byte) string {
	const n = 200
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// buildSend writes a SendMessage (or SendStreamingMessage) request with a
// fresh message id and marker into w.buf.
func (w *worker) buildSend(method string, async bool) {
	r := w.r
	seq := r.seq.Add(1)
	b := append(w.buf[:0], `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `,"method":"`...)
	b = append(b, method...)
	b = append(b, `","params":{"message":{"messageId":"`...)
	b = append(b, r.prefix...)
	b = append(b, '-')
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `","role":"ROLE_USER","parts":[{"text":`...)
	b = append(b, r.textJSON...)
	mark := len(b) + 1
	b = append(b, " #"...)
	b = append(b, r.prefix...)
	b = append(b, '-')
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, '"')
	w.marker = append(w.marker[:0], b[mark:]...)
	b = append(b, `}]}`...)
	if async {
		b = append(b, `,"configuration":{"returnImmediately":true}`...)
	}
	w.buf = append(b, `}}`...)
}

// send is one blocking SendMessage: the answer must be a completed task
// carrying the marker twice (the request in the history and the echo).
func (w *worker) send(time.Time) outcome {
	w.buildSend("SendMessage", false)
	if o := w.call(); o.kind != "" {
		return o
	}
	if !bytes.Contains(w.resp, keyCompleted) {
		return outcome{kind: "state_" + stateOf(w.resp), detail: snippet(w.resp)}
	}
	if bytes.Count(w.resp, w.marker) < 2 {
		return outcome{kind: "no_echo", detail: snippet(w.resp)}
	}
	return outcome{}
}

// taskEnvelope decodes the little send-async needs from a SendMessage
// result ({"task": {...}}) or a GetTask result (the task itself).
type taskEnvelope struct {
	Result struct {
		Task   *taskHead `json:"task"`
		ID     string    `json:"id"`
		Status struct {
			State string `json:"state"`
		} `json:"status"`
	} `json:"result"`
}

type taskHead struct {
	ID     string `json:"id"`
	Status struct {
		State string `json:"state"`
	} `json:"status"`
}

// terminal reports whether state ends the wait, and whether it is success.
func terminal(state string) (done, ok bool) {
	switch state {
	case "TASK_STATE_COMPLETED":
		return true, true
	case "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED",
		"TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED":
		return true, false
	}
	return false, false
}

// sendAsync sends with returnImmediately and polls GetTask until the task
// is terminal; the final task must carry the echo.
func (w *worker) sendAsync(start time.Time) outcome {
	w.buildSend("SendMessage", true)
	if o := w.call(); o.kind != "" {
		return o
	}
	var o outcome
	o.ack = time.Since(start)
	w.dec = taskEnvelope{}
	if err := json.Unmarshal(w.resp, &w.dec); err != nil {
		return outcome{kind: "invalid_json", detail: snippet(w.resp)}
	}
	if w.dec.Result.Task == nil || w.dec.Result.Task.ID == "" {
		return outcome{kind: "no_task", detail: snippet(w.resp)}
	}
	id := w.dec.Result.Task.ID
	state := w.dec.Result.Task.Status.State
	limit := start.Add(w.r.cfg.Timeout)
	for {
		if done, ok := terminal(state); done {
			if !ok {
				return outcome{kind: "state_" + state, detail: snippet(w.resp)}
			}
			if !bytes.Contains(w.resp, w.marker) {
				return outcome{kind: "no_echo", detail: snippet(w.resp)}
			}
			return o
		}
		if time.Now().After(limit) {
			return outcome{kind: "poll_timeout", detail: "task " + id + " still " + state}
		}
		if w.r.cfg.Poll > 0 && !w.pause(w.r.cfg.Poll) {
			return outcome{kind: "canceled"}
		}
		w.buildGet(id)
		o.polls++
		if oo := w.call(); oo.kind != "" {
			return oo
		}
		w.dec = taskEnvelope{}
		if err := json.Unmarshal(w.resp, &w.dec); err != nil {
			return outcome{kind: "invalid_json", detail: snippet(w.resp)}
		}
		state = w.dec.Result.Status.State
		if state == "" {
			return outcome{kind: "no_task", detail: snippet(w.resp)}
		}
	}
}

func (w *worker) buildGet(id string) {
	seq := w.r.seq.Add(1)
	b := append(w.buf[:0], `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `,"method":"GetTask","params":{"id":`...)
	b = strconv.AppendQuote(b, id)
	w.buf = append(b, `}}`...)
}

// list is one ListTasks of the first page.
func (w *worker) list() outcome {
	seq := w.r.seq.Add(1)
	b := append(w.buf[:0], `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `,"method":"ListTasks","params":{"pageSize":`...)
	b = strconv.AppendInt(b, int64(w.r.cfg.PageSize), 10)
	w.buf = append(b, `}}`...)
	if o := w.call(); o.kind != "" {
		return o
	}
	if !bytes.Contains(w.resp, keyTasks) {
		return outcome{kind: "no_tasks", detail: snippet(w.resp)}
	}
	return outcome{}
}

var (
	dataPrefix  = []byte("data:")
	eventStream = []byte("text/event-stream")
)

// stream is one SendStreamingMessage read to its end: every event must be
// a result, the last state must be COMPLETED and the echo must come back.
func (w *worker) stream(start time.Time) outcome {
	w.buildSend("SendStreamingMessage", false)
	resp, o := w.post()
	if o.kind != "" {
		return o
	}
	if resp.status != http.StatusOK || !resp.sse {
		// An error answered as plain JSON (or an HTTP failure).
		err := w.readBody(resp.body)
		w.cl.release(err == nil)
		if err != nil {
			return outcome{kind: "read", detail: err.Error()}
		}
		if resp.status != http.StatusOK {
			return outcome{kind: "http_" + strconv.Itoa(resp.status), detail: snippet(w.resp)}
		}
		if oo := rpcOutcome(w.resp); oo.kind != "" {
			return oo
		}
		return outcome{kind: "not_sse", detail: snippet(w.resp)}
	}
	reusable := false
	defer func() { w.cl.release(reusable) }()
	w.br.Reset(resp.body)
	defer w.br.Reset(nil)
	w.ev = w.ev[:0]
	var (
		st   streamState
		line []byte
	)
	for {
		chunk, err := w.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			line = append(line, chunk...)
			continue
		}
		if line != nil {
			chunk = append(line, chunk...)
			line = nil
		}
		if oo := w.streamLine(bytes.TrimRight(chunk, "\r\n"), start, &o, &st); oo.kind != "" {
			return oo
		}
		if err == io.EOF {
			if oo := w.streamLine(nil, start, &o, &st); oo.kind != "" {
				return oo // an event not followed by a blank line
			}
			break
		}
		if err != nil {
			return outcome{kind: "read", detail: err.Error()}
		}
	}
	reusable = true
	if !st.completed {
		return outcome{kind: "stream_incomplete", detail: fmt.Sprintf("ended after %d events without COMPLETED", o.events)}
	}
	if st.marks < 2 {
		return outcome{kind: "no_echo", detail: fmt.Sprintf("marker seen %d times in %d events", st.marks, o.events)}
	}
	return o
}

// streamState is what a stream has shown so far.
type streamState struct {
	marks     int
	completed bool
}

// streamLine takes one SSE line: data lines are collected, a blank line
// ends an event, which is checked and counted. Other fields are ignored.
func (w *worker) streamLine(l []byte, start time.Time, o *outcome, st *streamState) outcome {
	if len(l) > 0 {
		if bytes.HasPrefix(l, dataPrefix) {
			d := l[len(dataPrefix):]
			if len(d) > 0 && d[0] == ' ' {
				d = d[1:]
			}
			if len(w.ev) > 0 {
				w.ev = append(w.ev, '\n')
			}
			w.ev = append(w.ev, d...)
		}
		return outcome{}
	}
	if len(w.ev) == 0 {
		return outcome{}
	}
	o.events++
	if o.events == 1 {
		o.first = time.Since(start)
	}
	defer func() { w.ev = w.ev[:0] }()
	if oo := rpcOutcome(w.ev); oo.kind != "" {
		return oo
	}
	st.marks += bytes.Count(w.ev, w.marker)
	if bytes.Contains(w.ev, keyCompleted) {
		st.completed = true
	} else if s := stateOf(w.ev); s != "none" {
		if done, _ := terminal(s); done {
			return outcome{kind: "state_" + s, detail: snippet(w.ev)}
		}
	}
	return outcome{}
}
