// Package cascade carries a cancel down a delegation tree.
//
// When the agent's turn delegates work (a2a_call, a2a_orchestrate, a2a_route)
// while it answers an inbound task, every remote task it starts is an edge
// of a tree: the tools record it (Tracker.Record) as a store.Delegation of
// that inbound task, the parent. When the parent ends — canceled by its
// caller, by a cascade from further up, by the host's own cancel of the
// turn, or (with Options.OnFailure, the default) failed or rejected — the
// Tracker cancels each remote task with CancelTask, carrying the tree's
// delegation chain id (security.MetaChainID) in the request's metadata. A
// peer that is one of these plugins cancels its task — only if it belongs
// to that chain — and does the same with the tasks its own turns
// delegated, and so on down; any other A2A agent that honours CancelTask
// stops its part. A parent that completes leaves its delegations alone.
//
// # Durability
//
// Delegations and the cancels due live in the store (the delegations
// table), like the push outbox: a cancel that cannot reach its peer is
// tried again with exponential backoff (Options.BaseBackoff doubling up to
// Options.MaxBackoff, MaxAttempts in all), survives a restart of the
// plugin (a cancel in flight is held by a lease, ClaimCancels: a Tracker
// that stops gives it back, and after a crash it is due again once the
// lease lapses), and is recorded as failed when the peer refuses it or
// every attempt failed; the loop that claims and sends them is a
// jobs.Runner, the push dispatcher's too. How it went is written into the parent
// task's metadata (security.MetaCancelCascade: counts, and every remote
// task not canceled yet or at all, with the reason) and the inspector
// lists each delegation with its state.
//
// An end the Tracker did not see — the process stopped between the
// parent's last save and the Tracker's — is found again at start-up: Load
// reads the parents with open delegations and Run checks each of them.
// Run does so again every quarter of an hour, for the ends another replica
// sharing the store saved (a task canceled there while it waited for
// input, or failed there after the replica running it died).
//
// # Hosts that cannot cancel
//
// A plugin whose host cannot stop a running turn (contract 1.3,
// cancel_turn_unsupported) refuses CancelTask of a running task
// (TASK_NOT_CANCELABLE) and changes nothing; its task runs on, and so do
// the tasks it delegated — they are canceled only if that task later
// fails or is rejected. The plugin above records the refusal as a failed
// cancel (it is permanent: the peer said it cannot). A queued or waiting
// task of such a host is canceled, and its delegations with it.
package cascade
