package tools

import (
	"time"

	"github.com/hashicorp/go-hclog"
)

// outbound is the outbound engine: what one call to a peer needs beyond
// the tool that asked for it — the credentials and their refresh
// (token.go, oauth.go: explainAuth), the card (peercalls.go), delivery
// with its wait (deliver.go) and following the task (follow.go). The
// seven tools are its front-ends: they parse their arguments, resolve the
// peer, hand the engine a sendSpec and render the outcome. It knows no
// tool, no host and no sink: what a call leaves behind (audit, metrics,
// the cascade's record, conversations, the host's memory) it hands to the
// call's recorders (recorder.go) at the points they name — each request
// (exchanged), each delivery (ended), each task the peer names (named).
type outbound struct {
	log hclog.Logger
	// clock is Deps.Now (nil: the system clock).
	clock func() time.Time
	// ackGrace is how long a call may wait past its wait for the peer to
	// name its task (ackGrace; tests shorten it).
	ackGrace time.Duration
	// maxCallBytes bounds the artifact content one call keeps
	// (maxCallBytes; tests lower it).
	maxCallBytes int
}

// now is the engine's clock, the toolset's (Toolset.now).
func (eng *outbound) now() time.Time {
	if eng.clock != nil {
		return eng.clock()
	}
	return time.Now()
}
