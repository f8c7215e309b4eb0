package tools

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"path/filepath"
	"strings"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/client"
	"github.com/a2a-plugin/a2a-plugin/internal/config"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
)

// callArgs are the arguments of a2a_call.
type callArgs struct {
	Agent     string          `json:"agent"`
	Message   string          `json:"message"`
	ContextID string          `json:"context_id"`
	TaskID    string          `json:"task_id"`
	Wait      *bool           `json:"wait"`
	TimeoutS  *float64        `json:"timeout_s"`
	Files     []fileArg       `json:"files"`
	Data      json.RawMessage `json:"data"`
}

// fileArg is one entry of a2a_call's files.
type fileArg struct {
	Path      string `json:"path"`
	URL       string `json:"url"`
	Base64    string `json:"base64"`
	MediaType string `json:"media_type"`
	Filename  string `json:"filename"`
}

func (t *Toolset) call(ctx context.Context, ci *callInfo) *result {
	var a callArgs
	if err := decodeArgs(ToolCall, ci.args, &a, "agent", "message", "context_id", "task_id", "wait", "timeout_s", "files", "data"); err != nil {
		return errorResult("%v", err)
	}
	target, err := t.peers.resolve(ctx, &ci.rec, a.Agent, "agent")
	if err != nil {
		return errorResult("a2a_call: %v", err)
	}
	prep, res := t.prepareMessage(ci.rec.org, ToolCall, a.Message, a.ContextID, a.TaskID, a.Files, a.Data)
	if res != nil {
		return res
	}
	if res := t.admitCalls(ci.rec.org, ToolCall, 1); res != nil {
		return res
	}
	wait := a.Wait == nil || *a.Wait
	waitFor, err := t.clampWait(a.TimeoutS, t.defaultWait(target))
	if err != nil {
		return errorResult("a2a_call: %v", err)
	}
	o := t.send(ctx, target, prep, wait, waitFor, ci.report, nil)
	if errors.Is(ctx.Err(), context.Canceled) && o.tr.taskID != "" && !o.tr.done() {
		t.cancelAbandoned(ctx, target, o.tr.taskID, prep.chainID)
	}
	return t.callResult(target, prep, o)
}

// cancelAbandoned cancels the remote task of an a2a_call whose caller
// cancelled the call (an MCP client's notifications/cancelled, a host that
// interrupts its model) while the task ran: nobody waits for its answer any
// more, and a task left running would go on spending the peer's work. The
// CancelTask carries the delegation chain, so the peer cancels what the
// task delegated in turn. A call that merely timed out (its deadline, not a
// cancel) leaves the task running and returns a receipt instead, as before.
func (t *Toolset) cancelAbandoned(ctx context.Context, target *resolved, taskID, chainID string) {
	if err := t.cancelRemote(ctx, target, taskID, chainID); err != nil {
		t.log.Warn("the caller cancelled a2a_call, but cancelling the remote task failed", "peer", target.name, "remote_task_id", taskID, "error", err)
		return
	}
	t.log.Info("the caller cancelled a2a_call; cancelled the remote task", "peer", target.name, "remote_task_id", taskID)
}

// prepared is an outgoing message ready to send.
type prepared struct {
	msg        a2a.Message
	text       string // the (redacted) text as sent
	redactions int
	chainID    string
	depth      int
}

