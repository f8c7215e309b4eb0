package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/google/uuid"
)

// The floor is the least an A2A echo server can do in Go: net/http, the
// JSON-RPC request decoded with encoding/json, a completed task built and
// encoded with encoding/json. No validation beyond the shape, no store but
// a bounded map (for GetTask), no security, no host round trip. Whatever a
// real server spends above it is the price of its features.
//
// It runs as its own process (a2a-bench floor-server), like every other
// server in the comparison, so it competes for the same cores.

// floorMaxTasks bounds the tasks the floor keeps for GetTask.
const floorMaxTasks = 100_000

type floorServer struct {
	card []byte
	// hop, for floor-hop, is the round trip each send makes to the child
	// before it is answered (see hop.go).
	hop *hopClient

	mu    sync.Mutex
	tasks map[string]*floorTask
	ring  []string
	next  int
}

type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type floorPart struct {
	Text string `json:"text"`
}

type floorMessage struct {
	MessageID string      `json:"messageId"`
	ContextID string      `json:"contextId,omitempty"`
	TaskID    string      `json:"taskId,omitempty"`
	Role      string      `json:"role"`
	Parts     []floorPart `json:"parts"`
}

type floorStatus struct {
	State     string `json:"state"`
	Timestamp string `json:"timestamp"`
}

type floorArtifact struct {
	ArtifactID string      `json:"artifactId"`
	Name       string      `json:"name,omitempty"`
	Parts      []floorPart `json:"parts"`
}

type floorTask struct {
	ID        string          `json:"id"`
	ContextID string          `json:"contextId"`
	Status    floorStatus     `json:"status"`
	Artifacts []floorArtifact `json:"artifacts,omitempty"`
	History   []floorMessage  `json:"history,omitempty"`
}

type floorSendParams struct {
	Message       floorMessage `json:"message"`
	Configuration struct {
		ReturnImmediately bool `json:"returnImmediately"`
	} `json:"configuration"`
}

type floorStatusEvent struct {
	StatusUpdate struct {
		TaskID    string      `json:"taskId"`
		ContextID string      `json:"contextId"`
		Status    floorStatus `json:"status"`
	} `json:"statusUpdate"`
}

type floorArtifactEvent struct {
	ArtifactUpdate struct {
		TaskID    string        `json:"taskId"`
		ContextID string        `json:"contextId"`
		Artifact  floorArtifact `json:"artifact"`
		LastChunk bool          `json:"lastChunk"`
	} `json:"artifactUpdate"`
}

func newFloorServer(base string) *floorServer {
	card, _ := json.Marshal(map[string]any{
		"name":        "Floor",
		"description": "net/http + encoding/json echo: the least an A2A server can do",
		"version":     "1.0.0",
		"supportedInterfaces": []map[string]string{
			{"url": base + "/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
		},
		"capabilities":       map[string]bool{"streaming": true},
		"defaultInputModes":  []string{"text/plain"},
		"defaultOutputModes": []string{"text/plain"},
		"skills":             []any{},
	})
	return &floorServer{card: card, tasks: map[string]*floorTask{}, ring: make([]string, floorMaxTasks)}
}

func (f *floorServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/.well-known/agent-card.json" {
		w.Header().Set("Content-Type", "application/json")
		w.Write(f.card)
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "POST JSON-RPC here", http.StatusMethodNotAllowed)
		return
	}
	var req rpcRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<20)).Decode(&req); err != nil {
		f.reply(w, rpcResponse{ID: json.RawMessage("null"), Error: &rpcError{-32700, "parse error: " + err.Error()}})
		return
	}
	switch req.Method {
	case "SendMessage", "SendStreamingMessage":
		params := []byte(req.Params)
		if f.hop != nil {
			// The request goes to the child and back; the answer is made of
			// what came back.
			back, err := f.hop.call(r.Context(), params)
			if err != nil {
				f.reply(w, rpcResponse{ID: req.ID, Error: &rpcError{-32603, "hop: " + err.Error()}})
				return
			}
			params = back
		}
		var p floorSendParams
		if err := json.Unmarshal(params, &p); err != nil || p.Message.MessageID == "" || len(p.Message.Parts) == 0 {
			f.reply(w, rpcResponse{ID: req.ID, Error: &rpcError{-32602, "invalid params: a message with an id and parts is required"}})
			return
		}
		t := f.echo(p.Message)
		if req.Method == "SendStreamingMessage" {
			f.stream(w, req.ID, t)
			return
		}
		if p.Configuration.ReturnImmediately {
			f.keep(t)
			submitted := *t
			submitted.Artifacts = nil
			submitted.Status = floorStatus{State: "TASK_STATE_SUBMITTED", Timestamp: t.Status.Timestamp}
			f.reply(w, rpcResponse{ID: req.ID, Result: map[string]any{"task": &submitted}})
			return
		}
		f.reply(w, rpcResponse{ID: req.ID, Result: map[string]any{"task": t}})
	case "GetTask":
		var p struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(req.Params, &p)
		f.mu.Lock()
		t := f.tasks[p.ID]
		f.mu.Unlock()
		if t == nil {
			f.reply(w, rpcResponse{ID: req.ID, Error: &rpcError{-32001, "task not found"}})
			return
		}
		f.reply(w, rpcResponse{ID: req.ID, Result: t})
	default:
		f.reply(w, rpcResponse{ID: req.ID, Error: &rpcError{-32601, "method not found: " + req.Method}})
	}
}

