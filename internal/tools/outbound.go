package tools

import (
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/metrics"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/hashicorp/go-hclog"
)

// outbound is the outbound engine: what one call to a peer needs beyond
// the tool that asked for it — the credentials and their refresh
// (token.go, oauth.go: explainAuth), the card (peercalls.go), delivery
// with its wait (deliver.go) and following the task (follow.go), each
// request audited (audit.go) and counted. The seven tools are its
// front-ends: they parse their arguments, resolve the peer, hand the
// engine a sendSpec and render the outcome. It knows no tool, no host
// and no conversation store.
type outbound struct {
	log     hclog.Logger
	metrics *metrics.Metrics
	// auditLog receives one record per request (Deps.Audit); nil: none.
	auditLog *security.AuditLog
	// cascade keeps the remote tasks started for an inbound task
	// (Deps.Delegations); nil: none.
	cascade DelegationRecorder
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