// prepareMessage validates a message's arguments and builds it: redacted
// text, file parts (their names redacted), the data part (redacted value by
// value), delegation chain metadata. The count of redactions covers them
// all. A non-nil result is an is_error result to return as is.
func (t *Toolset) prepareMessage(org Origin, tool, text, contextID, taskID string, files []fileArg, data json.RawMessage) (*prepared, *result) {
	if strings.TrimSpace(text) == "" {
		return nil, errorResult("%s: argument \"message\" is required: the text to send to the agent", tool)
	}
	redacted, n := redactText(text)
	msg := a2a.NewMessage(a2a.RoleUser, a2a.TextPart(redacted))
	msg.ContextID = strings.TrimSpace(contextID)
	msg.TaskID = strings.TrimSpace(taskID)
	for i, f := range files {
		part, err := t.files.filePart(f)
		if err != nil {
			return nil, errorResult("%s: argument \"files[%d]\": %v", tool, i, err)
		}
		if part.Filename != "" {
			var k int
			part.Filename, k = redactText(part.Filename)
			n += k
		}
		msg.Parts = append(msg.Parts, part)
	}
	if len(data) > 0 && string(data) != "null" {
		if !json.Valid(data) {
			return nil, errorResult("%s: argument \"data\" must be valid JSON", tool)
		}
		clean, k, err := redactData(data)
		if err != nil {
			return nil, errorResult("%s: argument \"data\": %v", tool, err)
		}
		n += k
		msg.Parts = append(msg.Parts, a2a.DataPart(clean))
	}
	chain, err := nextChain(org, t.cfg.MaxDepth)
	if err != nil {
		return nil, errorResult("%s: refused: %v", tool, err)
	}
	msg.Metadata = applyChain(msg.Metadata, chain)
	return &prepared{msg: msg, text: redacted, redactions: n, chainID: chain.ID, depth: chain.Depth}, nil
}

// filePart builds a part from one files entry (a path only inside the
// attachment roots, see attach.go).
func (a *attachments) filePart(f fileArg) (a2a.Part, error) {
	set := 0
	for _, s := range []string{f.Path, f.URL, f.Base64} {
		if s != "" {
			set++
		}
	}
	if set != 1 {
		return a2a.Part{}, fmt.Errorf("give exactly one of \"path\", \"url\" and \"base64\"")
	}
	name := f.Filename
	switch {
	case f.URL != "":
		if err := config.CheckPeerURL(f.URL); err != nil {
			return a2a.Part{}, fmt.Errorf("url: %v", err)
		}
		if name == "" {
			name = filepath.Base(strings.SplitN(f.URL, "?", 2)[0])
		}
		return a2a.URLPart(f.URL, guessType(f.MediaType, name), name), nil
	case f.Base64 != "":
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(f.Base64))
		if err != nil {
			if raw, err = base64.RawStdEncoding.DecodeString(strings.TrimSpace(f.Base64)); err != nil {
				return a2a.Part{}, fmt.Errorf("base64: not valid standard base64 (%v)", err)
			}
		}
		if len(raw) > MaxFileBytes {
			return a2a.Part{}, fmt.Errorf("base64: the file is %d bytes; the limit is %d", len(raw), MaxFileBytes)
		}
		return a2a.FilePart(raw, guessType(f.MediaType, name), name), nil
	}
	raw, base, err := a.readAttachment(f.Path)
	if err != nil {
		return a2a.Part{}, err
	}
	if name == "" {
		name = base
	}
	return a2a.FilePart(raw, guessType(f.MediaType, name), name), nil
}

