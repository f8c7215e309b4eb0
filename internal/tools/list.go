package tools

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/client"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// Reachability checks are cheap card fetches, cached this long and bounded
// by reachTimeout.
const (
	reachTTL     = time.Minute
	reachTimeout = 3 * time.Second
)

func (t *Toolset) list(ctx context.Context, ci *callInfo) *pb.ToolResult {
	if err := decodeArgs(ToolList, ci.args, &struct{}{}); err != nil {
		return errorResult("%v", err)
	}
	var b strings.Builder
	if len(t.peers) == 0 {
		b.WriteString("No A2A peers are configured (a2a_agents is empty).")
		if t.cfg.AllowUnconfigured {
			b.WriteString(" Agents can still be called by URL.")
		}
		b.WriteString("\n")
	} else {
		reach := t.checkReachability(ctx)
		fmt.Fprintf(&b, "Configured peers (%d):\n", len(t.peers))
		for _, pc := range t.peers {
			r := reach[pc.Name]
			status := "reachable"
			if !r.ok {
				status = "unreachable: " + r.err
			}
			fmt.Fprintf(&b, "- %s (%s, trust %s): %s\n", pc.Name, pc.URL, pc.Trust, status)
			if info := pc.peer.CachedCard(); info != nil {
				c := info.Card
				fmt.Fprintf(&b, "  card: %q — %s; protocol %s; streaming %s; skills: %s\n", c.Name, oneLine(c.Description, 120),
					info.Interface.ProtocolVersion, yesNo(c.Capabilities.SupportsStreaming()), strings.Join(skillIDs(c), ", "))
			}
		}
	}
	if t.cfg.AllowUnconfigured {
		b.WriteString("Agents may also be called by URL (loopback/private addresses only if the operator allows them).\n")
	}
	if t.deps.Store != nil {
		convs, err := t.deps.Store.Conversations(ctx, 20)
		switch {
		case err != nil:
			fmt.Fprintf(&b, "Conversations: could not be read (%v)\n", err)
		case len(convs) == 0:
			b.WriteString("Conversations: none yet.\n")
		default:
			fmt.Fprintf(&b, "Recent conversations (%d, newest first; see a2a_history context_id=…):\n", len(convs))
			for _, c := range convs {
				fmt.Fprintf(&b, "- context %s with %s: %d entries, last task %s %s, last at %s\n", c.ContextID, c.Peer, c.Entries,
					orDash(c.LastTaskID), strings.TrimPrefix(c.LastState, "TASK_STATE_"), c.LastAt.UTC().Format(time.RFC3339))
			}
		}
	}
	snap := t.metrics.Snapshot()
	if len(snap) == 0 {
		b.WriteString("Call metrics: no calls yet.\n")
	} else {
		b.WriteString("Call metrics (the figures /metrics exports; outbound = calls made by these tools, inbound = requests served):\n")
		for _, m := range snap {
			fmt.Fprintf(&b, "- %s %s: %d calls, %d errors, p50 %s, p99 %s\n", m.Direction, m.Peer, m.Calls, m.Errors, roundDur(m.P50), roundDur(m.P99))
		}
	}
	return textResult(strings.TrimRight(b.String(), "\n"))
}

// checkReachability fetches every configured peer's card (cheaply: a
// cached, fresh card means reachable without a request) in parallel with a
// short timeout, caching the outcome for reachTTL.
func (t *Toolset) checkReachability(ctx context.Context) map[string]reachability {
	now := t.now()
	out := make(map[string]reachability, len(t.peers))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, pc := range t.peers {
		t.mu.Lock()
		r, ok := t.reach[pc.Name]
		t.mu.Unlock()
		if ok && now.Sub(r.checked) < reachTTL {
			out[pc.Name] = r
			continue
		}
		wg.Add(1)
		go func(pc *peerConf) {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, reachTimeout)
			defer cancel()
			_, err := pc.peer.Card(cctx)
			r := reachability{ok: err == nil, checked: t.now()}
			if err != nil {
				r.err = string(client.KindOf(err))
				if r.err == "" {
					r.err = err.Error()
				}
			}
			mu.Lock()
			out[pc.Name] = r
			mu.Unlock()
			t.mu.Lock()
			t.reach[pc.Name] = r
			t.mu.Unlock()
		}(pc)
	}
	wg.Wait()
	return out
}

// oneLine squeezes text into one line of at most n characters.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
