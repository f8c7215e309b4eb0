// Package inspector is the operator's web view of the A2A plugin, served by
// the plugin's own HTTP server under /inspector/ when the inspector setting
// is on: the live Agent Card, the inbound tasks as they change, a task's
// full history and artifacts, the configured outbound peers with their
// cards and reachability, recent outbound calls and conversations, and the
// key metrics as small charts — plus a form to talk to the agent (or to a
// peer) and watch the stream event by event.
//
// # Pages and data
//
// Pages are html/template server-rendered HTML; one stylesheet and one
// small script (no build step, no dependencies) are embedded with
// embed.FS. The pages read the store directly (a revealed task is durable
// before anyone is told about it, so the store is current) and the card
// through the server's own handler, exactly as a peer gets it.
//
//	GET  /inspector/                        overview: card, charts
//	GET  /inspector/tasks?state=&peer=&context=   task list (&fragment=rows: the rows only)
//	GET  /inspector/tasks/{id}              one task (?fragment=body: the body only)
//	GET  /inspector/tasks/{id}/parts/{where} the bytes of an inline file part
//	GET  /inspector/send?to=&task=&context= the send form and stream view
//	GET  /inspector/peers                   peers, outbound calls, conversations
//	GET  /inspector/conversations/{id}      one outbound conversation
//	GET  /inspector/static/{name}           the embedded CSS, script and icon
//	GET  /inspector/api/events              live feed (server-sent events)
//	GET  /inspector/api/metrics             metrics samples and per-peer figures (JSON)
//	POST /inspector/api/peers/{name}/send   a2a_call to a configured peer (server-sent events)
//
// Live data: the task manager tells the inspector about every task change
// once it is durable (tasks.Manager.Watch); the feed passes it to open pages
// ("task" events; "resync" when a page fell behind), which then fetch the
// server-rendered fragment again, so rendering lives in one place. The
// metrics are sampled from the shared Prometheus registry when a page asks,
// at most once a second.
//
// Actions use the agent's real endpoints: the script sends, cancels and
// answers through the JSON-RPC endpoint (SendStreamingMessage, read as SSE
// with fetch; CancelTask), like any client; a message to a peer is an
// a2a_call through the plugin's tool path.
//
// # Security
//
// The server mounts Handler behind its Local-only protection (server.
// ExtraRoute without Allow). On top of it the inspector refuses Host
// headers that are not IP addresses, localhost names or the public URL's
// host (DNS rebinding), sends a strict Content-Security-Policy (no inline
// code, no other origin, no framing), X-Frame-Options DENY and no-store,
// requires CSRFHeader and a same-origin request for the state-changing
// route, and serves peers' file bytes sandboxed (images inline, everything
// else as a download).
package inspector
