package cardsign

import (
	"crypto/ed25519"
	"errors"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// FuzzVerifyDocument feeds arbitrary card documents (they come from the
// network) to verification and canonicalisation: no panic, and only the
// documented outcomes.
func FuzzVerifyDocument(f *testing.F) {
	priv := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	s, err := NewSigner(priv, "fuzz", "")
	if err != nil {
		f.Fatal(err)
	}
	keys := NewKeySet()
	if err := keys.Add("fuzz", s.PublicKey().Key, "fuzz"); err != nil {
		f.Fatal(err)
	}
	card := testCard()
	sig, _ := s.Sign(card)
	card.Signatures = []a2a.AgentCardSignature{sig}
	doc, _ := a2a.Marshal(card)
	f.Add(doc)
	f.Add([]byte(servedDoc))
	f.Add([]byte(`{"signatures":[{"protected":"eyJhbGciOiJFZERTQSIsImtpZCI6ImZ1enoifQ","signature":""}]}`))
	f.Add([]byte(`{"name":"n","name":"m"}`))
	f.Add([]byte(`[1e400]`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		for _, form := range Forms {
			_, _ = Payload(doc, form)
		}
		res, err := VerifyDocument(doc, keys)
		if err == nil {
			if res.Card == nil || res.KeyID != "fuzz" {
				t.Fatalf("verified without a card or with kid %q", res.KeyID)
			}
			return
		}
		var ve *VerifyError
		if !errors.As(err, &ve) {
			t.Fatalf("error of type %T: %v", err, err)
		}
	})
}
