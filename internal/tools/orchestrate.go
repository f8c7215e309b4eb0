package tools

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/client"
)

// orchestrateArgs are the arguments of a2a_orchestrate.
type orchestrateArgs struct {
	Capability string   `json:"capability"`
	Message    string   `json:"message"`
	Mode       string   `json:"mode"`
	TimeoutS   *float64 `json:"timeout_s"`
}

// candidate is a configured peer with its card, or why it has none.
type candidate struct {
	pc   *peerConf
	info *client.CardInfo
	err  error
}

// cards fetches every configured peer's card in parallel, for the call
// org.
func (t *Toolset) cards(ctx context.Context, org Origin) []candidate {
	out := make([]candidate, len(t.peers.all))
	var wg sync.WaitGroup
	for i, pc := range t.peers.all {
		wg.Add(1)
		go func(i int, pc *peerConf) {
			defer wg.Done()
			info, err := pc.peer.For(org.call()).Card(ctx)
			out[i] = candidate{pc: pc, info: info, err: err}
		}(i, pc)
	}
	wg.Wait()
	return out
}

// hasCapability reports whether a card advertises capability as a skill
// id, skill name or tag (case-insensitive).
func hasCapability(c *a2a.AgentCard, capability string) bool {
	capability = strings.TrimSpace(capability)
	for _, s := range c.Skills {
		if strings.EqualFold(s.ID, capability) || strings.EqualFold(s.Name, capability) {
			return true
		}
		for _, tag := range s.Tags {
			if strings.EqualFold(tag, capability) {
				return true
			}
		}
	}
	return false
}

func (t *Toolset) orchestrate(ctx context.Context, ci *callInfo) *result {
	var a orchestrateArgs
	if err := decodeArgs(ToolOrchestrate, ci.args, &a, "capability", "message", "mode", "timeout_s"); err != nil {
		return errorResult("%v", err)
	}
	if strings.TrimSpace(a.Capability) == "" {
		return errorResult("a2a_orchestrate: argument \"capability\" is required: a skill id, skill name or tag (see a2a_list or a2a_discover)")
	}
	mode := strings.ToLower(strings.TrimSpace(a.Mode))
	switch mode {
	case "all", "first", "best":
	case "":
		return errorResult("a2a_orchestrate: argument \"mode\" is required: \"all\", \"first\" or \"best\"")
	default:
		return errorResult("a2a_orchestrate: argument \"mode\" must be \"all\", \"first\" or \"best\", not %q", a.Mode)
	}
	prep, res := t.prepareMessage(ci.rec.org, ToolOrchestrate, a.Message, "", "", nil, nil)
	if res != nil {
		return res
	}
	waitFor, err := t.clampWait(a.TimeoutS, t.cfg.DefaultTimeout)
	if err != nil {
		return errorResult("a2a_orchestrate: %v", err)
	}

	var picked []*peerConf
	var skipped []string
	for _, c := range t.cards(ctx, ci.rec.org) {
		switch {
		case c.err != nil:
			skipped = append(skipped, fmt.Sprintf("%s (card unavailable: %s)", c.pc.Name, kindOrErr(c.err)))
		case hasCapability(c.info.Card, a.Capability):
			picked = append(picked, c.pc)
		}
	}
	if len(picked) == 0 {
		msg := fmt.Sprintf("a2a_orchestrate: no configured peer advertises %q as a skill id, name or tag.", a.Capability)
		if len(skipped) > 0 {
			msg += " Not checked: " + strings.Join(skipped, "; ") + "."
		}
		return errorResult("%s Use a2a_list to see the peers' skills.", msg)
	}

	if res := t.admitCalls(ci.rec.org, ToolOrchestrate, len(picked)); res != nil {
		return res
	}

	// Every peer gets the message at once. In mode first, the first
	// success closes stop: the others return as soon as they know their
	// task id (a peer that has not named its task yet is given ackGrace to
	// do so), and every task still running is then canceled.
	results := make([]*outcome, len(picked))
	stop := make(chan struct{})
	var stopOnce sync.Once
	finished := make(chan int, len(picked))
	var wg sync.WaitGroup
	for i, pc := range picked {
		wg.Add(1)
		go func(i int, pc *peerConf) {
			defer wg.Done()
			p := *prep
			p.msg.MessageID = a2a.NewID()
			target := t.peers.target(pc, &ci.rec)
			var peerStop <-chan struct{}
			if mode == "first" {
				peerStop = stop
			}
			results[i] = t.send(ctx, target, &p, true, waitFor, nil, peerStop)
			finished <- i
		}(i, pc)
	}
	go func() { wg.Wait(); close(finished) }()

	winner := -1
	early := map[int]bool{} // finished before the winner
	for i := range finished {
		o := results[i]
		if winner < 0 {
			early[i] = true
		}
		ci.report(fmt.Sprintf("%s: %s", picked[i].Name, briefOutcome(o)))
		if mode == "first" && winner < 0 && o.success() {
			winner = i
			stopOnce.Do(func() { close(stop) })
		}
	}
	var cancelled []string
	if winner >= 0 {
		for j, pc := range picked {
			o := results[j]
			// Cancel what the stop interrupted, and every task still running.
			if j == winner || o.tr.done() || (early[j] && !o.receipt) || (o.err == nil && !o.receipt) {
				continue
			}
			note := pc.Name + " (request cancelled"
			if id := o.tr.taskID; id != "" {
				target := t.peers.target(pc, &ci.rec)
				if err := t.cancelRemote(ctx, target, id, prep.chainID); err != nil {
					note += fmt.Sprintf("; CancelTask for task %s failed: %s", peerID(id), kindOrErr(err))
				} else {
					note += fmt.Sprintf("; CancelTask sent for task %s", peerID(id))
				}
			}
			cancelled = append(cancelled, note+")")
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "Sent to %d peer(s) advertising %q (mode %s, per-peer wait %s).\n", len(picked), a.Capability, mode, roundDur(waitFor))
	switch mode {
	case "first":
		if winner < 0 {
			b.WriteString("No peer succeeded:\n")
			writeAll(&b, picked, results)
			return &result{Content: b.String(), IsError: allFailed(results)}
		}
		fmt.Fprintf(&b, "First successful reply, from %s:\n", picked[winner].Name)
		writeOutcome(&b, picked[winner].Name, results[winner])
		if len(cancelled) > 0 {
			fmt.Fprintf(&b, "Cancelled the others: %s\n", strings.Join(cancelled, "; "))
		}
		for j := range picked {
			if o := results[j]; j != winner && o.err == nil && o.tr.done() {
				fmt.Fprintf(&b, "Also answered: %s: %s\n", picked[j].Name, briefOutcome(o))
			}
		}
	case "best":
		best := pickBest(results)
		if best < 0 {
			b.WriteString("Every peer failed, so there is no best reply:\n")
			writeAll(&b, picked, results)
			return &result{Content: b.String(), IsError: true}
		}
		fmt.Fprintf(&b, "Best reply, from %s (rule: completed beats input-required beats other states; failures — errors, FAILED, REJECTED, CANCELED — never win; then the longer answer; then the faster):\n", picked[best].Name)
		writeOutcome(&b, picked[best].Name, results[best])
		b.WriteString("Others:\n")
		for j := range picked {
			if j != best {
				fmt.Fprintf(&b, "- %s: %s\n", picked[j].Name, briefOutcome(results[j]))
			}
		}
	default:
		if allFailed(results) {
			b.WriteString("Every peer failed:\n")
			writeAll(&b, picked, results)
			return &result{Content: b.String(), IsError: true}
		}
		writeAll(&b, picked, results)
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&b, "Not checked: %s\n", strings.Join(skipped, "; "))
	}
	if prep.redactions > 0 {
		fmt.Fprintf(&b, "Note: %d secret(s) were redacted from the outgoing message before it was sent.\n", prep.redactions)
	}
	return textResult(strings.TrimRight(b.String(), "\n"))
}

