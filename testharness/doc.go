// Package testharness is a simulated agent host for tests and for plugin
// authors.
//
// It has four parts that can be used on their own or together:
//
//   - Agent: a plugin.HostHandler that plays turns asynchronously, one FIFO
//     queue per conversation, conversations in parallel. What a turn does is
//     a Behavior: a Scenario (scripted rules, from YAML/JSON or built in Go),
//     a CommandBehavior (a shell command per turn) or any Go type.
//   - Scenario: ordered rules that match inbound messages and play actions
//     (reply, progress, artifact, ask, fail, wait, call_tool, …) on the
//     platform the agent is attached to.
//   - Recorder: every call in both directions, timestamped, with waiters for
//     assertions.
//   - Host: builds plugin binaries, launches them from a plugins directory
//     through host-sdk exactly like a real host, with an Agent as the host
//     callback handler.
//
// The package never requires *testing.T: everything that logs takes a Logger,
// which testing.TB satisfies, so the reference host (cmd/agenthost) uses the
// same code outside tests.
package testharness
