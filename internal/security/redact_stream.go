package security

import "strings"

// DefaultStreamHold is how much text a [StreamRedactor] holds back at
// most (NewStreamRedactor with 0): enough for a 8192-bit RSA private key
// in PEM, far more than any token.
const DefaultStreamHold = 16 << 10

// streamKeep is how much of the beginning of a secret a StreamRedactor
// keeps, after it had to give out part of it, to recognise the rest.
const streamKeep = 256

// wordKeep bounds the last word of what was given out that a
// StreamRedactor keeps to scan with what follows (a key name before its
// "=", an e-mail address's local part before its "@").
const wordKeep = 128

// StreamRedactor redacts a text that arrives in pieces — a streamed
// artifact — the way [Redact] redacts it whole: a secret cut by a chunk
// boundary is still found. Write gives out what can no longer turn into
// (or be part of) a credential, redacted, and holds back only what may:
// the start of a provider token, a JWT, a "Bearer", a PEM header, a word
// holding "://" or "@", a key whose value has not begun or not ended, a
// PEM block before its END line. Prose goes out as it comes, so chunk
// boundaries stay where the host put them. The last word given out is
// kept (never given out again) and scanned with what follows, so a key
// name cut from its "=value" still has its value redacted, and an e-mail
// address cut before its "@" has its domain redacted — its local part,
// already out, is the one thing a cut can let through. Flush gives out
// what is held, at the end of the stream.
//
// Nothing is lost, reordered or given out twice: the pieces Write and
// Flush return, joined, are the whole text redacted (but for that local
// part). Memory is bounded: past maxHold bytes held, the text is given
// out anyway, redacted as far as it goes, and the beginning of the
// unfinished secret is kept so that its rest is still redacted when it
// comes. Not safe for concurrent use.
type StreamRedactor struct {
	max  int
	held string // received, not given out yet
	// keep is scanned with what follows, never given out: the last word
	// given out, or the beginning of a secret that was given out
	// unfinished (a forced release).
	keep string
}

// NewStreamRedactor returns a StreamRedactor holding back at most maxHold
// bytes (0 or less: [DefaultStreamHold]).
func NewStreamRedactor(maxHold int) *StreamRedactor {
	if maxHold <= 0 {
		maxHold = DefaultStreamHold
	}
	return &StreamRedactor{max: maxHold}
}

// Held is the number of bytes held back.
func (r *StreamRedactor) Held() int { return len(r.held) }

// Write adds a piece of the text and returns what can be given out now,
// redacted, with the number of redactions in it.
func (r *StreamRedactor) Write(chunk string) (string, int) {
	return r.release(chunk, false)
}

// Flush ends the text: it returns everything still held, redacted.
func (r *StreamRedactor) Flush() (string, int) {
	return r.release("", true)
}

func (r *StreamRedactor) release(chunk string, final bool) (string, int) {
	if r.keep == "" && r.held == "" && chunk == "" {
		return "", 0
	}
	w := r.keep + r.held + chunk
	off := len(r.keep)
	st := streamScan{open: len(w)}
	spans, kinds := scanSecrets(w, &st)
	open := st.open
	if !final {
		open = min(open, holdFrom(w))
	}
	cut := max(open, off)
	if final {
		cut = len(w)
	}
	// A secret that is complete but that the cut would separate from its
	// key (or cut through) is given out whole.
	for moved := true; moved; {
		moved = false
		for i, sp := range spans {
			if st.froms[i] < cut && sp.end > cut && !st.unfinished[i] {
				cut, moved = sp.end, true
			}
		}
	}
	forced := !final && len(w)-cut > r.max
	if forced {
		cut = len(w)
	}
	out, n := redactRange(w, off, cut, spans, kinds)
	switch {
	case final:
		r.keep, r.held = "", ""
	case forced && open < len(w):
		// Keep the unfinished secret's beginning (or what is kept of it
		// already) so that its continuation is recognised and redacted.
		if open >= off {
			r.keep = w[open:min(len(w), open+streamKeep)]
		}
		r.held = ""
	case open < off && cut == off:
		// Something kept is still unfinished (a key whose value has not
		// come): hold all that came after it.
		r.held = w[off:]
	default:
		r.keep, r.held = lastWord(w[:cut]), w[cut:]
	}
	// Strings are sliced from w: copy what is kept so that w (possibly a
	// large chunk) is not pinned by a few held bytes.
	r.keep, r.held = strings.Clone(r.keep), strings.Clone(r.held)
	return out, n
}

