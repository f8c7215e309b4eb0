package fakemodel

import (
	"encoding/json"
	"net/http"
)

// The Anthropic Messages API (POST /v1/messages), as Claude Code calls it
// with ANTHROPIC_BASE_URL: streamed (stream: true, server-sent events
// message_start, content_block_start/delta/stop, message_delta,
// message_stop) or not. A tool result is a "tool_result" content block of
// a user message.

type anthropicRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

type anthropicBlock struct {
	Type    string `json:"type"`
	Content any    `json:"content"`
}

func (s *Server) anthropic(w http.ResponseWriter, r *http.Request) {
	var req anthropicRequest
	if !s.readJSON(w, r, "anthropic", &req) {
		return
	}
	rec := Request{API: "anthropic", Path: r.URL.Path, Streamed: req.Stream}
	for _, t := range req.Tools {
		rec.Tools = append(rec.Tools, t.Name)
	}
	var results []string
	for _, m := range req.Messages {
		var blocks []anthropicBlock
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue // a plain string content
		}
		for _, b := range blocks {
			if b.Type == "tool_result" {
				results = append(results, textOf(b.Content))
			}
		}
	}
	d := s.decide(rec, results)

	var block map[string]any
	stop := "end_turn"
	switch {
	case d.call != "":
		block = map[string]any{"type": "tool_use", "id": "toolu_fake1", "name": d.call, "input": s.script.Args}
		stop = "tool_use"
	case d.answer != "":
		block = map[string]any{"type": "text", "text": d.answer}
	default:
		block = map[string]any{"type": "text", "text": d.text}
	}
	model := req.Model
	if model == "" {
		model = "fake-model"
	}
	usage := map[string]any{"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	msg := map[string]any{"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
		"stop_reason": nil, "stop_sequence": nil, "usage": usage}
	if !req.Stream {
		msg["content"] = []any{block}
		msg["stop_reason"] = stop
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(msg)
		return
	}
	msg["content"] = []any{}
	e := startSSE(w)
	e.send("message_start", map[string]any{"type": "message_start", "message": msg})
	if block["type"] == "tool_use" {
		e.send("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": block["id"], "name": block["name"], "input": map[string]any{}}})
		e.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": s.argsJSON()}})
	} else {
		e.send("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		e.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": block["text"]}})
	}
	e.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	e.send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}})
	e.send("message_stop", map[string]any{"type": "message_stop"})
}

// anthropicCountTokens answers POST /v1/messages/count_tokens.
func (s *Server) anthropicCountTokens(w http.ResponseWriter, r *http.Request) {
	s.record(Request{API: "anthropic", Path: r.URL.Path, Reply: "count"})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"input_tokens": 10}`))
}
