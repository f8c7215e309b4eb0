package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/client"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
)

// reachTimeout bounds each peer's reachability check in a2a_list.
const reachTimeout = 3 * time.Second

func (t *Toolset) list(ctx context.Context, ci *callInfo) *result {
	if err := decodeArgs(ToolList, ci.args, &struct{}{}); err != nil {
		return errorResult("%v", err)
	}
	var b strings.Builder
	if len(t.peers.all) == 0 {
		b.WriteString("No A2A peers are configured (a2a_agents is empty).")
		if t.cfg.AllowUnconfigured {
			b.WriteString(" Agents can still be called by URL.")
		}
		b.WriteString("\n")
	} else {
		reach := t.checkReachability(ctx, &ci.rec)
		fmt.Fprintf(&b, "Configured peers (%d):\n", len(t.peers.all))
		for _, pc := range t.peers.all {
			fmt.Fprintf(&b, "- %s (%s, trust %s): %s\n", pc.Name, pc.URL, pc.Trust, reach[pc.Name].status())
			if info := pc.peer.CachedCard(); info != nil {
				c := info.Card
				fmt.Fprintf(&b, "  card: %q — %s; protocol %s; streaming %s; skills: %s\n", peerLine(c.Name, 100), peerLine(c.Description, 120),
					info.Interface.ProtocolVersion, yesNo(c.Capabilities.SupportsStreaming()), peerLine(strings.Join(skillIDs(c), ", "), 300))
			}
		}
	}
	if t.cfg.AllowUnconfigured {
		b.WriteString("Agents may also be called by URL (loopback/private addresses only if the operator allows them).\n")
	}
	if t.deps.Store != nil {
		convs, err := store.ConversationsOf(t.deps.Store, ci.rec.org.Agent).Conversations(ctx, 20)
		switch {
		case err != nil:
			fmt.Fprintf(&b, "Conversations: could not be read (%v)\n", err)
		case len(convs) == 0:
			b.WriteString("Conversations: none yet.\n")
		default:
			fmt.Fprintf(&b, "Recent conversations (%d, newest first; see a2a_history context_id=…):\n", len(convs))
			for _, c := range convs {
				last := "-"
				if c.LastTaskID != "" {
					last = peerID(c.LastTaskID)
				}
				fmt.Fprintf(&b, "- context %s with %s: %d entries, last task %s %s, last at %s\n", peerID(c.ContextID), c.Peer, c.Entries,
					last, strings.TrimPrefix(c.LastState, "TASK_STATE_"), c.LastAt.UTC().Format(time.RFC3339))
			}
		}
	}
	snap := t.metrics.SnapshotFor(ci.rec.org.Agent)
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

// reachability is the result of one reachability check.
type reachability struct {
	ok bool
	// rateLimited: the peer answered HTTP 429 (it is up, but busy).
	rateLimited bool
	// err describes the failure for a reader (see reachStatus), "" when ok.
	err     string
	checked time.Time
}

// status is the check's verdict as a2a_list shows it.
func (r reachability) status() string {
	if r.ok {
		return "reachable"
	}
	return r.err
}

// checkReachability asks every configured peer for its card, in parallel,
// each within reachTimeout. The request is real on every call — a cached
// card says nothing about whether the peer is up now — and cheap: a
// conditional GET (If-None-Match / If-Modified-Since) that an unchanged
// card answers with 304 Not Modified. Each fetch is the call rec's.
func (t *Toolset) checkReachability(ctx context.Context, rec *callRecord) map[string]reachability {
	out := make(map[string]reachability, len(t.peers.all))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, pc := range t.peers.all {
		wg.Add(1)
		go func(pc *peerConf) {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, reachTimeout)
			defer cancel()
			_, err := t.out.fetchCard(cctx, t.peers.target(pc, rec))
			r := reachability{ok: err == nil, rateLimited: errors.Is(err, client.ErrRateLimited), checked: t.now()}
			if err != nil {
				r.err = reachStatus(err)
			}
			mu.Lock()
			out[pc.Name] = r
			mu.Unlock()
		}(pc)
	}
	wg.Wait()
	return out
}

// reachStatus describes the result of a reachability check: reachable,
// unreachable (down, timed out, refused by the SSRF guard), or answering
// but refusing or serving a card that cannot be used.
func reachStatus(err error) string {
	if err == nil {
		return "reachable"
	}
	var ce *client.Error
	if !errors.As(err, &ce) {
		return "unreachable (" + oneLine(err.Error(), 200) + ")"
	}
	switch ce.Kind {
	case client.ErrUnreachable:
		return "unreachable"
	case client.ErrTimeout:
		return fmt.Sprintf("unreachable (no answer within %s)", roundDur(reachTimeout))
	case client.ErrBlocked:
		return "unreachable (refused by the SSRF guard)"
	}
	what := string(ce.Kind)
	if ce.HTTPStatus != 0 {
		what += fmt.Sprintf(" (HTTP %d)", ce.HTTPStatus)
	}
	return "answering, but " + what + ": " + oneLine(errors.Unwrap(err).Error(), 200)
}

// oneLine squeezes text into one line of at most n bytes (cut on a rune
// boundary).
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		cut := n
		for cut > 0 && !utf8RuneStart(s[cut]) {
			cut--
		}
		return s[:cut] + "…"
	}
	return s
}
