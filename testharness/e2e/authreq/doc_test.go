// Package authreq_test tests, through the real binary, what the outbound
// tools do when a peer answers TASK_STATE_AUTH_REQUIRED: with the peer's
// token coming from token_command (or token_file) the plugin reads the
// token again, resumes the same task — same context, same delegation chain
// id in the message metadata, the new token — and returns the final
// answer; without one, the result says what the peer needs and how to
// resume, and resuming by hand works. Either way, once the delegation is
// over the calling host is told through RecordDelegation.
//
// Two harness hosts run the plugin: mail (testdata/mail.yaml) asks for
// credentials on the first turn of a task and answers on the next; it
// accepts two tokens (A2A_PEER_TOKENS), so its recorder shows which one
// each message came with. The caller lists mail in a2a_agents.
package authreq_test
