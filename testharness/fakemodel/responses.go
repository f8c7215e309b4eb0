package fakemodel

import (
	"encoding/json"
	"net/http"
)

// The OpenAI Responses API (POST /v1/responses), as Codex CLI calls it
// through a model_providers entry with wire_api = "responses": streamed
// (server-sent events response.created, response.output_item.added/done,
// response.output_text.delta, response.completed) or not. A tool result is
// an input item of type "function_call_output".

type responsesRequest struct {
	Model  string `json:"model"`
	Stream bool   `json:"stream"`
	Input  []struct {
		Type   string `json:"type"`
		Output any    `json:"output"`
	} `json:"input"`
	Tools []struct {
		Type string `json:"type"`
		Name string `json:"name"`
		// Tools grouped in a namespace (Codex offers one per MCP
		// server) carry their functions here; a call of one names its
		// namespace.
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	} `json:"tools"`
}

func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
	var req responsesRequest
	if !s.readJSON(w, r, "responses", &req) {
		return
	}
	rec := Request{API: "responses", Path: r.URL.Path, Streamed: req.Stream}
	namespace := map[string]string{} // a namespaced tool's namespace
	for _, t := range req.Tools {
		if t.Name != "" {
			rec.Tools = append(rec.Tools, t.Name)
		}
		for _, sub := range t.Tools {
			rec.Tools = append(rec.Tools, sub.Name)
			namespace[sub.Name] = t.Name
		}
	}
	var results []string
	for _, in := range req.Input {
		if in.Type == "function_call_output" {
			results = append(results, textOf(in.Output))
		}
	}
	d := s.decide(rec, results)

	var item map[string]any
	if d.call != "" {
		item = map[string]any{"type": "function_call", "id": "fc_fake1", "call_id": "call_fake1",
			"name": d.call, "arguments": s.argsJSON(), "status": "completed"}
		if ns, ok := namespace[d.call]; ok {
			item["namespace"] = ns
		}
	} else {
		text := d.answer
		if text == "" {
			text = d.text
		}
		item = map[string]any{"type": "message", "id": "msg_fake1", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
	}
	usage := map[string]any{"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
		"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}
	resp := map[string]any{"id": "resp_fake1", "object": "response", "model": req.Model, "status": "completed",
		"output": []any{item}, "usage": usage}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp)
		return
	}
	e := startSSE(w)
	e.send("response.created", map[string]any{"type": "response.created",
		"response": map[string]any{"id": "resp_fake1", "object": "response", "status": "in_progress", "output": []any{}}})
	e.send("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	if item["type"] == "message" {
		text := item["content"].([]any)[0].(map[string]any)["text"]
		e.send("response.output_text.delta", map[string]any{"type": "response.output_text.delta",
			"item_id": "msg_fake1", "output_index": 0, "content_index": 0, "delta": text})
	}
	e.send("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	e.send("response.completed", map[string]any{"type": "response.completed", "response": resp})
}
