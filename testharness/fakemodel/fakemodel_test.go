package fakemodel

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func post(t *testing.T, url string, body any) (string, string) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s: %s", url, resp.Status, out)
	}
	return resp.Header.Get("Content-Type"), string(out)
}

// Each API: a request offering the tool gets a call of it with the
// script's arguments (under the name the CLI offered); a request carrying
// the tool's result gets the answer quoting it, and the result is
// recorded; a request without the tool gets plain text.
func TestEachAPICallsTheToolThenQuotesItsResult(t *testing.T) {
	const result = "THE PEER SAID HI"
	cases := []struct {
		name             string
		path             string
		offer, give, nop any
		call             []string // in the answer to offer
		offered          string   // the name the call uses
		stream           bool
	}{
		{
			name:    "anthropic messages, streamed",
			path:    "/v1/messages",
			offer:   map[string]any{"stream": true, "messages": []any{map[string]any{"role": "user", "content": "go"}}, "tools": []any{map[string]any{"name": "mcp__a2a__a2a_call"}}},
			give:    map[string]any{"stream": true, "messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_fake1", "content": []any{map[string]any{"type": "text", "text": result}}}}}}, "tools": []any{map[string]any{"name": "mcp__a2a__a2a_call"}}},
			nop:     map[string]any{"messages": []any{map[string]any{"role": "user", "content": "title?"}}},
			offered: "mcp__a2a__a2a_call",
			call:    []string{"event: content_block_start", `"type":"tool_use"`, `"name":"mcp__a2a__a2a_call"`, `input_json_delta`, `\"agent\":\"peer\"`, `"stop_reason":"tool_use"`, "event: message_stop"},
			stream:  true,
		},
		{
			name:    "openai responses, streamed, namespaced tool",
			path:    "/v1/responses",
			offer:   map[string]any{"stream": true, "input": []any{map[string]any{"type": "message", "role": "user"}}, "tools": []any{map[string]any{"type": "namespace", "name": "mcp__a2a", "tools": []any{map[string]any{"name": "a2a_call"}}}}},
			give:    map[string]any{"stream": true, "input": []any{map[string]any{"type": "function_call_output", "call_id": "call_fake1", "output": result}}, "tools": []any{map[string]any{"type": "namespace", "name": "mcp__a2a", "tools": []any{map[string]any{"name": "a2a_call"}}}}},
			nop:     map[string]any{"input": []any{}},
			offered: "a2a_call",
			call:    []string{"event: response.output_item.done", `"type":"function_call"`, `"name":"a2a_call"`, `"namespace":"mcp__a2a"`, `\"agent\":\"peer\"`, "event: response.completed"},
			stream:  true,
		},
		{
			name:    "gemini streamGenerateContent",
			path:    "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
			offer:   map[string]any{"contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "go"}}}}, "tools": []any{map[string]any{"functionDeclarations": []any{map[string]any{"name": "mcp_a2a_a2a_call"}}}}},
			give:    map[string]any{"contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"functionResponse": map[string]any{"name": "mcp_a2a_a2a_call", "response": map[string]any{"content": []any{map[string]any{"text": result}}}}}}}}},
			nop:     map[string]any{"contents": []any{}},
			offered: "mcp_a2a_a2a_call",
			call:    []string{"data: ", `"functionCall":{"args":{"agent":"peer"`, `"name":"mcp_a2a_a2a_call"`},
			// streamGenerateContent?alt=sse is server-sent events.
			stream: true,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Start(Script{Tool: "a2a_call", Args: map[string]any{"agent": "peer", "message": "hi"}, Answer: "Peer: %s"})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ct, out := post(t, s.URL+c.path, c.offer)
			if c.stream && !strings.HasPrefix(ct, "text/event-stream") {
				t.Errorf("content type %q, want text/event-stream", ct)
			}
			for _, want := range c.call {
				if !strings.Contains(out, want) {
					t.Errorf("the call lacks %s:\n%s", want, out)
				}
			}
			if s.Calls() != 1 {
				t.Errorf("Calls() = %d, want 1", s.Calls())
			}
			if r := s.Requests(); len(r) != 1 || r[0].Streamed != c.stream || r[0].Reply != "call "+c.offered {
				t.Errorf("Requests() = %+v, want one streamed=%v call of %s", r, c.stream, c.offered)
			}
			_, out = post(t, s.URL+c.path, c.give)
			if !strings.Contains(out, "Peer: "+result) {
				t.Errorf("the answer does not quote the result:\n%s", out)
			}
			if got := s.Results(); len(got) != 1 || got[0] != result {
				t.Errorf("Results() = %q, want [%q]", got, result)
			}
			_, out = post(t, s.URL+c.path, c.nop)
			if !strings.Contains(out, `"ok"`) && !strings.Contains(out, `"text":"ok"`) {
				t.Errorf("a request without the tool is not answered with plain text:\n%s", out)
			}
			if s.Calls() != 1 {
				t.Errorf("Calls() = %d after a request without the tool, want still 1", s.Calls())
			}
		})
	}
}

func TestAnthropicWithoutStreamAnswersOneMessage(t *testing.T) {
	s, err := Start(Script{Tool: "a2a_call", Args: map[string]any{"x": 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ct, out := post(t, s.URL+"/v1/messages", map[string]any{"tools": []any{map[string]any{"name": "a2a_call"}}, "messages": []any{}})
	var msg struct {
		StopReason string `json:"stop_reason"`
		Content    []struct {
			Type  string         `json:"type"`
			Name  string         `json:"name"`
			Input map[string]any `json:"input"`
		} `json:"content"`
	}
	if err := json.Unmarshal([]byte(out), &msg); err != nil || ct != "application/json" {
		t.Fatalf("not one JSON message (%s, %v): %s", ct, err, out)
	}
	if msg.StopReason != "tool_use" || len(msg.Content) != 1 || msg.Content[0].Name != "a2a_call" || msg.Content[0].Input["x"] != float64(1) {
		t.Errorf("message = %+v, want one tool_use of a2a_call with x=1", msg)
	}
}

// Gemini CLI's next-speaker check asks for JSON; the answer says the user
// speaks next, so the CLI ends its turn.
func TestGeminiJSONRequestIsAnsweredWithTheUserSpeakingNext(t *testing.T) {
	s, err := Start(Script{Tool: "a2a_call"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, out := post(t, s.URL+"/v1beta/models/m:generateContent", map[string]any{"generationConfig": map[string]any{"responseMimeType": "application/json"}})
	if !strings.Contains(out, `next_speaker\": \"user`) {
		t.Errorf("answer: %s", out)
	}
	if s.Calls() != 0 {
		t.Errorf("a JSON request counted as a call")
	}
}

func TestUnknownEndpointSaysWhatTheServerServes(t *testing.T) {
	s, err := Start(Script{Tool: "a2a_call"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp, err := http.Post(s.URL+"/v1/chat/completions", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(b), "/v1/responses") {
		t.Errorf("%s: %s", resp.Status, b)
	}
	if _, err := Start(Script{}); err == nil || !strings.Contains(err.Error(), "Script.Tool") {
		t.Errorf("Start without a tool: %v, want an error naming Script.Tool", err)
	}
}
