// Package fakemodel is a scripted model server on loopback for driving real
// coding-agent CLIs (Claude Code, Codex CLI, Gemini CLI) without a vendor:
// it speaks the Anthropic Messages API (anthropic.go), the OpenAI Responses
// API (responses.go) and the Gemini API (gemini.go), each with streaming.
//
// The script is one tool round trip. A request that offers the script's
// tool and carries no tool result yet is answered with a call of that tool
// with the script's arguments; a request that carries a tool result is
// answered with text that quotes it (Script.Answer), and the result is
// recorded. Any other request (a CLI's title, classifier or quota call) is
// answered with plain text. The test then checks Results: what the CLI
// gave back to the model after running the tool.
package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
)

// Script is what the model does.
type Script struct {
	// Tool is the name of the tool to call. A CLI may prefix the name it
	// offers (mcp__a2a__a2a_call, mcp_a2a_a2a_call): an offered tool
	// matches when its name is Tool or ends with "_" + Tool.
	Tool string
	// Args are the tool call's arguments.
	Args map[string]any
	// Answer is the final text; %s in it is replaced with the tool result.
	Answer string
}

// Request is one request the server received, for a test's failure
// messages.
type Request struct {
	// API is "anthropic", "responses" or "gemini".
	API string
	// Path is the URL path.
	Path string
	// Tools are the names of the tools the request offered.
	Tools []string
	// Streamed says the request asked for a streamed answer
	// (server-sent events).
	Streamed bool
	// Reply says what the server answered: "call TOOL", "answer", "text"
	// or "error: …".
	Reply string
}

// Server is a running fake model.
type Server struct {
	// URL is the server's base URL, http://127.0.0.1:PORT.
	URL string

	script Script
	srv    *http.Server
	ln     net.Listener
	done   chan struct{}

	mu       sync.Mutex
	requests []Request
	results  []string
	calls    int
}

// Start serves the script on a free loopback port until Close.
func Start(script Script) (*Server, error) {
	if script.Tool == "" {
		return nil, fmt.Errorf("fakemodel: Script.Tool is empty: name the tool the model calls")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fakemodel: listen on loopback: %w", err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), script: script, ln: ln, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/", s.route)
	s.srv = &http.Server{Handler: mux}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// Close stops the server and waits for its serving goroutine.
func (s *Server) Close() error {
	err := s.srv.Close()
	<-s.done
	return err
}

// Results are the tool results the model was given, in order.
func (s *Server) Results() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.results...)
}

// Calls is how many times the model asked for the tool.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Requests are the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Summary lists the requests, one a line, for a failure message.
func (s *Server) Summary() string {
	var b strings.Builder
	for _, r := range s.Requests() {
		fmt.Fprintf(&b, "%s %s streamed=%v tools=%v -> %s\n", r.API, r.Path, r.Streamed, r.Tools, r.Reply)
	}
	return b.String()
}

func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/messages/count_tokens"):
		s.anthropicCountTokens(w, r)
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/messages"):
		s.anthropic(w, r)
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/responses"):
		s.responses(w, r)
	case r.Method == http.MethodPost && strings.Contains(p, "/models/") && strings.Contains(p, ":"):
		s.gemini(w, r)
	default:
		s.record(Request{API: "unknown", Path: r.Method + " " + p, Reply: "error: 404"})
		http.Error(w, "fakemodel: no such endpoint "+r.Method+" "+p+" (it serves /v1/messages, /v1/responses and /v1beta/models/M:generateContent)", http.StatusNotFound)
	}
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r)
}

// decision is what the script does with a request.
type decision struct {
	// call is the offered name of the tool to call; empty when not calling.
	call string
	// answer is the final text when a tool result came back.
	answer string
	// text is a plain answer to a request that is not part of the script.
	text string
}

// decide applies the script to a request that offered tools and carried
// results (tool results found anywhere in the conversation).
func (s *Server) decide(req Request, results []string) decision {
	s.mu.Lock()
	defer s.mu.Unlock()
	var d decision
	switch {
	case len(results) > 0:
		last := results[len(results)-1]
		s.results = append(s.results, last)
		answer := s.script.Answer
		if answer == "" {
			answer = "The tool answered: %s"
		}
		d.answer = strings.ReplaceAll(answer, "%s", last)
		req.Reply = "answer"
	default:
		for _, name := range req.Tools {
			if name == s.script.Tool || strings.HasSuffix(name, "_"+s.script.Tool) {
				d.call = name
			}
		}
		if d.call != "" {
			s.calls++
			req.Reply = "call " + d.call
		} else {
			d.text = "ok"
			req.Reply = "text"
		}
	}
	s.requests = append(s.requests, req)
	return d
}

// argsJSON is the script's arguments as JSON.
func (s *Server) argsJSON() string {
	b, _ := json.Marshal(s.script.Args)
	if s.script.Args == nil {
		return "{}"
	}
	return string(b)
}

// readJSON decodes a request body into v; on failure it answers 400 with
// the reason and returns false.
func (s *Server) readJSON(w http.ResponseWriter, r *http.Request, api string, v any) bool {
	body, err := io.ReadAll(r.Body)
	if err == nil {
		err = json.Unmarshal(body, v)
	}
	if err != nil {
		s.record(Request{API: api, Path: r.URL.Path, Reply: "error: " + err.Error()})
		http.Error(w, "fakemodel: the request body is not the JSON this API takes: "+err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

// sse writes server-sent events; event is empty for data-only streams.
type sse struct {
	w http.ResponseWriter
}

func startSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return sse{w: w}
}

func (e sse) send(event string, data any) {
	b, _ := json.Marshal(data)
	if event != "" {
		fmt.Fprintf(e.w, "event: %s\n", event)
	}
	fmt.Fprintf(e.w, "data: %s\n\n", b)
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
}

// textOf flattens a result's content (a string, or a list of parts with
// "text") into text.
func textOf(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		var parts []string
		for _, p := range x {
			parts = append(parts, textOf(p))
		}
		return strings.Join(parts, "\n")
	case map[string]any:
		for _, k := range []string{"text", "output", "content", "result"} {
			if t, ok := x[k]; ok {
				return textOf(t)
			}
		}
		b, _ := json.Marshal(x)
		return string(b)
	case nil:
		return ""
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}
