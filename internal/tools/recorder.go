package tools

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/plugin"
	"github.com/hashicorp/go-hclog"
)

// recorder keeps what a call leaves behind outside the peer: the
// conversation entries a2a_history reads (record.go) and what the host's
// memory is told when a delegation ends (delegation.go:
// recordDelegation). Each is written once per task and state (recorded).
// The other side effects of a call are the engine's (outbound: audit,
// metrics, the cascade's delegation record) and the app's (the span).
type recorder struct {
	log   hclog.Logger
	store store.Conversations // Deps.Store; nil: no conversations
	// host and hostRPCs are Deps.Host and Deps.HostRPCs.
	host     plugin.Host
	hostRPCs []string
	clock    func() time.Time

	mu       sync.Mutex
	recorded *seenSet // replies and delegations already written (bounded)
	// noDelegations is set once the host answered RecordDelegation with
	// Unimplemented (or said it lacks it).
	noDelegations atomic.Bool
}

// now is the recorder's clock, the toolset's (Toolset.now).
func (rec *recorder) now() time.Time {
	if rec.clock != nil {
		return rec.clock()
	}
	return time.Now()
}