// writeAll lists every peer's reply.
func writeAll(b *strings.Builder, picked []*peerConf, results []*outcome) {
	for i, pc := range picked {
		fmt.Fprintf(b, "%d. ", i+1)
		o := results[i]
		if o.err != nil {
			fmt.Fprintf(b, "%s failed after %s: %s\n", pc.Name, roundDur(o.elapsed), o.voice().errText(o.err))
			continue
		}
		writeOutcome(b, pc.Name, o)
	}
}

// allFailed reports whether every outcome is a failure (see failed).
func allFailed(results []*outcome) bool {
	for _, o := range results {
		if !o.failed() {
			return false
		}
	}
	return true
}

// briefOutcome is a one-line summary of an outcome.
func briefOutcome(o *outcome) string {
	switch {
	case o.err != nil:
		return "error: " + kindOrErr(o.err)
	case o.tr.message != nil:
		return fmt.Sprintf("replied in %s (%d characters)", roundDur(o.elapsed), len(o.tr.answer()))
	case o.receipt && !o.tr.done():
		return fmt.Sprintf("still %s after %s (task %s)", stateName(o.tr.state), roundDur(o.elapsed), peerID(o.tr.taskID))
	}
	return fmt.Sprintf("%s in %s (%d characters)", stateName(o.tr.state), roundDur(o.elapsed), len(o.tr.answer()))
}

// kindOrErr shortens a client error to its kind and cause, on one line
// (what came from the peer defanged).
func kindOrErr(err error) string {
	return errLine(err, 300)
}

// stateRank orders outcomes for mode best: completed (or a direct reply)
// 3, input-required 2, anything else that is not a failure 1 (still
// working, auth required), a failure 0.
func stateRank(o *outcome) int {
	switch {
	case o.failed():
		return 0
	case o.tr.message != nil || o.tr.state == a2a.TaskStateCompleted:
		return 3
	case o.tr.state == a2a.TaskStateInputRequired:
		return 2
	}
	return 1
}

// pickBest applies the documented heuristic: highest state rank, then the
// longer non-empty answer, then the faster reply. A failure never wins; -1
// when every outcome is a failure.
func pickBest(results []*outcome) int {
	idx := make([]int, 0, len(results))
	for i, o := range results {
		if !o.failed() {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return -1
	}
	sort.SliceStable(idx, func(x, y int) bool {
		a, b := results[idx[x]], results[idx[y]]
		if ra, rb := stateRank(a), stateRank(b); ra != rb {
			return ra > rb
		}
		if la, lb := len(strings.TrimSpace(a.tr.answer())), len(strings.TrimSpace(b.tr.answer())); la != lb {
			return la > lb
		}
		return a.elapsed < b.elapsed
	})
	return idx[0]
}
