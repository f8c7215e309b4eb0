package security

import (
	"encoding/json"
	"strings"
)

// RedactedMark opens every replacement Redact makes: "[REDACTED:kind]".
const RedactedMark = "[REDACTED"

// Redact replaces credential-shaped strings and e-mail addresses in s with
// "[REDACTED:kind]" and reports how many it replaced. It finds
//
//   - provider keys and tokens by their prefixes: OpenAI (sk-, sk-proj-…),
//     Anthropic (sk-ant-), GitHub (ghp_, gho_, ghu_, ghs_, ghr_,
//     github_pat_), Slack (xox[abeprs]-, xapp-, hooks.slack.com webhooks), AWS
//     access key ids (AKIA…, ASIA…), Google (AIza…, ya29.…), Stripe
//     (sk_live_, rk_live_, and _test_), GitLab (glpat-), Hugging Face (hf_),
//     npm (npm_);
//   - JWTs (eyJ….….…) and whole PEM private-key blocks;
//   - "Bearer <token>", and the value of any key=value or key: value whose key
//     names a secret (…password, …passwd, …pwd, …secret, …token,
//     …api_key, …access_key, …private_key, …credentials, authorization,
//     cookie…; AWS's aws_secret_access_key is one of them), in prose, query
//     strings, headers, YAML and JSON alike;
//   - user info in URLs (https://user:pass@host) and e-mail addresses.
//
// Prefix matches need a word boundary before them, so ordinary words such as
// "skill" or "ask-me", hex digests and UUIDs stay. Text with none of the
// trigger bytes costs one scan and no allocation. Redact is idempotent.
func Redact(s string) (string, int) {
	spans, kinds := findSecrets(s)
	if len(spans) == 0 {
		return s, 0
	}
	return replaceSpans(s, spans, func(i int) string { return RedactedMark + ":" + kinds[i] + "]" })
}

// RedactValue returns a copy of v, a value decoded from JSON (maps, slices,
// strings, numbers, booleans, nil), with every string passed through
// [Redact]. A string or number stored under a key that names a secret
// ("password", "apiKey", "client_secret", "token"…) is replaced whole, since
// it carries no recognisable shape of its own. Pagination keys such as
// "nextPageToken" are not secrets. Values of other types are returned as they
// are. Do not apply it to protocol envelopes whose secret fields must reach
// their owner, such as a push-notification config read back by its creator.
func RedactValue(v any) any {
	out, _ := redactValue(v, false)
	return out
}

func redactValue(v any, secretKey bool) (any, int) {
	switch x := v.(type) {
	case string:
		if secretKey && x != "" && !strings.HasPrefix(x, RedactedMark) {
			return RedactedMark + ":secret]", 1
		}
		return Redact(x)
	case float64, json.Number:
		if secretKey {
			return RedactedMark + ":secret]", 1
		}
		return v, 0
	case map[string]any:
		out := make(map[string]any, len(x))
		total := 0
		for k, e := range x {
			r, n := redactValue(e, isSecretKey(k))
			out[k] = r
			total += n
		}
		return out, total
	case []any:
		out := make([]any, len(x))
		total := 0
		for i, e := range x {
			r, n := redactValue(e, secretKey)
			out[i] = r
			total += n
		}
		return out, total
	case map[string]string:
		out := make(map[string]string, len(x))
		total := 0
		for k, e := range x {
			r, n := redactValue(e, isSecretKey(k))
			out[k] = r.(string)
			total += n
		}
		return out, total
	case []string:
		out := make([]string, len(x))
		total := 0
		for i, e := range x {
			r, n := redactValue(e, secretKey)
			out[i] = r.(string)
			total += n
		}
		return out, total
	}
	return v, 0
}

// ---- the scanner ------------------------------------------------------------

// tokenRule is a provider token: a literal prefix and a body of at least min
// (and, if max > 0, at most max) bytes from charset.
type tokenRule struct {
	prefix   string
	kind     string
	charset  *[256]bool
	min, max int
}

