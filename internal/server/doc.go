// Package server is the inbound side of the A2A plugin: it serves the
// agent card and the three A2A v1.0 bindings — JSON-RPC (with the 0.3
// method names and shapes for older peers), HTTP+JSON and gRPC — and
// hands every request to the task manager (package tasks) after
// authenticating, authorising, limiting and validating it.
//
// # Shape
//
// The bindings are thin adapters over one transport-neutral Handler
// (handler.go): the A2A operations with typed requests and answers, the
// exchange (Call: the caller's identity, the version, the extensions,
// what it was about) and event streams (Stream, written to a binding's
// Sink). pipeline (pipeline.go) implements it — admission, authorization,
// stream caps and the exchange's record, once for every binding — over
// service (service.go), the operations on the task manager. The card
// handler (card.go) stands on its own; the extended card is built there
// for every binding. Server (server.go) composes them and listens
// (listen.go: the gRPC binding shares the HTTP port).
//
// # Routes
//
//	GET  /.well-known/agent-card.json   public agent card, v1.0 (0.3 with A2A-Version: 0.3)
//	GET  /.well-known/agent.json        public agent card, 0.3 (the legacy path)
//	POST /                              JSON-RPC endpoint (aliases /a2a and /rpc)
//	GET  /healthz                       "ok" (503 while shutting down)
//
// HTTP+JSON binding (rest.go), each route optionally under /{tenant}:
//
//	POST   /message:send                               SendMessage
//	POST   /message:stream                             SendStreamingMessage (SSE)
//	GET    /tasks/{id}?historyLength=                  GetTask
//	GET    /tasks?contextId=&status=&pageSize=&…       ListTasks
//	POST   /tasks/{id}:cancel                          CancelTask
//	GET    /tasks/{id}:subscribe (or POST)             SubscribeToTask (SSE)
//	POST   /tasks/{taskId}/pushNotificationConfigs     CreateTaskPushNotificationConfig
//	GET    /tasks/{taskId}/pushNotificationConfigs     ListTaskPushNotificationConfigs
//	GET    /tasks/{taskId}/pushNotificationConfigs/{id}     GetTaskPushNotificationConfig
//	DELETE /tasks/{taskId}/pushNotificationConfigs/{id}     DeleteTaskPushNotificationConfig
//	GET    /extendedAgentCard                          GetExtendedAgentCard
//
// # Request pipeline
//
// Every request goes through these steps, cheapest first, and the first
// refusal answers. The handler's (Admit): shutdown → browser checks →
// authentication (security.Authenticator) → rate limit per identity. The
// binding's: body size → Content-Type → JSON nesting depth and value
// budget (valueBudget) → UTF-8 →
// envelope → method (JSON-RPC; the route for HTTP+JSON, the RPC for
// gRPC). The handler's (Authorize): A2A-Version → A2A-Extensions →
// capability → permission (security.Policy, OAuth scopes) → trust gate
// (sends). The binding's:
// params decoding and validation (a2a.DecodeParams for both JSON
// bindings, a2av03.DecodeParams for 0.3 methods; grpcwire and the same
// Validate methods for gRPC). The
// handler's: stream caps → message limits (parts, part size, media types,
// ids) → loop guards (sends) → task manager. Nothing in a
// request can claim an identity: the identity comes from the
// Authorization header (gRPC: the authorization metadata) and the TCP
// peer only.
//
// Audit records, metrics, logs (with the binding when it is not JSON-RPC),
// spans and the rate-limit and stream budgets are the handler's: an
// identity has one budget for all bindings, and the three leave the same
// record for the same exchange.
//
// # Decisions on what the specification leaves open
//
// The numbers (A.4, …) are those of the maintainers' list of the points
// the specification leaves open.
//
//   - Versions (A.4). The method name selects the shapes: v1.0 names get
//     v1.0 shapes, 0.3 names (message/send, tasks/get, …) get 0.3 shapes.
//     The A2A-Version header (or ?A2A-Version=) only gates: "1.0" and "0.3"
//     (patch ignored) are served, anything else is -32009 with ErrorInfo
//     naming the version. A missing header with a v1.0 method is served as
//     1.0 (the lenient reading; a client using v1.0 names can only mean
//     v1.0); a 0.3 method under "A2A-Version: 1.0" still answers in 0.3
//     shapes.
//   - Errors. JSON-RPC errors travel with HTTP 200. Refusals that happen
//     before dispatch use an HTTP status and still carry a JSON-RPC error
//     body: 401 (bad or missing token; WWW-Authenticate: Bearer), 408 (body
//     too slow), 413 (body too large), 429 (rate limit, with Retry-After,
//     and the per-identity stream cap), 503 (shutting down; the global
//     stream cap, -32603 SERVER_BUSY, with Retry-After). Every error
//     of a v1.0 method carries data = [google.rpc.ErrorInfo] (A.5), plus
//     google.rpc.BadRequest for invalid params. An error of a 0.3 method
//     (once the method is known) carries data as one object instead —
//     {"reason", "domain", "metadata", "details": [BadRequest…]} — because
//     0.3 clients decode data as an object (the official a2a-go 0.3
//     client fails on an array; a2av03.EncodeError). Refusals before the
//     method is read keep the v1.0 form; 0.3 clients do not read the body
//     of a non-200 answer. The project's own codes: -32050 UNAUTHENTICATED or
//     UNAUTHORIZED (the tier may not use the operation), -32051
//     RATE_LIMITED or TOO_MANY_STREAMS, -32052 UNTRUSTED (trust gate).
//   - Browsers. A request a browser sends from a page of another origin
//     (an Origin header naming another host, "null", or Sec-Fetch-Site
//     cross-site) is refused with HTTP 403 and -32050 CROSS_SITE_REQUEST in
//     both bindings: loopback callers are the Local tier, and a web page
//     open in the operator's browser must not drive the local agent.
//     A2A clients are not browsers and send neither header; the inspector
//     is same-origin. And a caller that is Local only because it connects
//     over loopback (no token) must name a loopback host in Host — an IP
//     literal, localhost, or the public_url host — or it gets HTTP 421: a
//     DNS-rebinding page is same-origin with itself and would otherwise
//     reach the agent as Local through the operator's browser.
//   - Envelope. A body that is not JSON is -32700 with id null; invalid
//     UTF-8 is -32700; nesting deeper than Limits.MaxJSONDepth is -32600;
//     a batch is -32600. A notification (no id) gets HTTP 204 and is not
//     processed: A2A defines no notification methods, and a send whose
//     answer nobody can receive would only create an unreachable task.
//   - Content-Type (A.19). A JSON-RPC request whose Content-Type is neither
//     application/json nor application/*+json is answered with -32005
//     ContentTypeNotSupported (HTTP 200), which is what the conformance kit
//     checks. A missing Content-Type is accepted.
//   - Media types. A part's media type is its mediaType, or the one its
//     kind implies (text/plain for text, application/json for data,
//     application/octet-stream for files). One outside CardConfig.InputModes
//     (wildcards allowed; also the card's defaultInputModes) is -32005.
//   - Ids. Message, context, task and reference ids longer than 256 bytes,
//     or holding control characters, U+2028/U+2029 or invalid UTF-8, are
//     -32602: ids reach logs, headers and the host's session keys.
//   - Streams (A.1). The first event of a SendStreamingMessage stream is
//     the task, sent at once (the task is stored then), not after the
//     agent's first output: so a direct reply on a stream completes that
//     task like a final answer (its text is the answer artifact) rather
//     than making a message-only stream. A SendStreamingMessage stream
//     ends when its task is terminal or waits for input (INPUT_REQUIRED):
//     the request has its answer, a question, and the client answers with
//     a new message, whose own stream follows the task on (§11.7, and what
//     the Python SDK does); a 0.3 stream marks that status update "final":
//     true. At AUTH_REQUIRED it stays open (§7.6.1): the task resumes on
//     the same stream once the peer sends its credentials as a message on
//     the task. SubscribeToTask (and tasks/resubscribe) follows its task
//     until it is terminal (§3.1.6): on a task at INPUT_REQUIRED or
//     AUTH_REQUIRED it sends the task and stays open while the client
//     answers from another connection, and a subscriber to a running task
//     stays open through a question; only a terminal state marks a 0.3
//     event final there. With replicas, a subscriber follows the task
//     through the database whichever replica takes the answer. Errors
//     before the stream starts are plain JSON responses; after it started
//     they are one JSON-RPC error event, then the stream closes (a client
//     too slow to keep up gets STREAM_DROPPED; shutdown gets UNAVAILABLE).
//     Keep-alive comments (": keep-alive") are sent every Limits.KeepAlive.
//     Each write has a deadline (Limits.WriteTimeout) so a peer that stops
//     reading is cut; the task never waits for a stream. Events already
//     queued together are written without a flush in between and share
//     one; what a stream holds unflushed when it ends (its last event,
//     when its end was queued behind it) leaves with the chunked
//     encoding's terminator when the handler returns, under a deadline
//     the handler leaves set for that write (net/http lifts it once the
//     response is finished, before the connection's next request).
//   - Push (A.13, A.3). When push is disabled every push-config method
//     and any inline configuration.taskPushNotificationConfig is -32003.
//     Webhook URLs go through PushOptions.CheckURL (the SSRF guard); a
//     refusal is -32602 naming the URL and the settings that allow
//     loopback or private addresses. Delete answers {} (v1.0) or null
//     (0.3).
//   - Capabilities before permissions. A missing capability (push, the
//     extended card) answers the same to every caller, so it is checked
//     before the caller's permissions.
//   - Extended card. It is declared exactly when CardConfig.ExtendedSkills
//     is not empty, so -32007 never occurs; when not declared it is -32004.
//     It is shown to authenticated callers and to local callers with the
//     extended-card permission; others get -32050.
//   - Card. /.well-known/agent-card.json is the v1.0 card, valid against
//     the v1.0 schema as it is (its Agent Card allows no other keys, so
//     none of the 0.3 keys is on it). 0.3 clients get the 0.3 card
//     (a2av03.FromCard: url, preferredTransport "JSONRPC", protocolVersion
//     "0.3.0", security schemes with `type`) at the legacy path
//     /.well-known/agent.json, or at the canonical path when the request
//     says A2A-Version: 0.3 (header or query; Vary names A2A-Version). A
//     0.3 client that fetches the canonical path without asking gets the
//     v1.0 card, which it cannot use: point it at the legacy path (a2a-go
//     0.3: agentcard.WithPath("/.well-known/agent.json")). With a signing
//     key each document is signed over itself (see package cardsign).
//     Security requirement scopes use the ProtoJSON StringList form
//     ({"schemes":{"bearer":{}}}) that the proto and the schema define; the
//     official Go SDK up to v2.4.0 cannot parse it (a2aproject/a2a-go#430)
//     and needs a tolerant card parser (or, its CLI, --transport jsonrpc,
//     which skips the card; README) until it is fixed. No schema-valid
//     form of the requirement reads there, and leaving the requirement
//     out would tell other readers that no token is needed, so the card
//     keeps it. Skills are built
//     from the host's live tool registry, read at most once every 2 s
//     (skillsTTL) however many card requests arrive, and by one call that
//     concurrent requests share; a change of the host's tools shows within
//     that time, with a new ETag. At least one skill is always listed
//     (A.10). The interface URL is CardConfig.PublicURL; else the scheme
//     and Host the request came in on when that Host is a loopback name
//     (or, over TLS this server terminates, a name its certificate
//     covers); else the address the connection came in on. Another Host
//     is never reflected into the card. The card is public (not
//     authenticated), but every card request counts against the caller's
//     rate limit like any other request (plain HTTP 429 with Retry-After
//     when over it), and it is audited with method "card".
//   - OAuth 2.0 / OpenID Connect. With OAuth issuers configured the card
//     declares, per issuer, "oidc-<name>" (OpenID Connect, the discovery
//     URL) and, once the token endpoint is known, "oauth2-<name>" (the
//     client-credentials flow, tokenUrl, every operation scope); each
//     scheme is a requirement of its own beside "bearer" (static tokens),
//     with no scopes listed: which operations a token may use is checked
//     per request (Server.permit: the tier's permission and the token's
//     scope, -32050 naming the missing scope). The extended card declares
//     the same.
//   - Tenants. No interface declares a tenant; a tenant field in a request
//     is accepted and ignored.
//   - Scoping. A caller sees only the tasks it created; a local caller
//     (security.TierLocal) sees all. Another peer's task answers exactly
//     like an unknown one (-32001) in every method.
//   - Context ids (A.11). A peer may name in message.contextId only a
//     conversation this agent opened for it (the context of one of its
//     tasks, or one it was answered in; tasks.Manager.claimContext).
//     Another peer's context and an id nobody has used answer alike:
//     -32602 with the same message (the id aside), after the same scoped
//     store lookup, and naming an unused id records nothing. "Alike" has
//     to cover both cases, or the difference is the oracle: accepting
//     unknown ids while refusing foreign ones tells a peer which ids are
//     taken and lets it claim ids before their owner uses them; refusing
//     both, the spec's option for ids a server cannot accept (it MUST NOT
//     substitute one), leaves nothing to learn or claim. The Local
//     operator may name any context, a new one too.
//   - Loop guards. A send into a context (explicit contextId, or the
//     context of the task a continuation names) is counted by the turn
//     guard; past the cap the task is created REJECTED with a reason naming
//     A2A_MAX_PINGPONG_TURNS, without reaching the host. A successful
//     CancelTask resets its context's count. A delegation chain
//     (security.ChainFromMetadata) deeper than Options.MaxDelegationDepth
//     is rejected the same way; malformed chain metadata is -32602.
//   - Failed authentication attempts count against the rate limit of the
//     caller's address, which slows down token guessing.
//
// # HTTP+JSON binding
//
//   - Declared in supportedInterfaces after the two JSON-RPC entries, as
//     {url: <base URL without the trailing slash>, protocolBinding:
//     "HTTP+JSON", protocolVersion: "1.0"}. Its routes are path-distinct
//     from POST / (and /a2a, /rpc), so it shares the JSON-RPC base URL;
//     without the trailing slash a client's base+"/message:send" is a
//     clean path.
//   - Equivalence (specification §9, BIND-EQUIV). Results are byte-for-byte
//     the JSON-RPC results without the envelope; errors are the same
//     *a2a.Error (code, ErrorInfo reason and metadata, message) in the
//     google.rpc.Status form {"error":{"code":<HTTP status>,"status":<name>,
//     "message":…,"details":[ErrorInfo, …]}}. The HTTP status of an error
//     that JSON-RPC answers with 200 is a2a.HTTPStatus of its code (the
//     v1.0.1 table: -32001 404 NOT_FOUND; -32002/3/4/7/8/9 400
//     FAILED_PRECONDITION; -32005 and -32600/2/-32700 400 INVALID_ARGUMENT;
//     -32006/-32603 500 INTERNAL; -32601 404 UNIMPLEMENTED; the project's
//     -32050 401 UNAUTHENTICATED, -32051 429, -32052 403), except an
//     operation the caller's tier may not use (-32050 UNAUTHORIZED), which
//     is 403 PERMISSION_DENIED, and a stream cut by shutdown, 503. Errors
//     that JSON-RPC already answers with an HTTP status keep it (401, 408,
//     413, 429 with Retry-After, 503).
//   - Version. A missing A2A-Version is served as 1.0, as for PascalCase
//     JSON-RPC methods; "0.3" is -32009, since the interface is declared
//     for 1.0 only (0.3 peers use the JSON-RPC interface; 0.3's /v1/…
//     REST paths are not served).
//   - Media types. Answers are application/a2a+json, except for a client
//     whose Accept names application/json (or only text/event-stream) and
//     not application/a2a+json: it gets application/json, because the
//     official Go SDK v2.4.0 reads error bodies only under that type.
//     Request bodies may be application/json, application/a2a+json or any
//     application/*+json (or unlabelled); another type is -32005 (400).
//   - Requests. GET and DELETE routes take their fields from the query
//     (camelCase names; snake_case accepted, as in JSON bodies; booleans
//     "true"/"false"; numbers, enums and timestamps as their JSON string
//     forms; lastUpdatedAfter, the Go SDK v2.4.0's name, is read as
//     statusTimestampAfter). POST routes take a JSON object body, which
//     may be empty for :cancel and :subscribe. Path parameters win; a body
//     or query value that contradicts one is -32602. A body that is not
//     JSON is -32700, one that is not an object -32600 (both 400).
//   - Subscribe answers GET and POST (the proto and the specification
//     text disagree, A.17). Delete answers 200 with {} (clients treat any
//     2xx as success; some accept only 200). An unknown verb on a task
//     path is the task id (GET /tasks/a:b reads task "a:b").
//   - Streams. Each SSE event's data is the bare StreamResponse; an error
//     after the stream started is an SSE event named "error" whose data is
//     the google.rpc.Status form, then the stream closes (the JS SDK reads
//     only "error" events as errors; the Go SDK any {"error":…} data).
//   - Routing. A path that is no route is 404 and a route used with the
//     wrong method 405 (with Allow), both as google.rpc.Status bodies and
//     answered before authentication, as unknown paths always were; GET /
//     is 405 (Allow: POST), the JSON-RPC endpoint.
//   - Tenants. The /{tenant} prefix is accepted and ignored, like a
//     tenant field in JSON-RPC params (no interface declares a tenant).
//
// # Timeouts and shutdown
//
// The http.Server has no connection-wide read or write timeout (they would
// cut long SSE streams); per-request deadlines are set with
// http.ResponseController instead: Limits.ReadTimeout for the body, from
// the start of every request that has one, and at most 2 s more for the
// part of a body the handler did not need before the answer goes out
// (net/http drains it first), lifted once the body is in (body.go);
// Limits.WriteTimeout for a response, set as it starts (trackingWriter)
// and lifted by net/http once it is finished — so it also bounds what
// net/http writes after the handler returns, such as a small answer it
// buffered whole — or for one SSE write (one event, or the events queued
// together; a stream's held end, see above). Start caps the open
// connections at Limits.MaxConnections (conns.go): a new one takes the
// place of a keep-alive connection idle for 5 s, or is answered 503 and
// closed; the streams open at once are capped at Limits.MaxStreams.
// Local callers are exempt from the rate limit unless
// Options.RateLimitLocal says otherwise. Shutdown stops
// accepting requests, lets open streams run until its context is done,
// then ends the remaining streams with an error event telling the client
// to resubscribe.
package server
