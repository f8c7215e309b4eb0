// Package push delivers A2A push notifications: it drains the outbox that
// the task manager fills (one entry per task event and webhook, written in
// the same transaction as the task update) and POSTs each entry to its
// webhook.
//
// Delivery is at least once and in order per webhook: a config's next
// notification is sent only after the previous one was acknowledged (any
// 2xx) or given up. Different webhooks are served in parallel. Network
// errors, timeouts, 408, 429 and 5xx answers are retried with exponential
// backoff and jitter (a Retry-After is honoured); other answers, a URL the
// SSRF guard refuses and redirects that leave the origin are given up at
// once, and so is a notification after MaxAttempts failed attempts. A
// given-up notification is recorded in the store with its reason and
// logged. Nothing is lost when the plugin stops: undelivered entries stay
// in the outbox for the next run.
//
// # Addresses
//
// A webhook URL is checked twice. When a push config is created, the
// server refuses only what is certainly forbidden then (the scheme, a
// literal loopback or private address, a forbidden name, a name that
// resolves to a forbidden address; security.SSRFGuard.PrecheckURL): a
// name that does not resolve at that moment is accepted. At delivery the
// POST connects through the guard's DialContext, which resolves the name
// itself and connects only to an address it has just checked, so the
// guard holds on the connection's real address and a DNS answer that
// changed since (DNS rebinding) gains nothing. A name that does not
// resolve then is a failed attempt, retried with backoff through the
// outbox like a network error; an address the guard refuses gives the
// notification up.
//
// # Replicas
//
// When several replicas of the plugin share one PostgreSQL database
// (Options.Replica set), every replica's dispatcher drains the same outbox.
// A dispatcher claims what it sends (store.Postgres.ClaimDeliveries: FOR
// UPDATE SKIP LOCKED, then claimed_by and claimed_until): only the first
// pending notification of a webhook can be claimed, and only when no live
// claim holds it, so each notification is sent by one replica at a time
// and each webhook still receives its notifications one at a time, in
// order. A failed attempt releases the claim (the retry may go out from
// any replica); a replica that dies holding a claim loses it after
// Options.ClaimLease, and another replica sends the notification. A
// dispatcher that stops lets a claim under way finish and gives back what
// it claimed and did not start, so those go out at once from another
// replica; a POST in flight when it stops is abandoned and held until its
// claim lapses (it may have reached the receiver).
//
// The loop — claim the due deliveries, POST with bounded concurrency and
// one at a time per webhook, sleep until the earliest retry, a Notify or
// the poll interval — is a jobs.Runner, the cancel cascade's too.
//
// What "once" means: a notification is acknowledged by the receiver and
// then removed from the outbox; it is POSTed again only when the replica
// that sent it died (or lost the database) after the POST left and before
// it recorded the answer — the at-least-once edge every webhook sender
// has. The retry carries the same X-A2A-Delivery-Id, so a receiver that
// skips ids it has processed sees each notification exactly once. A
// replica that is merely slow never causes a second POST: the claim lasts
// longer than a POST may take.
//
// # The request
//
// Each notification is one POST to the config's URL:
//
//	POST <url>
//	Content-Type: application/a2a+json
//	User-Agent: a2a-plugin
//	Authorization: <scheme> <credentials>          (when the config has authentication)
//	X-A2A-Notification-Token: <token>              (when the config has a token)
//	X-A2A-Task-Id: <task id>
//	X-A2A-Delivery-Id: <id>                        (the same on every retry: drop duplicates)
//	X-A2A-Timestamp: <Unix seconds>                (when a push secret is set)
//	X-A2A-Signature: v1=<hex HMAC-SHA256>          (when a push secret is set)
//	traceparent: 00-<trace id>-<span id>-<flags>   (when the task's turn had a W3C trace)
//	tracestate: <vendor data>                      (when that trace had one)
//
//	{"statusUpdate":{"taskId":"…","contextId":"…","status":{…}}}
//
// The body is a v1.0 StreamResponse (exactly one of task, message,
// statusUpdate, artifactUpdate), the same JSON a streaming client gets.
//
// The traceparent continues the trace of the request that started the
// task's latest turn: the same trace id, a new span id per POST (the span
// recording it when OpenTelemetry export is on), so a receiver that traces
// sees its notifications in the task's trace.
//
// # The signature
//
// The signature proves that a notification comes from this agent and was
// not altered, with a key the operator shares with the receiver
// (A2A_PUSH_SECRET, or the key the plugin generates into its data directory,
// <data dir>/push-secret; never an inbound credential such as the bearer
// token, which would let a receiver call the agent):
//
//	X-A2A-Signature = "v1=" + lowercase_hex(HMAC-SHA256(key = secret, message = timestamp + "." + body))
//
// where timestamp is the X-A2A-Timestamp header exactly as received (a
// decimal number) and body is the raw request body, byte for byte, before
// any JSON parsing. A receiver must:
//
//  1. refuse the request if either header is missing;
//  2. refuse it if the timestamp is more than a few minutes from its own
//     clock (5 minutes is the usual choice): this is what makes a captured
//     request useless to replay later;
//  3. compute the HMAC and compare it with each comma-separated "v1="
//     value of X-A2A-Signature in constant time, accepting on a match;
//  4. then parse the body, and skip an X-A2A-Delivery-Id it has already
//     processed (a retried notification may arrive twice).
//
// Receivers in Go call [Verify]. The timestamp is fresh on every attempt,
// so a retry carries a new signature over the same body.
//
// # Verifying in Python
//
//	import hashlib, hmac, time
//
//	def verify(secret: bytes, headers, body: bytes, max_skew: int = 300) -> bool:
//	    ts, sigs = headers.get("X-A2A-Timestamp", ""), headers.get("X-A2A-Signature", "")
//	    if not (ts.isascii() and ts.isdigit()) or abs(time.time() - int(ts)) > max_skew:
//	        return False
//	    want = "v1=" + hmac.new(secret, ts.encode() + b"." + body, hashlib.sha256).hexdigest()
//	    return any(hmac.compare_digest(want, s.strip()) for s in sigs.split(","))
//
// # Verifying in a shell
//
// With the timestamp in $TS, the signature header in $SIG and the raw body
// in body.json (for checking by hand; the comparison is not constant-time):
//
//	want="v1=$({ printf '%s.' "$TS"; cat body.json; } | openssl dgst -sha256 -hmac "$A2A_PUSH_SECRET" | sed 's/^.*= //')"
//	[ "$want" = "$SIG" ] && [ $(( $(date +%s) - TS )) -le 300 ] && [ $(( TS - $(date +%s) )) -le 300 ] && echo verified
package push