var (
	csAlnum        = charset("A-Za-z0-9")
	csAlnumUnder   = charset("A-Za-z0-9_")
	csAlnumDash    = charset("A-Za-z0-9-")
	csB64URL       = charset("A-Za-z0-9_-")
	csUpperDigit   = charset("A-Z0-9")
	csWebhookPath  = charset("A-Za-z0-9/_-")
	csJWT          = charset("A-Za-z0-9_.-")
	csBearer       = charset("A-Za-z0-9._~+/=-")
	csKey          = charset("A-Za-z0-9_.-")
	csEmailLocal   = charset("A-Za-z0-9._%+-")
	csEmailDomain  = charset("A-Za-z0-9.-")
	csValueStopper = charset(" \t\r\n,;&\"'<>)]}")
)

// charset builds a byte set from ranges such as "A-Za-z0-9_-" (a '-' that
// ends the spec is literal).
func charset(spec string) *[256]bool {
	var t [256]bool
	for i := 0; i < len(spec); i++ {
		if i+2 < len(spec) && spec[i+1] == '-' {
			for c := spec[i]; c <= spec[i+2]; c++ {
				t[c] = true
			}
			i += 2
			continue
		}
		t[spec[i]] = true
	}
	return &t
}

var tokenRules = []tokenRule{
	{"sk-ant-", "anthropic_key", csB64URL, 20, 0},
	{"sk-proj-", "openai_key", csB64URL, 20, 0},
	{"sk-svcacct-", "openai_key", csB64URL, 20, 0},
	{"sk-admin-", "openai_key", csB64URL, 20, 0},
	{"sk-None-", "openai_key", csB64URL, 20, 0},
	{"sk-", "openai_key", csAlnum, 20, 0},
	{"ghp_", "github_token", csAlnum, 30, 0},
	{"gho_", "github_token", csAlnum, 30, 0},
	{"ghu_", "github_token", csAlnum, 30, 0},
	{"ghs_", "github_token", csAlnum, 30, 0},
	{"ghr_", "github_token", csAlnum, 30, 0},
	{"github_pat_", "github_token", csAlnumUnder, 22, 0},
	{"xoxa-", "slack_token", csAlnumDash, 10, 0},
	{"xoxb-", "slack_token", csAlnumDash, 10, 0},
	{"xoxe-", "slack_token", csAlnumDash, 10, 0},
	{"xoxp-", "slack_token", csAlnumDash, 10, 0},
	{"xoxr-", "slack_token", csAlnumDash, 10, 0},
	{"xoxs-", "slack_token", csAlnumDash, 10, 0},
	{"xapp-", "slack_token", csAlnumDash, 10, 0},
	{"https://hooks.slack.com/services/", "slack_webhook", csWebhookPath, 10, 0},
	{"AKIA", "aws_access_key_id", csUpperDigit, 16, 16},
	{"ASIA", "aws_access_key_id", csUpperDigit, 16, 16},
	{"AIza", "google_api_key", csB64URL, 35, 0},
	{"ya29.", "google_oauth_token", csB64URL, 20, 0},
	{"sk_live_", "stripe_key", csAlnum, 10, 0},
	{"sk_test_", "stripe_key", csAlnum, 10, 0},
	{"rk_live_", "stripe_key", csAlnum, 10, 0},
	{"rk_test_", "stripe_key", csAlnum, 10, 0},
	{"glpat-", "gitlab_token", csB64URL, 20, 0},
	{"hf_", "huggingface_token", csAlnum, 30, 0},
	{"npm_", "npm_token", csAlnum, 36, 0},
}

// rulesByByte indexes tokenRules by the first byte of their prefix.
var rulesByByte = func() (t [256][]int) {
	for i, r := range tokenRules {
		t[r.prefix[0]] = append(t[r.prefix[0]], i)
	}
	return t
}()

// redactStart marks bytes that may start a secret at a word boundary.
var redactStart = func() (t [256]bool) {
	for c := range rulesByByte {
		t[c] = rulesByByte[c] != nil
	}
	t['e'], t['-'], t['b'], t['B'] = true, true, true, true // JWT, PEM, Bearer
	return t
}()

// redactInteresting marks every byte at which findSecrets has work to do.
var redactInteresting = func() (t [256]bool) {
	t = redactStart
	t['='], t[':'], t['@'] = true, true, true
	return t
}()