// echo is the work every server in the comparison does: a new task whose
// answer is the text it was sent.
func (f *floorServer) echo(m floorMessage) *floorTask {
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	t := &floorTask{ID: uuid.NewString(), ContextID: m.ContextID}
	if t.ContextID == "" {
		t.ContextID = uuid.NewString()
	}
	m.TaskID, m.ContextID = t.ID, t.ContextID
	t.History = []floorMessage{m}
	t.Artifacts = []floorArtifact{{ArtifactID: t.ID + "-answer", Name: "answer", Parts: m.Parts}}
	t.Status = floorStatus{State: "TASK_STATE_COMPLETED", Timestamp: now}
	return t
}

func (f *floorServer) keep(t *floorTask) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if old := f.ring[f.next]; old != "" {
		delete(f.tasks, old)
	}
	f.ring[f.next] = t.ID
	f.next = (f.next + 1) % len(f.ring)
	f.tasks[t.ID] = t
}

func (f *floorServer) reply(w http.ResponseWriter, resp rpcResponse) {
	resp.JSONRPC = "2.0"
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// stream answers SendStreamingMessage with the four events the other
// servers send: the submitted task, WORKING, the artifact, COMPLETED.
func (f *floorServer) stream(w http.ResponseWriter, id json.RawMessage, t *floorTask) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	fl, _ := w.(http.Flusher)
	submitted := *t
	submitted.Artifacts = nil
	submitted.Status.State = "TASK_STATE_SUBMITTED"
	var working, completed floorStatusEvent
	working.StatusUpdate.TaskID, working.StatusUpdate.ContextID = t.ID, t.ContextID
	working.StatusUpdate.Status = floorStatus{State: "TASK_STATE_WORKING", Timestamp: t.Status.Timestamp}
	completed.StatusUpdate = working.StatusUpdate
	completed.StatusUpdate.Status.State = "TASK_STATE_COMPLETED"
	var art floorArtifactEvent
	art.ArtifactUpdate.TaskID, art.ArtifactUpdate.ContextID = t.ID, t.ContextID
	art.ArtifactUpdate.Artifact, art.ArtifactUpdate.LastChunk = t.Artifacts[0], true
	enc := json.NewEncoder(w)
	for _, ev := range []any{map[string]any{"task": &submitted}, &working, &art, &completed} {
		io.WriteString(w, "data: ")
		if err := enc.Encode(rpcResponse{JSONRPC: "2.0", ID: id, Result: ev}); err != nil {
			return
		}
		io.WriteString(w, "\n")
		if fl != nil {
			fl.Flush()
		}
	}
}

// floorMain is "a2a-bench floor-server": serve until SIGTERM or SIGINT.
func floorMain(args []string) int {
	fs := flag.NewFlagSet("a2a-bench floor-server", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "listen `ADDRESS` (loopback)")
	hop := fs.Bool("hop", false, "floor-hop: answer each send after one gRPC round trip over a long-lived stream to a child process")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "floor-server: %v\n", err)
		return exitError
	}
	base := "http://" + ln.Addr().String()
	fsrv := newFloorServer(base)
	if *hop {
		self, err := os.Executable()
		if err == nil {
			fsrv.hop, err = startHop(self)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "floor-server: %v\n", err)
			return exitError
		}
		defer fsrv.hop.close()
	}
	srv := &http.Server{Handler: fsrv, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signalContext()
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	fmt.Printf("LISTENING %s\n", base)
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		fmt.Fprintf(os.Stderr, "floor-server: %v\n", err)
		return exitError
	}
	return exitOK
}
