package tools

import (
	"fmt"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// An outcome is what came of one a2a_call-style delivery to a peer (or of
// following a task): the task as the peer last described it, or the
// error, for the tool result.

// maxAnswerChars bounds the answer text put into a tool result.
const maxAnswerChars = 12000

// maxProgressChars bounds a peer's text in one progress message.
const maxProgressChars = 300

// sendSpec is one message to deliver to one peer.
type sendSpec struct {
	// target is the peer, with the recorders of the call (target.rec).
	target  *resolved
	msg     a2a.Message
	wait    bool
	waitFor time.Duration
	// progress reports intermediate events; it returns false when the
	// caller went away. May be nil.
	progress func(string) bool
	// stop, when closed, ends the wait early, as its end does: the call
	// returns (a receipt) as soon as the task id is known. Orchestrate
	// closes it for the peers that lost. May be nil.
	stop <-chan struct{}
}

// outcome is what came of a sendSpec (or of following a task).
type outcome struct {
	peer string
	// trusted: the peer is configured with trust: trusted, so its texts
	// reach the model defanged but not framed (see untrusted.go).
	trusted bool
	tr      tracker
	// receipt: we stopped waiting before the task finished; why says why.
	receipt bool
	why     string
	err     error
	elapsed time.Duration
	// refreshable: the peer's token comes from token_file or
	// token_command, so AUTH_REQUIRED can be answered by the plugin.
	refreshable bool
	// authResumed: the task asked for credentials, they were refreshed
	// and the task resumed; authNote says so (or why that failed).
	authResumed bool
	authNote    string
}

// newOutcome is the empty outcome of a call to target.
func (eng *outbound) newOutcome(target *resolved) *outcome {
	o := &outcome{peer: target.name, trusted: voiceOf(target).trusted,
		refreshable: target.conf != nil && target.conf.tokens != nil}
	o.tr.limit = eng.maxCallBytes
	return o
}

// checkOver turns a tracker that had to drop artifacts (see maxCallBytes)
// into the outcome's error; it reports whether it did.
func (o *outcome) checkOver() bool {
	if !o.tr.over {
		return false
	}
	if o.err == nil {
		o.err = overError(o.peer, &o.tr)
	}
	return true
}

// overError says that a peer sent more artifact content than one call
// keeps.
func overError(peer string, tr *tracker) error {
	limit := tr.limit
	if limit <= 0 {
		limit = maxCallBytes
	}
	what := "the task"
	if tr.taskID != "" {
		what = "task " + peerID(tr.taskID)
	}
	return fmt.Errorf("%s sent more than %s of artifacts for %s, more than one call keeps; stopped reading them. "+
		"The task may still be running on the peer: ask for a shorter answer, or stop it with a2a_task action=\"cancel\"", peer, sizeText(limit), what)
}

// sizeText formats a byte count for a model.
func sizeText(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// voice is how the outcome's peer texts reach the model.
func (o *outcome) voice() peerVoice { return peerVoice{name: o.peer, trusted: o.trusted} }

// failed reports an outcome that is a failure: an error, or a task the
// peer ended FAILED, REJECTED or CANCELED.
func (o *outcome) failed() bool {
	if o.err != nil {
		return true
	}
	switch o.tr.state {
	case a2a.TaskStateFailed, a2a.TaskStateRejected, a2a.TaskStateCanceled:
		return o.tr.message == nil
	}
	return false
}

// success reports a completed task or a direct message reply.
func (o *outcome) success() bool {
	return o.err == nil && (o.tr.message != nil || o.tr.state == a2a.TaskStateCompleted)
}
