package inspector

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"
)

// maxPeerSendBody bounds the JSON body of a peer send.
const maxPeerSendBody = 1 << 20

// peerSend is the body of POST /inspector/api/peers/{name}/send. Only a
// message and the ids to continue with: a2a_call's other arguments (files
// read from the plugin's disk, …) are not offered to the browser.
type peerSend struct {
	Message   string `json:"message"`
	ContextID string `json:"context_id"`
	TaskID    string `json:"task_id"`
}

// servePeerSend sends a message to a configured peer with the a2a_call
// tool, exactly as the host's model would, and streams what the tool
// reports as server-sent events: "progress" events ({message}), then one
// "result" ({content, is_error, outcome}) or "error" ({message}).
func (in *Inspector) servePeerSend(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if in.opts.CallTool == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "sending to peers is not available in this plugin"})
		return
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		writeJSON(w, http.StatusUnsupportedMediaType, map[string]string{"error": "send a JSON body (Content-Type: application/json)"})
		return
	}
	known := false
	for _, n := range in.peerNames(r.Context()) {
		known = known || n == name
	}
	if !known {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("no outbound peer is configured with the name %q (a2a_agents)", name)})
		return
	}
	var body peerSend
	dec := json.NewDecoder(io.LimitReader(r.Body, maxPeerSendBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "the body must be {\"message\": …, \"context_id\": …, \"task_id\": …}: " + err.Error()})
		return
	}
	if strings.TrimSpace(body.Message) == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "the message is empty"})
		return
	}
	args := map[string]any{"agent": name, "message": body.Message}
	if body.ContextID != "" {
		args["context_id"] = body.ContextID
	}
	if body.TaskID != "" {
		args["task_id"] = body.TaskID
	}
	argsJSON, _ := json.Marshal(args)

	// The call ends when the browser goes away or the server stops serving.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	gen := in.feed.generation()
	go func() {
		select {
		case <-gen:
			cancel()
		case <-ctx.Done():
		}
	}()

	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	var mu sync.Mutex // progress may be reported from another goroutine
	send := func(event string, v any) error {
		b, _ := json.Marshal(v)
		mu.Lock()
		defer mu.Unlock()
		_ = rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return err
		}
		return rc.Flush()
	}
	if send("start", map[string]string{"peer": name, "tool": "a2a_call"}) != nil {
		return
	}
	res, err := in.opts.CallTool(ctx, "a2a_call", string(argsJSON), func(message string) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return send("progress", map[string]string{"message": message})
	})
	if err != nil {
		_ = send("error", map[string]string{"message": err.Error()})
		return
	}
	outcome, text := outcomeOf(res.Content)
	_ = send("result", map[string]any{"content": res.Content, "text": text, "is_error": res.IsError, "outcome": outcome})
}

// outcomeOf reads the JSON line a2a_call ends its result with (peer,
// state, task_id, context_id), so the page can offer to continue; text is
// the result without it.
func outcomeOf(content string) (outcome map[string]any, text string) {
	content = strings.TrimSpace(content)
	i := strings.LastIndexByte(content, '\n')
	last := content[i+1:]
	if !strings.HasPrefix(last, "{") || json.Unmarshal([]byte(last), &outcome) != nil {
		return nil, content
	}
	return outcome, strings.TrimSpace(content[:max(i, 0)])
}