// secretKeySuffixes end the names of keys whose values are secrets.
var secretKeySuffixes = []string{
	"password", "passwd", "pwd", "passphrase", "secret", "token",
	"apikey", "api_key", "api-key", "accesskey", "access_key", "access-key",
	"secretkey", "secret_key", "secret-key", "privatekey", "private_key", "private-key",
	"authkey", "auth_key", "auth-key", "credential", "credentials",
	"sessionid", "session_id", "session-id", "cookie", "authorization",
}

// notSecretKeys end in a secret suffix but name something public.
var notSecretKeys = []string{"pagetoken", "page_token", "page-token", "pwd", "oldpwd"}

// isSecretKey reports whether a key (any case, any of camelCase, snake_case
// or kebab-case) names a secret.
func isSecretKey(key string) bool {
	if len(key) < 3 || strings.IndexByte("deEDtTnNyYlLsSkK", key[len(key)-1]) < 0 {
		return false // every suffix is at least 3 long and ends in one of these
	}
	if len(key) > 64 {
		key = key[len(key)-64:]
	}
	var buf [64]byte
	k := buf[:len(key)]
	for i := 0; i < len(key); i++ {
		k[i] = lowerASCII(key[i])
	}
	for _, n := range notSecretKeys {
		if len(k) >= len(n) && string(k[len(k)-len(n):]) == n && (n != "pwd" && n != "oldpwd" || len(k) == len(n)) {
			return false
		}
	}
	for _, suf := range secretKeySuffixes {
		if len(k) >= len(suf) && string(k[len(k)-len(suf):]) == suf {
			return true
		}
	}
	return false
}

// findSecrets returns the spans to redact and the kind of each.
func findSecrets(s string) ([]span, []string) { return scanSecrets(s, nil) }

// streamScan is what a StreamRedactor needs of a scan besides the spans.
type streamScan struct {
	// open is lowered to the start of every secret the end of the text
	// may still be cutting short — a match that runs to the end, or a key,
	// a "Bearer" or a PEM header whose value has not begun.
	open int
	// froms[i] is where the match of span i begins to depend on the text:
	// its key, its "Bearer", the scheme of its URL (else its start).
	froms []int
	// unfinished[i] says span i may still grow with what follows.
	unfinished []bool
}

// scanSecrets is findSecrets; with st not nil it also fills st, so that a
// text arriving in pieces can hold back what it cannot decide yet.
func scanSecrets(s string, st *streamScan) ([]span, []string) {
	var spans []span
	var kinds []string
	from := -1       // the context start of the next add; -1: the span's start
	growing := false // the next add may still grow
	add := func(start, end int, kind string) {
		spans = append(spans, span{start, end})
		kinds = append(kinds, kind)
		if st != nil {
			if from < 0 {
				from = start
			}
			st.froms = append(st.froms, from)
			st.unfinished = append(st.unfinished, growing || end == len(s))
		}
		from, growing = -1, false
	}
	opens := func(at int) {
		if st != nil && at < st.open {
			st.open = at
		}
	}
	userinfoAt := -1 // the '@' ending a URL's user info is not an e-mail address
	for i := 0; i < len(s); i++ {
		for i < len(s) && !redactInteresting[s[i]] {
			i++
		}
		if i == len(s) {
			break
		}
		c := s[i]
		switch c {
		case '=', ':':
			if c == ':' && strings.HasPrefix(s[i+1:], "//") {
				if a, b, ok := urlUserinfo(s, i); ok {
					from = i - 1
					add(a, b, "url_credentials")
					userinfoAt = b
				}
				continue
			}
			as := assignment(s, i)
			if as.open {
				opens(as.from)
			}
			if as.ok {
				from, growing = as.from, as.open
				add(as.a, as.b, as.kind)
				i = as.b - 1
			}
			continue
		case '@':
			if i == userinfoAt {
				continue
			}
			if a, b, ok := email(s, i); ok {
				growing = st != nil && runsToEnd(s, b, csEmailDomain) // "example.co" may be "example.co.uk"
				add(a, b, "email")
			}
			continue
		}
		// Tokens start only where a run of token characters starts, so
		// every run is scanned once however the text is crafted.
		if !redactStart[c] || (i > 0 && csJWT[s[i-1]]) {
			continue
		}
		if end, ri := tokenRuleAt(s, i); end > 0 {
			add(i, end, tokenRules[ri].kind)
			i = end - 1
			continue
		}
		switch c {
		case 'e':
			if end := jwtAt(s, i); end > 0 {
				growing = st != nil && runsToEnd(s, end, csJWT) // a full stop that may be a separator
				add(i, end, "jwt")
				i = end - 1
			}
		case '-':
			if end := pemAt(s, i); end > 0 {
				if end == len(s) {
					opens(i) // cut off: its end may follow
				}
				add(i, end, "private_key")
				i = end - 1
			}
		case 'b', 'B':
			a, b, ok, bopen := bearerAt(s, i)
			if bopen {
				opens(i)
				growing = true
			}
			if ok {
				kind := "bearer_token"
				if end := pemAt(s, a); end > b {
					// "Bearer -----BEGIN … PRIVATE KEY-----": the whole key.
					b, kind = end, "private_key"
					if end == len(s) {
						opens(i)
					}
				}
				from = i
				add(a, b, kind)
				i = b - 1
			}
		}
	}
	return spans, kinds
}

