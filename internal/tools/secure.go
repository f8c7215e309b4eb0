package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/a2a-plugin/a2a-plugin/internal/client"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/tracing"
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

// Origin is where one tool call comes from, decided once where the call
// enters (App.CallTool) and passed down explicitly to everything the call
// does: no part of it travels as a context value.
type Origin struct {
	// Platform and ChatID name the host conversation the call is made
	// from (empty when the host did not say).
	Platform, ChatID string
	// Agent is the host's agent whose turn makes the call (contract 1.4;
	// "" for a host without agents): the conversations it records and
	// reads (a2a_history, a2a_list) and the delegations a2a_task resumes
	// are that agent's only.
	Agent string
	// Task and Caller name the inbound A2A task the call works for and
	// its caller (an identity such as "peer:bob"), when the host answers
	// one: its outbound calls count against that task's and caller's
	// delegation bounds (Config.MaxCallsPerTask, MaxCallsPerMinute) and
	// the tasks it starts are recorded for the cascade. Empty when the
	// host's own user asked.
	Task, Caller string
	// Chain is the delegation chain of the inbound task (from
	// security.ChainFromMetadata); outbound calls continue it one hop
	// deeper instead of starting a new one. Zero: a new chain.
	Chain security.Chain
	// Trace is the W3C trace the outbound calls continue; TraceIsSpan
	// says it names a span the plugin records (OpenTelemetry export),
	// which the calls carry as it is rather than a child of it. The
	// caller decides it once — App from the host's req.trace, else the
	// inbound turn's, else a new trace.
	Trace       tracing.Context
	TraceIsSpan bool
}

// call is what the requests of the call's outbound calls carry (the
// client's per-call knobs): its trace.
func (o Origin) call() client.Call {
	return client.Call{Trace: o.Trace, Span: o.TraceIsSpan}
}

// admitCalls counts n outbound calls against the delegation bounds of the
// inbound task the tool call works for (none: the host's own user asked,
// and nothing is counted); a refusal is an is_error result naming the
// setting.
func (t *Toolset) admitCalls(org Origin, tool string, n int) *result {
	if org.Task == "" && org.Caller == "" {
		return nil
	}
	if err := t.delegations.Admit(org.Task, org.Caller, n); err != nil {
		return errorResult("%s: refused: %v", tool, err)
	}
	return nil
}

// nextChain returns the chain for one outbound call: the caller's chain
// (or a new one) one hop deeper, refused beyond maxDepth.
func nextChain(org Origin, maxDepth int) (security.Chain, error) {
	next := org.Chain.Next()
	if err := security.CheckDepth(next, maxDepth); err != nil {
		return next, fmt.Errorf("%w; answer from what you have instead of delegating further", err)
	}
	return next, nil
}

// applyChain writes the chain into message metadata.
func applyChain(md map[string]any, c security.Chain) map[string]any {
	return c.Apply(md)
}
