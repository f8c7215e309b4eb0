package push

import (
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testSecret signs notifications in tests.
var testSecret = []byte("test-push-secret")

// TestSignMatchesTheDocumentedScheme pins the scheme to a vector computed
// independently (openssl dgst -sha256 -hmac, Python hmac).
func TestSignMatchesTheDocumentedScheme(t *testing.T) {
	got := Sign([]byte("test-push-secret"), 1767225600, []byte(`{"statusUpdate":{"taskId":"t1"}}`))
	const want = "v1=9b3ddbe40267090d624de548130d89d3105f8ec056b9bf262142b6e1557b1f71"
	if got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
}

func TestVerify(t *testing.T) {
	now := time.Unix(1767225600, 0)
	body := []byte(`{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}`)
	signed := func(secret string, ts time.Time, b []byte) http.Header {
		h := http.Header{}
		h.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
		h.Set(HeaderSignature, Sign([]byte(secret), ts.Unix(), b))
		return h
	}
	with := func(h http.Header, key, value string) http.Header {
		h = h.Clone()
		if value == "" {
			h.Del(key)
		} else {
			h.Set(key, value)
		}
		return h
	}
	good := signed(string(testSecret), now, body)
	cases := []struct {
		name    string
		secret  []byte
		header  http.Header
		body    []byte
		maxSkew time.Duration
		want    error
	}{
		{name: "good", header: good, body: body},
		{name: "good within skew", header: signed(string(testSecret), now.Add(-4*time.Minute), body), body: body},
		{name: "good slightly ahead", header: signed(string(testSecret), now.Add(time.Minute), body), body: body},
		{name: "one of several signatures (key rotation)", body: body,
			header: with(good, HeaderSignature, Sign([]byte("old"), now.Unix(), body)+", "+good.Get(HeaderSignature))},
		{name: "wrong secret", header: signed("another-secret", now, body), body: body, want: ErrBadSignature},
		{name: "tampered body", header: good, body: []byte(strings.Replace(string(body), "COMPLETED", "FAILED", 1)), want: ErrBadSignature},
		{name: "body with a trailing newline", header: good, body: append(append([]byte(nil), body...), '\n'), want: ErrBadSignature},
		{name: "stale timestamp", header: signed(string(testSecret), now.Add(-6*time.Minute), body), body: body, want: ErrTimestampSkew},
		{name: "stale under a tighter skew", header: signed(string(testSecret), now.Add(-2*time.Minute), body), body: body, maxSkew: time.Minute, want: ErrTimestampSkew},
		{name: "timestamp from the future", header: signed(string(testSecret), now.Add(time.Hour), body), body: body, want: ErrTimestampSkew},
		{name: "timestamp changed after signing", header: with(good, HeaderTimestamp, strconv.FormatInt(now.Unix()-1, 10)), body: body, want: ErrBadSignature},
		{name: "missing signature", header: with(good, HeaderSignature, ""), body: body, want: ErrNoSignature},
		{name: "missing timestamp", header: with(good, HeaderTimestamp, ""), body: body, want: ErrNoSignature},
		{name: "no headers", header: http.Header{}, body: body, want: ErrNoSignature},
		{name: "timestamp not a number", header: with(good, HeaderTimestamp, "tomorrow"), body: body, want: ErrBadSignature},
		{name: "signed timestamp with a sign", header: with(good, HeaderTimestamp, "+"+good.Get(HeaderTimestamp)), body: body, want: ErrBadSignature},
		{name: "unknown signature version", header: with(good, HeaderSignature, "v2="+strings.TrimPrefix(good.Get(HeaderSignature), "v1=")), body: body, want: ErrBadSignature},
		{name: "signature not hex", header: with(good, HeaderSignature, "v1=zz"), body: body, want: ErrBadSignature},
		{name: "truncated signature", header: with(good, HeaderSignature, good.Get(HeaderSignature)[:20]), body: body, want: ErrBadSignature},
		{name: "no secret to verify with", secret: []byte{}, header: good, body: body, want: ErrBadSignature},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			secret := testSecret
			if c.secret != nil {
				secret = c.secret
			}
			err := Verify(secret, c.header, c.body, now, c.maxSkew)
			if c.want == nil && err != nil {
				t.Fatalf("Verify: %v, want success", err)
			}
			if c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("Verify: %v, want %v", err, c.want)
			}
		})
	}
}