// redactRange returns s[from:to] with the parts of spans inside it
// replaced (overlapping spans merged, as Redact does), and how many
// replacements it made.
func redactRange(s string, from, to int, spans []span, kinds []string) (string, int) {
	var clipped []span
	var ckinds []string
	for i, sp := range spans {
		a, b := max(sp.start, from), min(sp.end, to)
		if a < b {
			clipped = append(clipped, span{a - from, b - from})
			ckinds = append(ckinds, kinds[i])
		}
	}
	if len(clipped) == 0 {
		return s[from:to], 0
	}
	return replaceSpans(s[from:to], clipped, func(i int) string { return RedactedMark + ":" + ckinds[i] + "]" })
}

// isSpace is the whitespace that ends a word.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// lastWord is the end of s a following piece may continue: its last word
// and the blanks after it (at most wordKeep bytes; "" after a line break).
func lastWord(s string) string {
	i := len(s)
	for i > 0 && len(s)-i < wordKeep && (s[i-1] == ' ' || s[i-1] == '\t') {
		i--
	}
	for i > 0 && len(s)-i < wordKeep && !isSpace(s[i-1]) {
		i--
	}
	return s[i:]
}

// holdFrom is where the text s must be held back from, for what the
// scanner cannot see yet: a run of token characters that is (or may grow
// into) a provider token, a JWT, a "Bearer" or a PEM header; a last word
// holding "://" or "@" (credentials in a URL, an e-mail address still
// growing); a "Bearer" or a secret key followed only by blanks (its value
// is still to come); and a PEM header that is not complete.
func holdFrom(s string) int {
	p := len(s)
	w := len(s)
	for w > 0 && !isSpace(s[w-1]) {
		w--
	}
	if word := s[w:]; strings.Contains(word, "://") || strings.IndexByte(word, '@') >= 0 {
		p = w
	}
	if r := tokenRunStart(s); r < len(s) && mayStartSecret(s[r:]) {
		p = min(p, r)
	}
	j := len(s)
	for j > 0 && len(s)-j <= 8 && (s[j-1] == ' ' || s[j-1] == '\t') {
		j--
	}
	if j < len(s) && j > 0 {
		w := j
		for w > 0 && !isSpace(s[w-1]) {
			w--
		}
		word := strings.Trim(s[w:j], `:="'`)
		if strings.EqualFold(word, "bearer") || isSecretKey(word) {
			p = min(p, w)
		}
	}
	if k := strings.LastIndex(s, "-----BEGIN"); k >= 0 && k < p && !strings.Contains(window(s[k+len("-----BEGIN"):], 0, 80), "-----") {
		p = k
	}
	return p
}

// tokenRunStart is where the run of token characters ending s begins.
func tokenRunStart(s string) int {
	i := len(s)
	for i > 0 && csJWT[s[i-1]] {
		i--
	}
	return i
}

// secretStarts are the literals a secret of the scanner begins with,
// besides the provider tokens' prefixes.
var secretStarts = []string{"eyJ", "-----BEGIN"}

// mayStartSecret reports whether run, a run of token characters at a word
// boundary, is a secret's beginning or may grow into one: it begins with
// a token prefix, "eyJ" or "-----BEGIN", or is itself the beginning of
// one of them or of "Bearer".
func mayStartSecret(run string) bool {
	for i := range tokenRules {
		if p := tokenRules[i].prefix; strings.HasPrefix(run, p) || strings.HasPrefix(p, run) {
			return true
		}
	}
	for _, p := range secretStarts {
		if strings.HasPrefix(run, p) || strings.HasPrefix(p, run) {
			return true
		}
	}
	return len(run) <= len("bearer") && strings.EqualFold(run, "bearer"[:len(run)])
}
