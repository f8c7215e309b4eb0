package jsonenc

import (
	"bytes"
	"encoding/json"
	"testing"
)

// stdString is s as encoding/json writes it with HTML escaping off.
func stdString(t testing.TB, s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func TestAppendStringIsEncodingJSONs(t *testing.T) {
	for _, s := range []string{
		"", "plain", `quote " and \ backslash`, "<tag> & amp", "\b\f\n\r\t", "\x00\x01\x1f\x7f",
		"caf\u00e9 \u4e16\u754c \U0001F600", "line\u2028sep\u2029para", "bad \xff utf-8 \xc3", "\xed\xa0\x80 surrogate",
	} {
		if got, want := AppendString([]byte("x"), s), append([]byte("x"), stdString(t, s)...); !bytes.Equal(got, want) {
			t.Errorf("AppendString(%q) = %s, encoding/json writes %s", s, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\u2028", "\xff", "<&>", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := AppendString(nil, s), stdString(t, s); !bytes.Equal(got, want) {
			t.Errorf("AppendString(%q) = %s, encoding/json writes %s", s, got, want)
		}
	})
}
