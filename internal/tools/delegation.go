package tools

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
	"github.com/hashicorp/go-hclog"
)

// Bounds of what the host's memory is told about a delegation.
const (
	maxRequestSummary = 500
	maxResultSummary  = 1000
	// maxRemembered bounds the delegations the toolset remembers for
	// a2a_task (the oldest half is forgotten past it).
	maxRemembered = 4096
)

// delegationInfo is what the toolset remembers of a delegation it
// started, so that a2a_task can resume the task after AUTH_REQUIRED on the
// same delegation chain and tell the host's memory how it ended.
type delegationInfo struct {
	chain   security.Chain
	request string // the request text as sent (redacted)
	origin  Origin // the tool call that started it
	seq     int64  // age, for forgetting the oldest
}

// delegationMemory is what the toolset remembers of the delegations its
// calls started (bounded: maxRemembered), so that a2a_task can resume one.
type delegationMemory struct {
	mu      sync.Mutex
	tasks   map[string]*delegationInfo // by agent|peer|taskID
	taskSeq int64
}

// remember keeps what a2a_task needs of a delegation to peer's task, for
// the agent whose turn made it (Origin.Agent).
func (m *delegationMemory) remember(org Origin, peer, taskID string, d delegationInfo) {
	if taskID == "" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.taskSeq++
	d.seq = m.taskSeq
	if len(m.tasks) >= maxRemembered {
		cut := m.taskSeq - maxRemembered/2
		for k, v := range m.tasks {
			if v.seq < cut {
				delete(m.tasks, k)
			}
		}
	}
	m.tasks[org.Agent+"|"+peer+"|"+taskID] = &d
}

// remembered returns what is known of a delegation to peer's task made by
// the agent of org, or nil.
func (m *delegationMemory) remembered(org Origin, peer, taskID string) *delegationInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d := m.tasks[org.Agent+"|"+peer+"|"+taskID]; d != nil {
		c := *d
		return &c
	}
	return nil
}

// hostMemory is the recorder that tells the host's memory that a
// delegation ended (RecordDelegation), once per delegation, when the host
// offers it (best effort, bounded).
type hostMemory struct {
	recordsNothing
	log hclog.Logger
	// host and hostRPCs are Deps.Host and Deps.HostRPCs.
	host     plugin.Host
	hostRPCs []string

	mu       sync.Mutex
	recorded *seenSet // delegations already told (bounded)
	// noDelegations is set once the host answered RecordDelegation with
	// Unimplemented (or said it lacks it).
	noDelegations atomic.Bool
}

// recordsDelegations reports whether the host may be told about
// delegations: it did not say it lacks RecordDelegation and has not
// answered it with Unimplemented.
func (h *hostMemory) recordsDelegations() bool {
	if h.noDelegations.Load() {
		return false
	}
	return h.hostRPCs == nil || slices.Contains(h.hostRPCs, "RecordDelegation")
}

// settled tells the host's memory that a delegation ended — the peer's
// task reached a terminal state or it replied with a message — once per
// task. The summaries are redacted and truncated.
func (h *hostMemory) settled(ctx context.Context, c *callRecord, target *resolved, d delegationInfo, o *outcome) {
	if o.err != nil || (o.tr.message == nil && !o.tr.state.Terminal()) || !h.recordsDelegations() {
		return
	}
	org, peer := c.org, target.name
	key := "delegation|" + peer + "|" + o.tr.taskID
	if o.tr.message != nil {
		key = "delegation|" + peer + "|msg|" + o.tr.message.MessageID
	}
	h.mu.Lock()
	seen := h.recorded.add(key)
	h.mu.Unlock()
	if seen {
		return
	}
	state := o.tr.state.String()
	if o.tr.message != nil {
		state = a2a.TaskStateCompleted.String() // a direct reply: the work is done
	}
	result, _ := security.Redact(o.tr.answer())
	request, _ := security.Redact(d.request)
	req := &pb.RecordDelegationRequest{
		Platform: org.Platform, ChatId: org.ChatID, Peer: peer,
		RemoteTaskId: o.tr.taskID, RemoteContextId: o.tr.contextID, ChainId: d.chain.ID,
		RequestSummary: clipRunes(oneLine(request, 4*maxRequestSummary), maxRequestSummary),
		ResultSummary:  clipRunes(oneLine(result, 4*maxResultSummary), maxResultSummary),
		State:          state,
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer cancel()
	if _, err := h.host.RecordDelegation(cctx, req); err != nil {
		if errors.Is(err, plugin.ErrUnimplemented) {
			h.noDelegations.Store(true)
			h.log.Debug("the host does not record delegations; not asking again")
			return
		}
		h.log.Debug("host did not record the delegation", "task_id", o.tr.taskID, "context_id", o.tr.contextID, "peer", peer, "error", err)
	}
}

// clipRunes cuts s to at most n bytes on a rune boundary, marking the cut.
func clipRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimSpace(s[:cut]) + "…"
}

// utf8RuneStart reports whether b can start a UTF-8 sequence.
func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
