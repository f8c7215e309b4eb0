package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

// This file is the seam between the tools and internal/security: redaction,
// the SSRF guard, the delegation chain and the delegation bounds.

// redactText scrubs credential-shaped strings from outgoing text.
func redactText(s string) (string, int) {
	return security.Redact(s)
}

// redactData scrubs the JSON value of a data part: every string passes
// through security.RedactValue (credential shapes; whole values under keys
// that name a secret, such as "password" or "api_key"). It returns the
// value unchanged when nothing was found, else the re-encoded value, and
// how many secrets were replaced.
func redactData(raw json.RawMessage) (json.RawMessage, int, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // keep numbers exactly as given
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, 0, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(security.RedactValue(v)); err != nil {
		return nil, 0, err
	}
	out := bytes.TrimSpace(buf.Bytes())
	// RedactValue does not count; every replacement carries the mark.
	n := bytes.Count(out, []byte(security.RedactedMark)) - bytes.Count(raw, []byte(security.RedactedMark))
	if n <= 0 {
		return raw, 0, nil
	}
	return json.RawMessage(out), n, nil
}

// newGuard returns the guard of the shared client: loopback and private
// addresses as the configuration allows, nothing else exempt. A configured
// peer is exempt only on its own origin (scheme, host and port) and only
// for requests made on its behalf: client.Endpoint.Configured. A card's
// interface URL on another origin, a redirect elsewhere and an
// unconfigured URL all pass this guard.
func newGuard(cfg Config) *security.SSRFGuard {
	return &security.SSRFGuard{AllowLoopback: cfg.AllowLoopback, AllowPrivate: cfg.AllowPrivate}
}

// checkUnconfiguredURL applies the SSRF rules to a URL that is not a
// configured peer.
func checkUnconfiguredURL(ctx context.Context, cfg Config, raw string) error {
	return newGuard(cfg).CheckURL(ctx, raw)
}

type chainKey struct{}

// WithChain returns a context carrying the delegation chain of the work
// that is calling the tools (the bridge sets it for turns started by an
// inbound A2A task, from security.ChainFromMetadata); outbound calls then
// continue that chain one hop deeper instead of starting a new one.
func WithChain(ctx context.Context, c security.Chain) context.Context {
	return context.WithValue(ctx, chainKey{}, c)
}

// agentKey carries the host agent whose turn makes a tool call
// (WithAgent).
type agentKey struct{}

// WithAgent returns a context saying that the tool call is made by the
// turn of the host's agent id (contract 1.4; "" for a host without
// agents): the conversations it records and reads (a2a_history, a2a_list)
// and the delegations a2a_task resumes are that agent's only.
func WithAgent(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, agentKey{}, id)
}

// agentOf is the agent of a tool call ("" when none was said).
func agentOf(ctx context.Context) string {
	id, _ := ctx.Value(agentKey{}).(string)
	return id
}

// turnKey carries the inbound task a tool call works for (WithTurn).
type turnKey struct{}

type turnInfo struct{ task, caller string }

// WithTurn returns a context saying that the tool call is made while the
// host answers the inbound task taskID of caller (an identity such as
// "peer:bob"): its outbound calls count against that task's and that
// caller's delegation bounds (Config.MaxCallsPerTask, MaxCallsPerMinute).
func WithTurn(ctx context.Context, taskID, caller string) context.Context {
	return context.WithValue(ctx, turnKey{}, turnInfo{taskID, caller})
}

// admitCalls counts n outbound calls against the delegation bounds of the
// inbound task the tool call works for (none: the host's own user asked,
// and nothing is counted); a refusal is an is_error result naming the
// setting.
func (t *Toolset) admitCalls(ctx context.Context, tool string, n int) *result {
	turn, ok := ctx.Value(turnKey{}).(turnInfo)
	if !ok {
		return nil
	}
	if err := t.delegations.Admit(turn.task, turn.caller, n); err != nil {
		return errorResult("%s: refused: %v", tool, err)
	}
	return nil
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
