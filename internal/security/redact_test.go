package security

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// Fake but realistically shaped secrets; none of them is live.
const (
	fakeOpenAI     = "sk-Xq3vT9pLm2Rk8sWd4Yh7Jb1Nc6Fg0Za5Ue3Io2Pa9Ls"
	fakeOpenAIProj = "sk-proj-Ab3dE_fG7hIj-Kl9mNo2pQr5sTu8vWx1yZa4bCd6eFg0hIj"
	fakeAnthropic  = "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe-Dc_Ba9Zy8Xw7Vu6Ts5Rq4AA"
	fakeGitHub     = "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"
	fakeGitHubPAT  = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEF"
	fakeSlack      = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
	fakeAWSID      = "AKIAIOSFODNN7EXAMPLE"
	fakeAWSSecret  = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	fakeGoogle     = "AIzaSyD-1a2b3c4d5e6f7g8h9i0jKlMnOpQrStU"
	fakeStripe     = "sk_live_51H8xYzAbCdEfGhIjKlMnOpQr"
	fakeJWT        = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	fakePEM        = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq98Z0x\nq2lK7f0aB3c=\n-----END RSA PRIVATE KEY-----"
)

func TestRedactPositives(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"openai legacy", "key " + fakeOpenAI + " end", "key [REDACTED:openai_key] end"},
		{"openai project", "OPENAI_API_KEY is " + fakeOpenAIProj, "OPENAI_API_KEY is [REDACTED:openai_key]"},
		{"anthropic", "use " + fakeAnthropic + ".", "use [REDACTED:anthropic_key]."},
		{"github classic", "token " + fakeGitHub, "token [REDACTED:github_token]"},
		{"github fine-grained", "(" + fakeGitHubPAT + ")", "([REDACTED:github_token])"},
		{"github in clone url", "https://" + fakeGitHub + "@github.com/o/r.git", "https://[REDACTED:url_credentials]@github.com/o/r.git"},
		{"slack", "slack " + fakeSlack, "slack [REDACTED:slack_token]"},
		{"slack webhook", "post to https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXX now", "post to [REDACTED:slack_webhook] now"},
		{"aws key id", "id=" + fakeAWSID, "id=[REDACTED:aws_access_key_id]"},
		{"aws secret assignment", "aws_secret_access_key = " + fakeAWSSecret, "aws_secret_access_key = [REDACTED:secret]"},
		{"aws env", "AWS_SECRET_ACCESS_KEY=" + fakeAWSSecret + "\n", "AWS_SECRET_ACCESS_KEY=[REDACTED:secret]\n"},
		{"google", "maps " + fakeGoogle, "maps [REDACTED:google_api_key]"},
		{"stripe", "stripe " + fakeStripe, "stripe [REDACTED:stripe_key]"},
		{"jwt", "id_token: " + fakeJWT + ".", "id_token: [REDACTED:secret]."},
		{"bare jwt", "got " + fakeJWT, "got [REDACTED:jwt]"},
		{"bearer", "send Bearer abc123def456ghi789", "send Bearer [REDACTED:bearer_token]"},
		{"authorization header", "Authorization: Bearer abc123def456\nHost: x", "Authorization: [REDACTED:authorization]\nHost: x"},
		{"authorization in curl", `curl -H "Authorization: Basic dXNlcjpwYXNz" https://x`, `curl -H "Authorization: [REDACTED:authorization]" https://x`},
		{"pem block", "key:\n" + fakePEM + "\nafter", "key:\n[REDACTED:private_key]\nafter"},
		{"openssh pem cut off", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk", "[REDACTED:private_key]"},
		{"password query", "https://x.io/login?user=bob&password=hunter2&x=1", "https://x.io/login?user=bob&password=[REDACTED:secret]&x=1"},
		{"password yaml", "db:\n  password: s3cr3t!\n", "db:\n  password: [REDACTED:secret]\n"},
		{"json secret", `{"client_secret": "abc def", "n": 1}`, `{"client_secret": "[REDACTED:secret]", "n": 1}`},
		{"api key camel", "apiKey=1234abcd", "apiKey=[REDACTED:secret]"},
		{"x-api-key header", "X-Api-Key: k-9f8e7d", "X-Api-Key: [REDACTED:secret]"},
		{"go assignment", `token := "tok-1"`, `token := "[REDACTED:secret]"`},
		{"url credentials", "postgres://admin:pa55@db.internal:5432/app", "postgres://[REDACTED:url_credentials]@db.internal:5432/app"},
		{"email", "mail alice.smith+a2a@example.co.uk today", "mail [REDACTED:email] today"},
		{"two kinds", "a@b.io and " + fakeGitHub, "[REDACTED:email] and [REDACTED:github_token]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n := Redact(tt.in)
			if got != tt.want {
				t.Fatalf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if n == 0 {
				t.Errorf("count = 0")
			}
			again, n2 := Redact(got)
			if again != got || n2 != 0 {
				t.Errorf("second pass changed %q to %q", got, again)
			}
		})
	}
}

func TestRedactLeavesNearMisses(t *testing.T) {
	keep := []string{
		"",
		"The skill to ask-me anything is a task-oriented risk-free desk-side skill.",
		"sk-learn is a library; sk-short",
		"sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"uuid 123e4567-e89b-12d3-a456-426614174000 and commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
		"AKIA alone, AKIASHORT and ASIAN markets",
		"a bearer of bad news; Bearer authentication is described in RFC 6750",
		"Authorization failed for user bob.",
		"max_tokens=4096, tokens: 12, token_type=bearer",
		"nextPageToken=abc123; page_token: xyz",
		"PWD=/home/bob",
		"user@localhost, @mention, logo@2x.png, v1.2@3.4",
		"eyJ is how base64 JSON starts; eyJhbGciOi.short",
		"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
		"ghp_tooShort and gho_",
		"x == y, a => b, if password == nil",
		"https://example.com/path?q=1#frag",
		"ratio 3:2, time 12:30, key: value, note: password reset done",
	}
	for _, s := range keep {
		if got, n := Redact(s); got != s || n != 0 {
			t.Errorf("Redact(%q) = %q (%d); want unchanged", s, got, n)
		}
	}
}