// runsToEnd reports whether s[from:] is all of charset: a match ending at
// from may still grow when more of the text comes.
func runsToEnd(s string, from int, charset *[256]bool) bool {
	for k := from; k < len(s); k++ {
		if !charset[s[k]] {
			return false
		}
	}
	return true
}

// tokenRuleAt returns the end of the provider token starting at i and the
// index of its rule, or 0 and -1.
func tokenRuleAt(s string, i int) (int, int) {
	for _, ri := range rulesByByte[s[i]] {
		r := &tokenRules[ri]
		if !strings.HasPrefix(s[i:], r.prefix) {
			continue
		}
		j := i + len(r.prefix)
		k := j
		for k < len(s) && r.charset[s[k]] {
			k++
		}
		n := k - j
		if n < r.min || (r.max > 0 && n > r.max) {
			continue
		}
		if r.max > 0 && k < len(s) && csAlnum[s[k]] {
			continue
		}
		return k, ri
	}
	return 0, -1
}

// jwtAt returns the end of a JWT (three dot-separated base64url segments,
// or five for JWE) starting at i, or 0.
func jwtAt(s string, i int) int {
	if !strings.HasPrefix(s[i:], "eyJ") {
		return 0
	}
	k := i
	for k < len(s) && csJWT[s[k]] {
		k++
	}
	for k > i && s[k-1] == '.' { // a full stop after the token
		k--
	}
	segs := strings.Split(s[i:k], ".")
	switch {
	case len(segs) == 3 && len(segs[0]) >= 10 && len(segs[1]) >= 8:
	case len(segs) == 5 && len(segs[0]) >= 10:
	default:
		return 0
	}
	return k
}

// pemAt returns the end of a PEM private-key block starting at i (the end
// of the text if the block is cut off), or 0.
func pemAt(s string, i int) int {
	const begin, end = "-----BEGIN ", "-----END "
	if !strings.HasPrefix(s[i:], begin) {
		return 0
	}
	h := strings.Index(window(s[i+len(begin):], 0, 64), "-----")
	if h < 0 {
		return 0
	}
	headerEnd := i + len(begin) + h + 5
	if !strings.Contains(s[i:headerEnd], "PRIVATE KEY") {
		return 0
	}
	e := strings.Index(s[headerEnd:], end)
	if e < 0 {
		return len(s)
	}
	tail := headerEnd + e + len(end)
	// The footer's closing dashes are on its own line, after a short
	// label: a footer that lacks them ends with its line, so a malformed
	// footer does not swallow what the next lines hold (and the whole
	// text and a stream of it end the block at the same place).
	line := window(s[tail:], 0, 64)
	if nl := strings.IndexAny(line, "\r\n"); nl >= 0 {
		line = line[:nl]
	}
	if t := strings.Index(line, "-----"); t >= 0 {
		return tail + t + 5
	}
	if tail+len(line) == len(s) {
		return len(s) // cut off: the rest of the footer may follow
	}
	return tail + len(line)
}

