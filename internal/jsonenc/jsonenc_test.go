package jsonenc

import (
	"bytes"
	"encoding/json"
	"math/bits"
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

// TestSpecial8 compares the eight-byte test with a byte-by-byte one: every
// byte value at every position among ordinary bytes, and then every pair
// of byte values at two positions (the first flagged byte must be the
// first special one whatever follows it).
func TestSpecial8(t *testing.T) {
	special := func(v int) bool { return v < 0x20 || v >= 0x80 || v == '"' || v == '\\' }
	first := func(b []byte) int {
		for i, v := range b {
			if special(int(v)) {
				return i
			}
		}
		return 8
	}
	check := func(b []byte) {
		m := special8(load8(string(b)))
		got := 8
		if m != 0 {
			got = bits.TrailingZeros64(m) >> 3
		}
		if want := first(b); got != want {
			t.Fatalf("special8(%q) flags byte %d first, want %d", b, got, want)
		}
	}
	for pos := 0; pos < 8; pos++ {
		for v := 0; v < 256; v++ {
			b := []byte("abcdefgh")
			b[pos] = byte(v)
			check(b)
		}
	}
	for _, pos := range [][2]int{{0, 1}, {2, 5}, {6, 7}, {0, 7}} {
		for v := 0; v < 256; v++ {
			for w := 0; w < 256; w++ {
				b := []byte("a\x7f cdef~")[:8]
				b[pos[0]], b[pos[1]] = byte(v), byte(w)
				check(b)
			}
		}
	}
}

func BenchmarkAppendString(b *testing.B) {
	for _, c := range []struct{ name, s string }{
		{"id", "0193a5c2-7f4e-7b21-9c3d-5e6f7a8b9c0d"},
		{"text", "The quick brown fox jumps over the lazy dog, and then it writes a short answer of a few sentences back to the caller."},
		{"escapes", "line one\nline \"two\"\twith a tab\\ and more text after the escapes"},
		{"cjk", "\u4e16\u754c\u4f60\u597d\u3002\u8fd9\u662f\u4e00\u4e2a\u6d4b\u8bd5\u53e5\u5b50"},
		{"utf8", "caf\u00e9 \u4e16\u754c na\u00efve r\u00e9sum\u00e9 \u00fcber stra\u00dfe"},
	} {
		b.Run(c.name, func(b *testing.B) {
			buf := make([]byte, 0, 256)
			b.SetBytes(int64(len(c.s)))
			for b.Loop() {
				buf = AppendString(buf[:0], c.s)
			}
		})
	}
}
