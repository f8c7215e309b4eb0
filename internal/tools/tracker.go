package tools

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/client"
)

// A tracker folds what a peer says about one task — snapshots, stream
// events, replies — into the task as last seen, within the bytes one call
// may hold.

// maxCallBytes bounds the artifact content one call keeps in memory (every
// chunk of every artifact a peer streams), so that a peer streaming without
// end cannot grow the plugin's memory for as long as the call may wait
// (up to MaxWait). Past it the call stops reading and says so.
const maxCallBytes = 8 << 20 // Toolset.maxCallBytes; tests lower it

// partOverhead is what an empty part counts against maxCallBytes, so that
// a stream of empty chunks is bounded too.
const partOverhead = 64

// tracker accumulates what a peer told us about one task.
type tracker struct {
	taskID, contextID string
	state             a2a.TaskState
	statusMsg         *a2a.Message
	message           *a2a.Message // a direct reply (no task)
	artifacts         []a2a.Artifact
	lastAgentMsg      *a2a.Message // from history
	// size is the artifact content held (partsSize of every artifact);
	// limit bounds it (0: maxCallBytes). over is set once an artifact or
	// chunk would have taken it past limit; that one was dropped.
	size, limit int
	over        bool
}

// partsSize is what parts count against maxCallBytes.
func partsSize(ps []a2a.Part) int {
	n := 0
	for i := range ps {
		p := &ps[i]
		n += partOverhead + len(p.TextValue()) + len(p.Raw) + len(p.URLValue()) + len(p.Data) + len(p.Filename) + len(p.MediaType)
	}
	return n
}

// artifactsSize is partsSize over artifacts.
func artifactsSize(as []a2a.Artifact) int {
	n := 0
	for i := range as {
		n += partsSize(as[i].Parts)
	}
	return n
}

// fits reports whether holding n more bytes stays within the limit, and
// marks the tracker over it when not.
func (tr *tracker) fits(n int) bool {
	limit := tr.limit
	if limit <= 0 {
		limit = maxCallBytes
	}
	if tr.size+n > limit {
		tr.over = true
		return false
	}
	return true
}

func (tr *tracker) done() bool {
	return tr.message != nil || tr.state.Terminal() || tr.state.Interrupted()
}

// applyTask takes a full task snapshot.
func (tr *tracker) applyTask(t *a2a.Task) {
	tr.taskID = t.ID
	if t.ContextID != "" {
		tr.contextID = t.ContextID
	}
	tr.state = t.Status.State
	if t.Status.Message != nil {
		tr.statusMsg = t.Status.Message
	}
	if len(t.Artifacts) > 0 {
		// A snapshot replaces what was held (one event is bounded by the
		// client's MaxResponseBytes).
		tr.size = 0
		if n := artifactsSize(t.Artifacts); tr.fits(n) {
			tr.artifacts, tr.size = append([]a2a.Artifact(nil), t.Artifacts...), n
		} else {
			tr.artifacts = nil
		}
	}
	for i := len(t.History) - 1; i >= 0; i-- {
		if t.History[i].Role == a2a.RoleAgent {
			m := t.History[i]
			tr.lastAgentMsg = &m
			break
		}
	}
}

// applyMessage takes a direct reply.
func (tr *tracker) applyMessage(m *a2a.Message) {
	tr.message = m
	if m.ContextID != "" {
		tr.contextID = m.ContextID
	}
	if m.TaskID != "" {
		tr.taskID = m.TaskID
	}
}

// apply folds one stream event in and returns a progress line ("" for
// none).
func (tr *tracker) apply(ev client.Event) string {
	r := ev.Response
	switch {
	case r.Task != nil:
		tr.applyTask(r.Task)
		return fmt.Sprintf("task %s: %s", peerID(r.Task.ID), stateName(r.Task.Status.State))
	case r.Message != nil:
		tr.applyMessage(r.Message)
		return ""
	case r.StatusUpdate != nil:
		u := r.StatusUpdate
		tr.taskID = u.TaskID
		if u.ContextID != "" {
			tr.contextID = u.ContextID
		}
		tr.state = u.Status.State
		line := stateName(u.Status.State)
		if u.Status.Message != nil {
			tr.statusMsg = u.Status.Message
			if txt := strings.TrimSpace(a2a.FlattenParts(u.Status.Message.Parts)); txt != "" {
				line += ": " + peerLine(txt, maxProgressChars)
			}
		}
		return line
	case r.ArtifactUpdate != nil:
		u := r.ArtifactUpdate
		tr.taskID = u.TaskID
		tr.mergeArtifact(u.Artifact, u.Append)
		name := u.Artifact.Name
		if name == "" {
			name = u.Artifact.ArtifactID
		}
		return "received artifact " + strconv.Quote(peerLine(name, 100))
	}
	return ""
}

// mergeArtifact adds an artifact or appends a chunk to an earlier one,
// unless that would take what the call holds past its limit: then the
// artifact or chunk is dropped and tr.over is set.
func (tr *tracker) mergeArtifact(a a2a.Artifact, appendParts bool) {
	n := partsSize(a.Parts)
	for i := range tr.artifacts {
		if tr.artifacts[i].ArtifactID == a.ArtifactID {
			if appendParts {
				if tr.fits(n) {
					tr.artifacts[i].Parts = append(tr.artifacts[i].Parts, a.Parts...)
					tr.size += n
				}
			} else {
				old := partsSize(tr.artifacts[i].Parts)
				if tr.fits(n - old) {
					tr.artifacts[i] = a
					tr.size += n - old
				}
			}
			return
		}
	}
	if tr.fits(n) {
		tr.artifacts = append(tr.artifacts, a)
		tr.size += n
	}
}

// answer is the text of what the peer produced: its direct reply, else its
// artifacts, else its status message, else its last message in history.
func (tr *tracker) answer() string {
	if tr.message != nil {
		return a2a.FlattenParts(tr.message.Parts)
	}
	var parts []string
	for _, a := range tr.artifacts {
		if s := strings.TrimSpace(a2a.FlattenParts(a.Parts)); s != "" {
			parts = append(parts, s)
		}
	}
	status := ""
	if tr.statusMsg != nil {
		status = strings.TrimSpace(a2a.FlattenParts(tr.statusMsg.Parts))
	}
	if status != "" && !contains(parts, status) {
		parts = append(parts, status)
	}
	if len(parts) == 0 && tr.lastAgentMsg != nil {
		parts = append(parts, strings.TrimSpace(a2a.FlattenParts(tr.lastAgentMsg.Parts)))
	}
	return strings.Join(parts, "\n")
}

// question is the text of an input-required status.
func (tr *tracker) question() string {
	if tr.statusMsg != nil {
		return strings.TrimSpace(a2a.FlattenParts(tr.statusMsg.Parts))
	}
	return ""
}

// stateName shortens TASK_STATE_INPUT_REQUIRED to INPUT_REQUIRED.
func stateName(s a2a.TaskState) string {
	return strings.TrimPrefix(s.String(), "TASK_STATE_")
}
