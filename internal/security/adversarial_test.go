package security

import (
	"strings"
	"testing"
)

// BenchmarkFilterAdversarial feeds 64 KiB of one repeated crafted unit, to
// show every path of the filter stays linear.
func BenchmarkFilterAdversarial(b *testing.B) {
	for _, unit := range []string{"<s", "<|", "< |a", "[s", "[a2a untrusted ", "ignore all all all all all ", "\nsystem:", "you are you are ", "<system a=\"1\" b=\"2\" c=\"3\"", "\u200b", "\xff", "a\u00a0", "ｉ", "do not follow the the the ", "<<", "@", "a=b "} {
		text := strings.Repeat(unit, (64<<10)/len(unit))
		b.Run(strings.ToValidUTF8(unit, "?"), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				FilterInbound(text)
			}
		})
	}
}

// BenchmarkRedactAdversarial does the same for Redact.
func BenchmarkRedactAdversarial(b *testing.B) {
	for _, unit := range []string{"a@", "a@b.", "password=", "sk-", "eyJ", "-----BEGIN ", "Bearer ", "x://", "a:b:", "ghp_", "e"} {
		text := strings.Repeat(unit, (64<<10)/len(unit))
		b.Run(unit, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				Redact(text)
			}
		})
	}
}
