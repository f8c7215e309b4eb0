package tools

import (
	"context"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/a2a-plugin/a2a-plugin/internal/security"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// This file is the seam between the tools and internal/security: redaction,
// the SSRF guard and the delegation chain.

// redactText scrubs credential-shaped strings from outgoing text.
func redactText(s string) (string, int) {
	return security.Redact(s)
}

// newGuard returns the guard of the shared client: configured peers' hosts
// are exempt (the operator named them), everything else follows the
// loopback/private settings.
func newGuard(cfg Config, peerHosts []string) *security.SSRFGuard {
	g := &security.SSRFGuard{AllowLoopback: cfg.AllowLoopback, AllowPrivate: cfg.AllowPrivate}
	seen := map[string]bool{}
	for _, h := range peerHosts {
		h = strings.ToLower(strings.Trim(h, "[]"))
		if h != "" && !seen[h] {
			seen[h] = true
			g.AllowHosts = append(g.AllowHosts, h)
		}
	}
	return g
}

// checkUnconfiguredURL applies the SSRF rules to a URL that is not a
// configured peer, without the configured peers' host exemptions.
func checkUnconfiguredURL(ctx context.Context, cfg Config, raw string) error {
	g := &security.SSRFGuard{AllowLoopback: cfg.AllowLoopback, AllowPrivate: cfg.AllowPrivate}
	return g.CheckURL(ctx, raw)
}

type chainKey struct{}

// WithChain returns a context carrying the delegation chain of the work
// that is calling the tools (the bridge sets it for turns started by an
// inbound A2A task, from security.ChainFromMetadata); outbound calls then
// continue that chain one hop deeper instead of starting a new one.
func WithChain(ctx context.Context, c security.Chain) context.Context {
	return context.WithValue(ctx, chainKey{}, c)
}

// nextChain returns the chain for one outbound call: the caller's chain
// (or a new one) one hop deeper, refused beyond maxDepth.
func nextChain(ctx context.Context, maxDepth int) (security.Chain, error) {
	c, _ := ctx.Value(chainKey{}).(security.Chain)
	next := c.Next()
	if err := security.CheckDepth(next, maxDepth); err != nil {
		return next, fmt.Errorf("%w; answer from what you have instead of delegating further", err)
	}
	return next, nil
}

// applyChain writes the chain into message metadata.
func applyChain(md map[string]any, c security.Chain) map[string]any {
	return c.Apply(md)
}

// recordDelegation tells the host's memory about finished delegated work,
// when the host offers RecordDelegation (best effort).
func (t *Toolset) recordDelegation(ctx context.Context, peer string, prep *prepared, o *outcome) {
	if t.deps.Host == nil || o.err != nil || !o.tr.done() {
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer cancel()
	_, err := t.deps.Host.RecordDelegation(cctx, &pb.RecordDelegationRequest{
		Peer: peer, RemoteTaskId: o.tr.taskID, RemoteContextId: o.tr.contextID, ChainId: prep.chainID,
		RequestSummary: oneLine(prep.text, 500), ResultSummary: oneLine(o.tr.answer(), 1000), State: o.tr.state.String(),
	})
	if err != nil && status.Code(err) != codes.Unimplemented {
		t.log.Debug("host did not record the delegation", "task_id", o.tr.taskID, "context_id", o.tr.contextID, "peer", peer, "error", err)
	}
}
