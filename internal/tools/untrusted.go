package tools

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/a2a-plugin/a2a-plugin/internal/client"
	"github.com/a2a-plugin/a2a-plugin/internal/config"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

// Text a peer wrote reaches the model only through this file. For a peer
// of the public tier (the default) and for an agent called by URL, every
// text that came from the peer — answers, questions, status texts, the
// texts of its errors, card descriptions, conversation entries — is framed
// as untrusted input (security.FrameUntrusted, which also defangs it with
// security.FilterInbound). For a trusted peer (trust: trusted) the text is
// defanged but not framed: the operator vouches for the peer, and the
// frame would only cost the model tokens. Ids a peer chose are shown
// quoted, escaped and bounded (peerID). Progress lines and one-line
// summaries are defanged and kept to one line, never framed (peerLine).

// maxPeerIDBytes bounds an id a peer chose (task, context) as a tool
// result shows it.
const maxPeerIDBytes = 128

// peerVoice is how one peer's texts reach the model.
type peerVoice struct {
	name    string
	trusted bool
}

// voiceOf is the voice of a call's target: trusted only for a configured
// peer with trust: trusted.
func voiceOf(target *resolved) peerVoice {
	return peerVoice{name: target.name, trusted: target.conf != nil && target.conf.Trust == config.TrustTrusted}
}

// text prepares a text the peer wrote for a tool result: framed for an
// untrusted peer, defanged for a trusted one. The frame ends on its own
// line; text is expected to be clipped already.
func (v peerVoice) text(s string) string {
	if v.trusted {
		clean, _ := security.FilterInbound(s)
		return clean
	}
	return security.FrameUntrusted(v.name, s)
}

// textOr is text for a clipped peer text, or none (the plugin's own
// words, not framed) when the peer sent no text.
func (v peerVoice) textOr(s, none string) string {
	if strings.TrimSpace(s) == "" {
		return none
	}
	return v.text(clip(s))
}

// peerLine prepares a peer's text for a one-line place (a progress
// message, a summary): defanged, on one line, at most n bytes. It is not
// framed, whatever the peer's trust.
func peerLine(s string, n int) string {
	clean, _ := security.FilterInbound(s)
	return oneLine(clean, n)
}

// errText renders the error of a call to the peer. Only what the
// peer wrote — the cause of a *client.Error that carries its words (its
// JSON-RPC error message, a snippet of its answer, its WWW-Authenticate
// header, its card's fields: client.Error.PeerWrote) — is the peer's text,
// framed or defanged by its trust. The plugin's own words stay outside the
// frame: what failed with which peer and what to do, and whole
// diagnostics of its own (connection refused, a timeout, the SSRF guard,
// a caller that went away, a token command that failed). They are
// defanged all the same, since the URL they name may come from the
// peer's card.
func (v peerVoice) errText(err error) string {
	if err == nil {
		return ""
	}
	var ae *authSchemeError
	if errors.As(err, &ae) {
		// The peer's refusal in its frame, then our own hint.
		return v.errText(ae.err) + "\n" + ae.hint
	}
	var ce *client.Error
	if !errors.As(err, &ce) {
		return err.Error()
	}
	head, cause, hint := ce.Parts()
	// Words wrapped around the client's error are the plugin's too.
	if outer, ok := strings.CutSuffix(err.Error(), ce.Error()); ok {
		head = outer + head
	}
	if cause == "" || !ce.PeerWrote() {
		own := head
		if cause != "" {
			own += ": " + cause
		}
		if hint != "" {
			own += " — " + hint
		}
		clean, _ := security.FilterInbound(own)
		return clean
	}
	own, _ := security.FilterInbound(head)
	out := own + "; the peer said:\n" + strings.TrimRight(v.text(clip(cause)), "\n")
	if hint != "" {
		h, _ := security.FilterInbound(hint)
		out += "\nWhat to do: " + h
	}
	return out
}

// errLine is errText for a one-line place (defanged, not framed).
func errLine(err error, n int) string {
	var ae *authSchemeError
	if errors.As(err, &ae) {
		return errLine(ae.err, n)
	}
	var ce *client.Error
	if !errors.As(err, &ce) {
		return oneLine(err.Error(), n)
	}
	return peerLine(err.Error(), n)
}

// peerID shows an id a peer chose: quoted as Go quotes strings (control,
// format and other non-printable characters escaped, so an id can never
// break a line or hide text), cut at maxPeerIDBytes with a note — such an
// id is not usable to follow up.
func peerID(id string) string {
	if len(id) <= maxPeerIDBytes {
		return strconv.Quote(id)
	}
	cut := maxPeerIDBytes
	for cut > 0 && !utf8RuneStart(id[cut]) {
		cut--
	}
	return strconv.Quote(id[:cut]) + fmt.Sprintf(" (cut: the peer's id is %d bytes long, more than %d)", len(id), maxPeerIDBytes)
}

// jsonID bounds an id a peer chose for the JSON summary line. An id with
// characters strconv.Quote escapes (control, format, other non-printable
// ones) is given in that escaped form, as peerID shows it, so the JSON line
// cannot carry them either.
func jsonID(id string) string {
	if q := strconv.Quote(id); q[1:len(q)-1] != strings.ReplaceAll(strings.ReplaceAll(id, `\`, `\\`), `"`, `\"`) {
		id = q[1 : len(q)-1]
	}
	if len(id) <= maxPeerIDBytes {
		return id
	}
	cut := maxPeerIDBytes
	for cut > 0 && !utf8RuneStart(id[cut]) {
		cut--
	}
	return id[:cut] + "…"
}

// block frames a block of several peer texts at once (a card's
// descriptions), trimming the trailing line break.
func (v peerVoice) block(s string) string {
	return v.text(strings.TrimRight(s, "\n"))
}
