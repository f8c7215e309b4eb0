package security

import (
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// pemBody is the part of fakePEM that must never survive.
var pemBody = []string{"MIIEowIBAAKCAQEA7bq98Z0x", "q2lK7f0aB3c="}

// TestRedactPrivateKeyAfterAnAuthorizationHeader: a PEM private key that
// follows an Authorization header (or a secret key) on the same line is
// redacted whole, its body on the next lines too.
func TestRedactPrivateKeyAfterAnAuthorizationHeader(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"authorization then key", "Authorization: Bearer abc123def456 " + fakePEM + "\nafter",
			"Authorization: [REDACTED:authorization]\nafter"},
		{"authorization then key cut off", "Authorization: Basic dXNlcjpwYXNz -----BEGIN PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq98Z0x",
			"Authorization: [REDACTED:authorization]"},
		{"private_key setting", "private_key: " + fakePEM + "\nnext: 1", "private_key: [REDACTED:private_key]\nnext: 1"},
		{"quoted key opening a multi-line value", "private_key = \"" + fakePEM + "\"\n", "private_key = \"[REDACTED:private_key]\"\n"},
		{"json escaped key", `{"private_key": "-----BEGIN PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq98Z0x\n-----END PRIVATE KEY-----\n"}`,
			`{"private_key": "[REDACTED:secret]"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n := Redact(tt.in)
			if got != tt.want || n == 0 {
				t.Errorf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			for _, b := range pemBody {
				if strings.Contains(got, b) {
					t.Errorf("the key body %q survived in %q", b, got)
				}
			}
			if again, _ := Redact(got); again != got {
				t.Errorf("not idempotent: %q -> %q", got, again)
			}
		})
	}
}

// streamSecrets are texts with secrets of every kind the scanner knows,
// laid out the ways model output has them.
var streamSecrets = []string{
	"Here is the key " + fakeOpenAIProj + " — keep it safe.",
	"export GITHUB_TOKEN=" + fakeGitHub + "\nexport AWS_ACCESS_KEY_ID=" + fakeAWSID + "\n",
	"curl -H \"Authorization: Bearer abc123def456ghi789\" https://api.example.com",
	"Authorization: Bearer abc123def456 " + fakePEM + "\nThat was the key.",
	"The id token is " + fakeJWT + ". Mail alice.smith@example.co.uk or see https://admin:pa55word@db.internal/x.",
	"db:\n  password: \"correct horse battery staple\"\n  user: app\n",
	"client_secret   =   s3cr3t-value; stripe " + fakeStripe + " and slack " + fakeSlack,
	"key:\n" + fakePEM + "\n" + fakeAnthropic + " and " + fakeGoogle,
	"send Bearer   xyzXYZ0123456789abcdef please",
	"no secrets at all in this line, only words like skill, ask-me and tokens: 12.",
}

// streamOut feeds chunks to a StreamRedactor and returns what it gave
// out, joined, and how many redactions it counted.
func streamOut(r *StreamRedactor, chunks []string) (string, int) {
	var b strings.Builder
	total := 0
	for _, c := range chunks {
		out, n := r.Write(c)
		b.WriteString(out)
		total += n
	}
	out, n := r.Flush()
	b.WriteString(out)
	return b.String(), total + n
}

// likeRedact reports whether got, streamed, is want (Redact of the whole
// text) but for the local part of an e-mail address cut before its "@",
// the one thing a StreamRedactor may let through.
func likeRedact(got, want string) bool {
	if got == want {
		return true
	}
	// regexp reads UTF-8, and the texts may not be: compare them byte for
	// byte, each byte as the rune of the same value (the pattern's class
	// and marker are ASCII, which that leaves as they are).
	pattern := strings.ReplaceAll(regexp.QuoteMeta(bytesAsRunes(want)), regexp.QuoteMeta("[REDACTED:email]"), `[A-Za-z0-9._%+-]*\[REDACTED:email\]`)
	return regexp.MustCompile("^" + pattern + "$").MatchString(bytesAsRunes(got))
}

// bytesAsRunes maps every byte of s to the rune of the same value, so any
// string, valid UTF-8 or not, becomes valid UTF-8 one-to-one.
func bytesAsRunes(s string) string {
	r := make([]rune, len(s))
	for i := 0; i < len(s); i++ {
		r[i] = rune(s[i])
	}
	return string(r)
}

// TestStreamRedactorMatchesRedactOnEveryCut: whatever the chunk
// boundaries — a cut at every byte, two cuts anywhere, one byte per
// chunk — what a StreamRedactor gives out, joined, is what Redact gives
// for the whole text (but for an e-mail address's local part cut before
// its "@"): no credential survives a boundary, nothing is lost or
// reordered.
func TestStreamRedactorMatchesRedactOnEveryCut(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, text := range streamSecrets {
		want, _ := Redact(text)
		check := func(how string, chunks []string) {
			t.Helper()
			got, _ := streamOut(NewStreamRedactor(0), chunks)
			if !likeRedact(got, want) {
				t.Fatalf("%s of %q:\n got %q\nwant %q", how, text, got, want)
			}
		}
		for i := 0; i <= len(text); i++ {
			check("cut at "+itoa(i), []string{text[:i], text[i:]})
		}
		for range 200 {
			i := rng.IntN(len(text) + 1)
			j := i + rng.IntN(len(text)-i+1)
			check("cuts at "+itoa(i)+","+itoa(j), []string{text[:i], text[i:j], text[j:]})
		}
		var bytes []string
		for i := range len(text) {
			bytes = append(bytes, text[i:i+1])
		}
		check("one byte per chunk", bytes)
	}
}

// TestStreamRedactorHoldsOnlyWhatMayBeASecret: prose is given out as it
// comes, cut words and all (chunk boundaries stay where they were); the
// beginning of a credential is held until the credential is complete; a
// key name given out is still matched with its value.
func TestStreamRedactorHoldsOnlyWhatMayBeASecret(t *testing.T) {
	r := NewStreamRedactor(0)
	if out, _ := r.Write("The answer is forty"); out != "The answer is forty" {
		t.Errorf("prose: gave out %q, want all of it", out)
	}
	if out, _ := r.Write("-two. Your key: sk-proj-Ab3dE"); out != "-two. Your key: " {
		t.Errorf("gave out %q, want the text up to the key", out)
	}
	if r.Held() == 0 {
		t.Error("nothing held while a credential is incomplete")
	}
	out, n := r.Write("_fG7hIj-Kl9mNo2pQr5sTu8vWx1yZa4bCd6eFg0hIj done.")
	if out != "[REDACTED:openai_key] done." || n != 1 {
		t.Errorf("gave out %q (%d redactions), want the redacted key and the rest", out, n)
	}
	if out, _ := r.Write(" db_pass"); out != " db_pass" {
		t.Errorf("a key name: gave out %q", out)
	}
	if out, _ := r.Write("word=hunter2 ok"); out != "word=[REDACTED:secret] ok" {
		t.Errorf("its value: gave out %q, want it redacted", out)
	}
	if rest, _ := r.Flush(); rest != "" {
		t.Errorf("held %q at the end", rest)
	}
}

// TestStreamRedactorBoundsWhatItHolds: a secret-looking run longer than
// the bound is given out (redacted as far as it goes) instead of held
// without end, and the rest of that secret is still redacted when it
// comes.
func TestStreamRedactorBoundsWhatItHolds(t *testing.T) {
	const max = 256
	r := NewStreamRedactor(max)
	body := strings.Repeat("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkw", 40) // base64-ish, no spaces
	var got strings.Builder
	out, _ := r.Write("-----BEGIN PRIVATE KEY-----\n")
	got.WriteString(out)
	for i := 0; i < len(body); i += 64 {
		out, _ := r.Write(body[i:min(i+64, len(body))] + "\n")
		got.WriteString(out)
		if r.Held() > max+64+1 {
			t.Fatalf("holds %d bytes, more than its bound of %d (plus one chunk)", r.Held(), max)
		}
	}
	out, _ = r.Write("-----END PRIVATE KEY-----\nafter the key")
	got.WriteString(out)
	out, _ = r.Flush()
	got.WriteString(out)
	if strings.Contains(got.String(), "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkw") {
		t.Errorf("the key body survived: %q", got.String())
	}
	if !strings.HasSuffix(got.String(), "after the key") {
		t.Errorf("the text after the key was lost: %q", got.String())
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// FuzzStreamRedactor: for any text and any chunk boundaries, what a
// StreamRedactor gives out, joined, is Redact of the whole text — so no
// secret survives a boundary and nothing is lost or reordered — and it
// never holds more than its bound plus one chunk.
func FuzzStreamRedactor(f *testing.F) {
	for i, s := range streamSecrets {
		f.Add(s, []byte{byte(7 * i), byte(13 * i), 3, 250})
	}
	f.Add("Authorization: Bearer x -----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----", []byte{20, 30, 40})
	f.Add("password:    \"a b c d e f\" ok", []byte{12, 14, 16, 18})
	f.Add("token=abc bearer  defghijk12 a@b.io", []byte{1, 1, 1, 1, 1, 1, 1, 1, 1, 1})
	f.Add("", []byte{})
	f.Fuzz(func(t *testing.T, text string, cuts []byte) {
		if len(cuts) > 64 {
			cuts = cuts[:64]
		}
		const bound = 512
		r := NewStreamRedactor(bound)
		var got strings.Builder
		rest := text
		for _, c := range cuts {
			n := min(int(c), len(rest))
			out, _ := r.Write(rest[:n])
			got.WriteString(out)
			if r.Held() > bound+n {
				t.Fatalf("holds %d bytes after a %d-byte chunk (bound %d)", r.Held(), n, bound)
			}
			rest = rest[n:]
		}
		out, _ := r.Write(rest)
		got.WriteString(out)
		out, _ = r.Flush()
		got.WriteString(out)
		if want, _ := Redact(text); len(text) <= bound && !likeRedact(got.String(), want) {
			t.Fatalf("streamed %q in pieces %v:\n got %q\nwant %q", text, cuts, got.String(), want)
		}
		for _, secret := range fuzzSecrets {
			if strings.Contains(text, " "+secret+" ") && strings.Contains(got.String(), secret) {
				t.Fatalf("secret survived: %q", got.String())
			}
		}
	})
}