// docSnippet returns the code block under a heading of the package doc,
// the text the README quotes.
func docSnippet(t *testing.T, heading string) string {
	t.Helper()
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	in := false
	for line := range strings.SplitSeq(string(src), "\n") {
		switch {
		case line == "// # "+heading:
			in = true
		case in && strings.HasPrefix(line, "// # "), in && !strings.HasPrefix(line, "//"):
			in = false
		case in && strings.HasPrefix(line, "//\t"):
			out = append(out, strings.TrimPrefix(line, "//\t"))
		case in && line == "//" && len(out) > 0:
			out = append(out, "")
		}
	}
	if len(out) == 0 {
		t.Fatalf("doc.go has no code under %q", heading)
	}
	return strings.Join(out, "\n") + "\n"
}

// verifyCases are requests the README snippets must accept or refuse.
func verifyCases() []struct {
	name string
	ts   int64
	sig  string
	body string
	ok   bool
} {
	body := `{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}` + "\n"
	now := time.Now().Unix()
	return []struct {
		name string
		ts   int64
		sig  string
		body string
		ok   bool
	}{
		{"good", now, Sign(testSecret, now, []byte(body)), body, true},
		{"good among several", now, "v1=00, " + Sign(testSecret, now, []byte(body)), body, true},
		{"tampered body", now, Sign(testSecret, now, []byte(body)), strings.Replace(body, "WORKING", "FAILED", 1), false},
		{"wrong secret", now, Sign([]byte("nope"), now, []byte(body)), body, false},
		{"stale", now - 600, Sign(testSecret, now-600, []byte(body)), body, false},
	}
}

// TestPythonSnippetVerifies runs the README's Python snippet.
func TestPythonSnippetVerifies(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	dir := t.TempDir()
	for _, c := range verifyCases() {
		t.Run(c.name, func(t *testing.T) {
			bodyFile := filepath.Join(dir, "body.json")
			if err := os.WriteFile(bodyFile, []byte(c.body), 0o600); err != nil {
				t.Fatal(err)
			}
			script := docSnippet(t, "Verifying in Python") + `
import sys
headers = {"X-A2A-Timestamp": sys.argv[1], "X-A2A-Signature": sys.argv[2]}
print(verify(sys.argv[3].encode(), headers, open(sys.argv[4], "rb").read()))
`
			out, err := exec.Command(py, "-c", script, strconv.FormatInt(c.ts, 10), c.sig, string(testSecret), bodyFile).CombinedOutput()
			if err != nil {
				t.Fatalf("python: %v\n%s", err, out)
			}
			if got := strings.TrimSpace(string(out)); got != strconv.FormatBool(c.ok) && got != map[bool]string{true: "True", false: "False"}[c.ok] {
				t.Fatalf("python verify = %s, want %v", got, c.ok)
			}
		})
	}
}

// TestShellSnippetVerifies runs the README's openssl snippet.
func TestShellSnippetVerifies(t *testing.T) {
	for _, tool := range []string{"bash", "openssl", "sed", "date"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	for _, c := range verifyCases() {
		if strings.Contains(c.sig, ",") {
			continue // the shell check compares one signature
		}
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "body.json"), []byte(c.body), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("bash", "-c", docSnippet(t, "Verifying in a shell"))
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "TS="+strconv.FormatInt(c.ts, 10), "SIG="+c.sig, "A2A_PUSH_SECRET="+string(testSecret))
			out, _ := cmd.CombinedOutput()
			if got := strings.TrimSpace(string(out)) == "verified"; got != c.ok {
				t.Fatalf("shell snippet printed %q, want verified=%v", out, c.ok)
			}
		})
	}
}