func TestRedactValue(t *testing.T) {
	var in any
	doc := `{"text":"my key is ` + fakeGitHub + `","password":"hunter2","pin":1234,"apiKey":42,
		"nextPageToken":"p2","nested":[{"token":"t-1"},"mail bob@example.com",true,null],
		"headers":{"Authorization":"Bearer abc123def456"}}`
	if err := json.Unmarshal([]byte(doc), &in); err != nil {
		t.Fatal(err)
	}
	orig, _ := json.Marshal(in)
	got := RedactValue(in)
	want := map[string]any{
		"text":          "my key is [REDACTED:github_token]",
		"password":      "[REDACTED:secret]",
		"pin":           float64(1234),
		"apiKey":        "[REDACTED:secret]",
		"nextPageToken": "p2",
		"nested":        []any{map[string]any{"token": "[REDACTED:secret]"}, "mail [REDACTED:email]", true, nil},
		"headers":       map[string]any{"Authorization": "[REDACTED:secret]"},
	}
	if !reflect.DeepEqual(got, want) {
		gb, _ := json.Marshal(got)
		t.Fatalf("RedactValue =\n%s", gb)
	}
	after, _ := json.Marshal(in)
	if string(after) != string(orig) {
		t.Fatal("RedactValue modified its input")
	}
	ss := RedactValue(map[string]string{"secret": "x", "k": "a@b.io"}).(map[string]string)
	if ss["secret"] != "[REDACTED:secret]" || ss["k"] != "[REDACTED:email]" {
		t.Fatalf("map[string]string: %v", ss)
	}
	type opaque struct{ S string }
	if got := RedactValue(opaque{"a@b.io"}); got != (opaque{"a@b.io"}) {
		t.Fatalf("struct changed: %v", got)
	}
}

func TestIsSecretKey(t *testing.T) {
	tests := map[string]bool{
		"password": true, "DB_PASSWORD": true, "clientSecret": true, "x-api-key": true, "access_token": true,
		"aws_secret_access_key": true, "Set-Cookie": true, "credentials": true, "db_pwd": true,
		"pwd": false, "nextPageToken": false, "max_tokens": false, "token_type": false, "key": false, "username": false,
	}
	for k, want := range tests {
		if got := isSecretKey(k); got != want {
			t.Errorf("isSecretKey(%q) = %v", k, got)
		}
	}
}

// fuzzSecrets are embedded in fuzzed text; each must always be redacted.
var fuzzSecrets = []string{fakeGitHub, fakeAnthropic, fakeOpenAIProj, fakeAWSID, fakeJWT, fakeStripe, fakeSlack, fakeGoogle, fakePEM}

func FuzzRedact(f *testing.F) {
	seeds := []struct {
		prefix, suffix string
		which          uint8
	}{
		{"", "", 0}, {"token=", "&x", 1}, {"\"", "\"", 2}, {"ask", "skill", 3}, {"-----BEGIN PRIVATE KEY-----", "", 4},
		{"Bearer", "@x.io", 5}, {"https://u:", "@h", 6}, {"\xff\xfe", "é", 7}, {"password: \"", "", 0},
		// A PEM key after an Authorization header or a key on the same line.
		{"Authorization: Bearer abc123def456", "\nnext line", 8}, {"private_key:", "", 8}, {"Cookie: a=b;", "", 8},
	}
	for _, s := range seeds {
		f.Add(s.prefix, s.suffix, s.which)
	}
	f.Fuzz(func(t *testing.T, prefix, suffix string, which uint8) {
		out, n := Redact(prefix + suffix)
		if n < 0 || (n == 0 && out != prefix+suffix) {
			t.Fatalf("count %d for %q -> %q", n, prefix+suffix, out)
		}
		secret := fuzzSecrets[int(which)%len(fuzzSecrets)]
		in := prefix + " " + secret + " " + suffix
		out, _ = Redact(in)
		if strings.Contains(out, secret) {
			t.Fatalf("secret survived in %q", out)
		}
		if secret == fakePEM {
			for _, b := range pemBody {
				if strings.Contains(out, b) {
					t.Fatalf("the private key's body survived in %q", out)
				}
			}
		}
		again, n2 := Redact(out)
		if again != out || n2 != 0 {
			t.Fatalf("not idempotent: %q -> %q", out, again)
		}
	})
}

func benchProse(size int, secrets bool) string {
	para := "The quarterly report shows revenue grew twelve percent while costs held steady. " +
		"Could you draft a summary for the board, listing three risks and the next steps? " +
		"Users asked about the new sync feature; support tickets fell by a third.\n"
	if secrets {
		para += "Contact ops@example.com, use token=" + fakeGitHub + " and Authorization: Bearer abc123def456.\n"
	}
	var b strings.Builder
	for b.Len() < size {
		b.WriteString(para)
	}
	return b.String()[:size]
}

func BenchmarkRedact(b *testing.B) {
	for _, c := range []struct {
		name    string
		size    int
		secrets bool
	}{
		{"1KiB/clean", 1 << 10, false},
		{"64KiB/clean", 64 << 10, false},
		{"1KiB/secrets", 1 << 10, true},
		{"64KiB/secrets", 64 << 10, true},
	} {
		text := benchProse(c.size, c.secrets)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				Redact(text)
			}
		})
	}
}