// bearerAt finds "Bearer <token>" at i and returns the token's span.
// open reports that the token (or the blanks before it) runs to the end
// of s, so more of it may follow.
func bearerAt(s string, i int) (start, end int, ok, open bool) {
	const word = "bearer"
	if len(s)-i < len(word)+1 || !strings.EqualFold(s[i:i+len(word)], word) {
		return 0, 0, false, false
	}
	j := i + len(word)
	if s[j] != ' ' && s[j] != '\t' {
		return 0, 0, false, false
	}
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	k := j
	for k < len(s) && csBearer[s[k]] {
		k++
	}
	open = k == len(s)
	tok := s[j:k]
	if len(tok) < 8 || strings.HasPrefix(tok, RedactedMark) {
		return 0, 0, false, open
	}
	if len(tok) < 24 && !strings.ContainsAny(tok, "0123456789-._~+/=") {
		return 0, 0, false, open // "Bearer authentication", "bearer instruments"
	}
	return j, k, true, open
}

// urlUserinfo finds the user info of a URL whose "://" starts at colon.
func urlUserinfo(s string, colon int) (int, int, bool) {
	if colon == 0 || !(s[colon-1] >= 'a' && s[colon-1] <= 'z' || s[colon-1] >= 'A' && s[colon-1] <= 'Z') {
		return 0, 0, false
	}
	start := colon + 3
	for k := start; k < len(s); k++ {
		switch s[k] {
		case '@':
			if k == start || strings.HasPrefix(s[start:], RedactedMark) {
				return 0, 0, false
			}
			return start, k, true
		case '/', '?', '#', ' ', '\t', '\r', '\n', '"', '\'', '<', '>':
			return 0, 0, false
		}
	}
	return 0, 0, false
}

// email finds an e-mail address around the '@' at at.
func email(s string, at int) (int, int, bool) {
	a := at
	for a > 0 && at-a < 64 && csEmailLocal[s[a-1]] {
		a--
	}
	for a < at && s[a] == '.' {
		a++
	}
	if a == at {
		return 0, 0, false
	}
	b := at + 1
	for b < len(s) && b-at <= 253 && csEmailDomain[s[b]] {
		b++
	}
	for b > at+1 && (s[b-1] == '.' || s[b-1] == '-') {
		b--
	}
	domain := s[at+1 : b]
	dot := strings.LastIndexByte(domain, '.')
	if dot <= 0 || !csAlnum[domain[0]] {
		return 0, 0, false
	}
	tld := domain[dot+1:]
	if len(tld) < 2 {
		return 0, 0, false
	}
	for i := 0; i < len(tld); i++ {
		if c := tld[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return 0, 0, false
		}
	}
	if first, _, _ := strings.Cut(domain, "."); isRetinaSuffix(first) {
		return 0, 0, false // icon@2x.png
	}
	return a, b, true
}

// isRetinaSuffix matches the "2x" of image names such as logo@2x.png.
func isRetinaSuffix(label string) bool {
	if len(label) < 2 || label[len(label)-1] != 'x' {
		return false
	}
	for i := 0; i < len(label)-1; i++ {
		if label[i] < '0' || label[i] > '9' {
			return false
		}
	}
	return true
}

// assign is what assignment found at a separator.
type assign struct {
	// a and b are the value's span; ok says there is one to redact.
	a, b int
	kind string
	ok   bool
	// from is where the key starts; open says the value may go on past
	// the end of the text (or has not begun by then).
	from int
	open bool
}

