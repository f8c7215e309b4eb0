// Package cardsign signs agent cards and verifies their signatures
// (A2A v1.0 §8.4, AgentCardSignature): a detached JWS (RFC 7515) whose
// payload is the JCS (RFC 8785) canonical form of the card without its
// `signatures`, with Ed25519 (alg EdDSA) or ECDSA P-256 (alg ES256) keys.
//
// # What is signed
//
// The specification says: the card with `signatures` removed and
// default-valued fields removed "per proto presence rules", canonicalised
// with JCS. Implementations read that sentence in three ways (the question
// is open upstream, a2aproject/A2A#2122), and each reading is a payload
// form here:
//
//   - FormV1 — the v1.0 projection: the card as a proto-based client
//     parses it (only AgentCard fields, snake_case names read as their JSON
//     names, unknown members such as the 0.3 keys of a dual card dropped),
//     with rule 1 applied: a REQUIRED field stays even at its default, a
//     proto3 `optional` field or a message field stays when present, any
//     other field at its default ("", false, empty list or map) goes.
//     This is the primary form: every Sign signs it.
//   - FormPruned — FormV1 with empty strings, lists and objects removed
//     recursively, as the a2a-python and a2a-js SDK verifiers compute it.
//   - FormServed — rule 1 on the document as served, unknown members kept
//     verbatim; this is what "served JSON minus signatures" verifiers
//     (and the conformance kit's checker) compute.
//
// This plugin serves its public card at /.well-known/agent-card.json as a
// strict v1.0 document (no 0.3 keys; 0.3 clients get a separate 0.3 card
// at /.well-known/agent.json, see internal/server). For such a document
// FormV1 and FormServed are the same bytes, and FormPruned differs only
// when the card has empty values — as a card requiring a token does: the
// scope list of its bearer requirement is the empty StringList {}. Which
// bytes a third-party verifier computes still depends on its reading, so
// (*Signer).SignDocument signs every distinct form of the served document
// with the same key (readers accept a card when at least one signature
// verifies): one signature for a card without empty values, two for one
// with. A document with members outside the v1.0 AgentCard (a 0.3 card,
// or a card some other server merged 0.3 keys into) gets a FormServed
// signature that covers them; a form that is no usable card (the v1.0
// projection of a 0.3 card has no endpoint) is not signed, and a
// verifier skips it.
//
// VerifyDocument accepts a signature that verifies over any of the three
// forms, and returns the card parsed from exactly the bytes that verified,
// never from the rest of the document: what a client uses is what the key
// holder signed. A 0.3 key added to a card signed only in FormV1 thus
// cannot change what the client sees.
//
// Keys are identified by `kid`, taken from the protected header only (the
// unprotected header is not integrity-protected). A key read from a PEM
// file without an explicit kid is named by its RFC 7638 thumbprint, which
// is also the default kid of a Signer, so a PEM public key matches its
// signer with no kid configured on either side. `jku` is emitted when
// configured but never followed: a key fetched from a URL the card names
// would let whoever controls the card choose the key.
package cardsign