// guessType returns mt, else a type guessed from the file name, else
// application/octet-stream.
func guessType(mt, name string) string {
	if mt != "" {
		return mt
	}
	if t := mime.TypeByExtension(filepath.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// send delivers a prepared message to target, for the call whose
// recorders target.rec are: they are told what went out and what came
// back (the conversation a2a_history reads), and that the call is done
// with the delegation (the host's memory, when it ended). A task that
// stops at AUTH_REQUIRED is resumed once with refreshed credentials when
// the peer's configuration allows it (see resumeAfterAuth). stop, if not
// nil, ends the wait early (see sendSpec).
func (t *Toolset) send(ctx context.Context, target *resolved, prep *prepared, wait bool, waitFor time.Duration, progress func(string) bool, stop <-chan struct{}) *outcome {
	started := t.now()
	org := target.rec.org
	o := t.out.deliver(ctx, sendSpec{target: target, msg: prep.msg, wait: wait, waitFor: waitFor, progress: progress, stop: stop})
	d := delegationInfo{chain: security.Chain{ID: prep.chainID, Depth: prep.depth}, request: prep.text, origin: org}
	t.memory.remember(org, target.name, o.tr.taskID, d)
	contextID := o.tr.contextID
	if contextID == "" {
		contextID = prep.msg.ContextID
	}
	if contextID != "" && (o.err == nil || o.tr.taskID != "") {
		target.rec.sent(ctx, store.ConversationEntry{ContextID: contextID, Peer: target.name, Direction: store.DirectionSent,
			TaskID: firstNonEmpty(o.tr.taskID, prep.msg.TaskID), MessageID: prep.msg.MessageID, Text: prep.text, Parts: prep.msg.Parts,
			Time: t.now().Add(-o.elapsed)})
	}
	target.rec.received(ctx, target, o)
	if wait && needsAuth(o) {
		o = t.resumeAfterAuth(ctx, target, o, d.chain, waitFor-t.now().Sub(started), progress)
	}
	target.rec.settled(ctx, target, d, o)
	return o
}

// isFinishedTask reports whether a peer refused a message to a task because
// the task is finished: A2A's UnsupportedOperationError (-32004), which a
// peer answers for a message to a task in a terminal state.
func isFinishedTask(err error) bool {
	re, ok := client.RPCError(err)
	return ok && re.Code == a2a.CodeUnsupportedOperation
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// callResult renders the outcome of a2a_call for the model.
func (t *Toolset) callResult(target *resolved, prep *prepared, o *outcome) *result {
	var b strings.Builder
	if o.err != nil && prep.msg.TaskID != "" && isFinishedTask(o.err) {
		// One plain sentence and the next step, instead of the peer's
		// explanation followed by a generic hint that says otherwise.
		fmt.Fprintf(&b, "a2a_call to %s: task %s is finished and takes no more messages. To go on with the same conversation, send a new message without task_id: ",
			target.name, peerID(prep.msg.TaskID))
		if prep.msg.ContextID != "" {
			fmt.Fprintf(&b, "a2a_call agent=%q context_id=%s message=\"…\".", target.name, peerID(prep.msg.ContextID))
		} else {
			fmt.Fprintf(&b, "a2a_call agent=%q context_id=<the task's context_id> message=\"…\" (a2a_task agent=%q task_id=%s action=\"get\" shows it).",
				target.name, target.name, peerID(prep.msg.TaskID))
		}
		return &result{Content: b.String(), IsError: true}
	}
	if o.err != nil {
		fmt.Fprintf(&b, "a2a_call to %s failed: %s", target.name, o.voice().errText(o.err))
		if o.tr.taskID != "" {
			fmt.Fprintf(&b, "\nThe task %s may still exist on the peer: check it with a2a_task agent=%q task_id=%s action=\"get\".", peerID(o.tr.taskID), target.name, peerID(o.tr.taskID))
		}
		if prep.redactions > 0 {
			fmt.Fprintf(&b, "\n%d secret(s) were redacted from the outgoing message.", prep.redactions)
		}
		return &result{Content: b.String(), IsError: true}
	}
	writeOutcome(&b, target.name, o)
	if o.authResumed && o.authNote != "" && o.tr.state != a2a.TaskStateAuthRequired {
		fmt.Fprintf(&b, "Note: %s\n", o.authNote)
	}
	if prep.redactions > 0 {
		fmt.Fprintf(&b, "Note: %d secret(s) were redacted from the outgoing message before it was sent.\n", prep.redactions)
	}
	writeJSONLine(&b, target.name, o)
	return textResult(b.String())
}

// writeOutcome describes an outcome: the answer, a question, or a receipt,
// with the ids and the next step. What the peer wrote is framed or
// defanged by its trust (untrusted.go), and the ids it chose are quoted.
func writeOutcome(b *strings.Builder, peer string, o *outcome) {
	tr := &o.tr
	v := o.voice()
	ids := ""
	if tr.taskID != "" {
		ids = fmt.Sprintf("task %s, ", peerID(tr.taskID))
	}
	if tr.contextID != "" {
		ids += fmt.Sprintf("context %s, ", peerID(tr.contextID))
	}
	switch {
	case tr.message != nil:
		fmt.Fprintf(b, "%s replied (%sdirect message):\n%s\n", peer, ids, v.text(clip(tr.answer())))
		if tr.contextID != "" {
			fmt.Fprintf(b, "To continue this conversation: a2a_call agent=%q context_id=%s message=\"…\"\n", peer, peerID(tr.contextID))
		}
	case o.receipt && !tr.done():
		fmt.Fprintf(b, "%s is still working on it (%sstate %s) — %s.\n", peer, ids, stateName(tr.state), o.why)
		if partial := strings.TrimSpace(tr.answer()); partial != "" {
			fmt.Fprintf(b, "Latest from the peer:\n%s\n", v.text(clip(partial)))
		}
		fmt.Fprintf(b, "Follow up with a2a_task agent=%q task_id=%s action=\"wait\" (or \"get\" for the current state, \"cancel\" to stop it).\n", peer, peerID(tr.taskID))
	case tr.state == a2a.TaskStateInputRequired:
		q := v.textOr(tr.question(), "(the peer gave no question text)")
		fmt.Fprintf(b, "%s needs more input before it can continue (%sstate INPUT_REQUIRED).\nQuestion from %s:\n%s\n", peer, ids, peer, q)
		fmt.Fprintf(b, "To answer: a2a_call agent=%q task_id=%s context_id=%s message=\"<your answer>\"\n", peer, peerID(tr.taskID), peerID(tr.contextID))
	case tr.state == a2a.TaskStateAuthRequired:
		what := v.textOr(tr.question(), "(the peer did not say what it needs)")
		fmt.Fprintf(b, "%s needs authentication before it can continue (%sstate AUTH_REQUIRED).\nWhat %s needs:\n%s\n", peer, ids, peer, what)
		writeAuthHelp(b, peer, o)
	case tr.state == a2a.TaskStateCompleted:
		fmt.Fprintf(b, "%s completed the task (%sstate COMPLETED):\n%s\n", peer, ids, v.textOr(tr.answer(), noAnswer))
		if tr.contextID != "" {
			fmt.Fprintf(b, "To continue this conversation: a2a_call agent=%q context_id=%s message=\"…\"\n", peer, peerID(tr.contextID))
		}
	default:
		fmt.Fprintf(b, "%s ended the task with state %s (%s):\n%s\n", peer, stateName(tr.state), strings.TrimSuffix(ids, ", "), v.textOr(tr.answer(), noAnswer))
	}
}

// noAnswer stands for an answer without text.
const noAnswer = "(no text in the answer)"

func orNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return noAnswer
	}
	return s
}

// clip bounds text for a tool result.
func clip(s string) string {
	if len(s) <= maxAnswerChars {
		return s
	}
	return s[:maxAnswerChars] + fmt.Sprintf("… (truncated; %d more characters)", len(s)-maxAnswerChars)
}

// writeJSONLine appends a compact machine-readable summary.
func writeJSONLine(b *strings.Builder, peer string, o *outcome) {
	v := map[string]any{"peer": peer, "state": stateName(o.tr.state)}
	if o.tr.message != nil {
		v["state"] = "MESSAGE"
	}
	if o.tr.taskID != "" {
		v["task_id"] = jsonID(o.tr.taskID)
	}
	if o.tr.contextID != "" {
		v["context_id"] = jsonID(o.tr.contextID)
	}
	if o.receipt && !o.tr.done() {
		v["receipt"] = true
	}
	j, _ := json.Marshal(v)
	b.WriteString(string(j))
}