// assignment finds key=value or key: value at the separator sep whose key
// names a secret, and returns the value's span. A value holding a PEM
// private key (an Authorization header followed by a key on the same
// line, a private_key: -----BEGIN … setting) runs to the key's end.
func assignment(s string, sep int) assign {
	vstart := sep + 1
	if s[sep] == '=' {
		if sep > 0 && strings.IndexByte("=!<>:", s[sep-1]) >= 0 {
			return assign{} // ==, !=, <=, >=, and := seen at its ':'
		}
		if vstart < len(s) && (s[vstart] == '=' || s[vstart] == '>') {
			return assign{} // ==, =>
		}
	} else if vstart < len(s) && s[vstart] == '=' {
		vstart++ // :=
	}
	// The key: optional spaces and a closing quote, then key characters.
	k := sep
	for k > 0 && sep-k < 4 && (s[k-1] == ' ' || s[k-1] == '\t') {
		k--
	}
	if k > 0 && (s[k-1] == '"' || s[k-1] == '\'') {
		k--
	}
	ks := k
	for ks > 0 && k-ks < 128 && csKey[s[ks-1]] {
		ks--
	}
	if ks == k || !isSecretKey(s[ks:k]) {
		return assign{}
	}
	found := assign{from: ks}
	kind := "secret"
	key := strings.ToLower(s[ks:k])
	toEOL := strings.HasSuffix(key, "authorization") || strings.HasSuffix(key, "cookie")
	if toEOL {
		kind = "authorization"
	}
	// The value.
	v := vstart
	for v < len(s) && v-vstart < 8 && (s[v] == ' ' || s[v] == '\t') {
		v++
	}
	if v == len(s) {
		found.open = v-vstart < 8 // the value has not begun yet
		return found
	}
	if strings.HasPrefix(s[v:], RedactedMark) {
		return found
	}
	if q := s[v]; q == '"' || q == '\'' {
		line := window(s[v+1:], 0, 4096)
		nl := strings.IndexAny(line, "\r\n")
		if nl >= 0 {
			line = line[:nl]
		}
		if e := strings.IndexByte(line, q); e >= 0 {
			if strings.TrimSpace(line[:e]) == "" || strings.HasPrefix(strings.TrimLeft(line, " \t\"'"), RedactedMark) {
				return found // empty, or redacted already
			}
			found.a, found.b, found.kind, found.ok = v+1, v+1+e, kind, true
			return withPrivateKey(s, found)
		}
		if end, c, ok := quotedPrivateKey(s, v, line); ok {
			// A quoted value holding a PEM block spans the block's lines.
			found.a, found.b, found.kind, found.ok = v+1, c, kind, true
			if end == v+1 && kind == "secret" {
				found.kind = "private_key"
			}
			return found
		}
		if nl < 0 && v+1+len(line) == len(s) {
			found.open = true // the closing quote may still come
		}
		v++ // unterminated quote: fall through to an unquoted value
		if v == len(s) || strings.HasPrefix(s[v:], RedactedMark) {
			return found
		}
	}
	e := v
	if toEOL {
		for e < len(s) && s[e] != '\r' && s[e] != '\n' && s[e] != '"' && s[e] != '\'' {
			e++
		}
		found.open = found.open || e == len(s)
		for e > v && (s[e-1] == ' ' || s[e-1] == '\t') {
			e--
		}
	} else {
		for e < len(s) && !csValueStopper[s[e]] {
			e++
		}
		found.open = found.open || e == len(s)
		if e > v+1 && s[e-1] == '.' { // a full stop ending the sentence
			e--
		}
	}
	if e == v {
		return found
	}
	found.a, found.b, found.kind, found.ok = v, e, kind, true
	return withPrivateKey(s, found)
}

// quotedPrivateKey finds a quoted value (its quote at v, line the rest of
// its first line) that holds a PEM private-key block and closes on the
// block's END line: where the block starts and where the closing quote is.
func quotedPrivateKey(s string, v int, line string) (start, closing int, ok bool) {
	p := strings.Index(line, "-----BEGIN ")
	if p < 0 {
		return 0, 0, false
	}
	start = v + 1 + p
	end := pemAt(s, start)
	if end == 0 || end == len(s) {
		return 0, 0, false
	}
	rest := window(s[end:], 0, 4096)
	if nl := strings.IndexAny(rest, "\r\n"); nl >= 0 {
		rest = rest[:nl]
	}
	c := strings.IndexByte(rest, s[v])
	if c < 0 {
		return 0, 0, false
	}
	return start, end + c, true
}

// withPrivateKey stretches an assignment's value over a PEM private-key
// block that starts inside it, which would otherwise leave the key's body
// (on the next lines) in clear.
func withPrivateKey(s string, as assign) assign {
	const begin = "-----BEGIN "
	p := strings.Index(s[as.a:min(len(s), as.b+len(begin))], begin)
	if p < 0 || as.a+p >= as.b {
		return as
	}
	end := pemAt(s, as.a+p)
	if end == 0 && len(s)-(as.a+p+len(begin)) < 64+5 {
		// Its header may still be completed by what follows the text.
		as.open = true
	}
	if end <= as.b {
		return as
	}
	if p == 0 && as.kind == "secret" {
		as.kind = "private_key"
	}
	as.b = end
	as.open = as.open || end == len(s)
	return as
}
