// Package security_test proves the A2A plugin's security defaults end to
// end: every test launches the real cmd/a2a-plugin binary under the
// testharness host (go-plugin over gRPC, exactly as an agent host does),
// talks A2A JSON-RPC to it over real HTTP(S), and checks what reached the
// host's agent through the harness recorder.
//
//   - hostile_test.go: a table of hostile requests (tokens, forged
//     identities, foreign task ids, size and shape attacks, slow-loris,
//     injections, control characters) against one binary while a
//     well-behaved peer keeps being served;
//   - bind_test.go: loopback-only binds, refused unsafe settings, TLS;
//   - identity_test.go: identities, tiers reaching the host, per-tier
//     policy, the trust gate, card security schemes, the extended card;
//   - ratelimit_test.go, limits_test.go: rate limit, body/part limits,
//     streams per identity;
//   - redaction_test.go: secrets never leave in replies, streams, reads,
//     push payloads or a2a_call messages;
//   - loop_test.go: the per-context turn cap and the delegation ring
//     A → B → C → A stopped at the maximum depth;
//   - audit_test.go: the audit log's records, secrets and rotation;
//   - ssrf_test.go: webhook and a2a_call URLs through the SSRF guard.
package security_test
