// Package security holds the building blocks that keep an A2A endpoint safe:
// who a caller is, what it may do, what its text may do to the host's model,
// what may leak out, and how much it may ask for. It is a leaf package: it
// imports nothing else of this module, so the server, bridge, client and push
// packages can all depend on it.
//
// # Identity and tiers
//
// [Authenticator] reads only the Authorization header ("Bearer <token>");
// nothing in a request body or in forwarding headers (X-Forwarded-For,
// Forwarded) is ever trusted. The remote address is the TCP peer address from
// http.Request.RemoteAddr.
//
//   - A per-peer token gives the identity "peer:<name>"; the shared token gives
//     "ip:<address>". Both are Authenticated.
//   - No Authorization header: a loopback caller with LoopbackIsLocal gets
//     "local:<address>"; anyone else gets "anon:<address>". Neither is
//     Authenticated. When a token is configured, [Authenticator.Admit] refuses
//     anonymous remote callers; the agent card may still be served to them.
//   - An Authorization header that is malformed or matches no configured
//     token is refused with [ErrUnauthorized]; a wrong token is never
//     downgraded to anonymous access.
//   - With an [OAuthVerifier] (AuthConfig.OAuth), a token that matches no
//     static token is checked as a JWT access token of a configured
//     issuer: identity "oauth:<issuer>:<claim>", Authenticated, TierTrusted
//     or TierPublic by its claims (never TierLocal), Scoped to the
//     operations its scopes grant ([Identity.Permits]). A refusal says
//     which check failed (algorithm, issuer, signature, exp/nbf/iat,
//     audience, identity claim), the signature before any claim.
//
// Tiers are decided in this order:
//
//  1. loopback caller presenting no token, with LoopbackIsLocal: [TierLocal]
//     (a presented token always names its holder, on loopback too);
//  2. a peer token whose name is in TrustedPeers: [TierTrusted];
//  3. the shared token while TrustedPeers is empty: [TierTrusted];
//  4. everything else (untrusted peer tokens, the shared token once trusted
//     peers are named, anonymous callers): [TierPublic].
//
// Every token comparison hashes the presented token with SHA-256 and compares
// the digest against the digest of every configured token with
// crypto/subtle, without early exit, so neither timing nor length reveals
// which token (if any) was close.
//
// # Authorisation
//
// [DefaultPolicy] lets local and trusted callers do everything. Public callers
// may send messages, get, cancel and subscribe to their own tasks, and read the
// extended agent card (which the server still shows only to authenticated
// callers); they may not list tasks or manage push-notification configs.
// [TrustGate] optionally narrows who may run tasks at all.
//
// # Untrusted text
//
// [FilterInbound] defangs text that a peer sends before the host's model sees
// it: chat-template special tokens, role markers at line starts, "ignore
// previous instructions"-style overrides, fake system tags, invisible and
// control characters, invalid UTF-8, and a leading slash command (prefixed
// with "[peer] "). [FrameUntrusted] wraps the result in a frame the peer
// cannot forge. [Redact] and [RedactValue] scrub credential-shaped strings and
// e-mail addresses from anything leaving the process; [StreamRedactor] does
// the same for a text that leaves in pieces (a streamed artifact), so that
// a secret cut by a piece boundary is found.
//
// # Abuse limits
//
// [RateLimiter] is an exact sliding-window log per identity; [StreamLimiter]
// caps concurrent streams per identity. [TurnGuard] caps inbound turns per
// context (default [DefaultMaxTurns], never above [HardMaxTurns]), and
// [Chain] carries a delegation id and depth in message metadata
// ([MetaChainID], [MetaChainDepth]) so that [CheckDepth] stops A→B→C→A loops
// (default limit [DefaultMaxChainDepth]). Since that needs every hop to
// forward the metadata, [DelegationGuard] also bounds the outbound calls
// made per inbound task and per minute per caller, which needs none.
//
// # Outbound URLs
//
// [SSRFGuard] refuses URLs and connections to loopback, private, link-local,
// metadata and other special-purpose addresses unless a setting allows them,
// and re-checks the resolved address at connect time so DNS rebinding cannot
// get around it.
//
// # Audit
//
// [AuditLog] appends one JSON line per exchange to a 0600 file with size-based
// rotation; error texts are redacted before they are written.
package security
