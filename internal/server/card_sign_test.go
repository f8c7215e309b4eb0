package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/cardsign"
)

// countingSigner counts the documents it signs.
type countingSigner struct {
	*cardsign.Signer
	docs atomic.Int32
}

func (c *countingSigner) SignDocument(doc []byte) ([]a2a.AgentCardSignature, error) {
	c.docs.Add(1)
	return c.Signer.SignDocument(doc)
}

func newTestSigner(t *testing.T) (*countingSigner, *cardsign.KeySet) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := cardsign.NewSigner(priv, "test-2026", "")
	if err != nil {
		t.Fatal(err)
	}
	ks := cardsign.NewKeySet()
	if err := ks.Add(s.KeyID(), s.PublicKey().Key, "test"); err != nil {
		t.Fatal(err)
	}
	return &countingSigner{Signer: s}, ks
}

func TestSignedCardVerifiesAndIsStableAcrossRequests(t *testing.T) {
	signer, keys := newTestSigner(t)
	var tools atomic.Value
	tools.Store([]a2a.AgentSkill{skill("search")})
	clock := newTestClock()
	e := newEnv(t, func(o *Options) {
		o.Card.Signer = signer
		o.Skills = func(context.Context) ([]a2a.AgentSkill, error) { return tools.Load().([]a2a.AgentSkill), nil }
		o.Now = clock.Now
	})
	resp, body := fetchCard(t, e, "/.well-known/agent-card.json", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	card, _ := splitCard(t, body) // the signed card still validates against the schema
	res, err := cardsign.VerifyDocument(body, keys)
	if err != nil {
		t.Fatal(err)
	}
	if res.KeyID != "test-2026" || res.Form != cardsign.FormV1 {
		t.Fatalf("verified with %s over the %s", res.KeyID, res.Form)
	}
	// The card is a strict v1.0 document, so the v1.0 projection and the
	// served document are the same payload; it requires a token, and its
	// empty scope list ({}) makes the pruned reading differ: two
	// signatures.
	if len(card.Signatures) != 2 {
		t.Fatalf("%d signatures, want 2", len(card.Signatures))
	}

	// ES256 signatures are randomised: the cache keeps body and ETag
	// stable, and conditional requests keep working.
	resp2, body2 := fetchCard(t, e, "/.well-known/agent-card.json", nil)
	if string(body2) != string(body) || resp2.Header.Get("ETag") != resp.Header.Get("ETag") {
		t.Fatal("a second request served a different signed card")
	}
	if n := signer.docs.Load(); n != 1 {
		t.Fatalf("signed %d times for identical cards", n)
	}
	resp3, _ := fetchCard(t, e, "/.well-known/agent-card.json", map[string]string{"If-None-Match": resp.Header.Get("ETag")})
	if resp3.StatusCode != http.StatusNotModified {
		t.Fatalf("conditional request: %d", resp3.StatusCode)
	}

	// A new tool changes the card: it is signed anew and verifies.
	tools.Store([]a2a.AgentSkill{skill("search"), skill("translate")})
	clock.Advance(skillsTTL) // the card reads the host's tools at most once per skillsTTL
	_, body4 := fetchCard(t, e, "/.well-known/agent-card.json", nil)
	res, err = cardsign.VerifyDocument(body4, keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Card.Skills) != 2 || signer.docs.Load() != 2 {
		t.Fatalf("skills %d, signed %d times", len(res.Card.Skills), signer.docs.Load())
	}
}

// TestZeroThreeCardIsSignedOverItsOwnDocument: the 0.3 card served at the
// legacy path carries signatures over that document, and verifies.
func TestZeroThreeCardIsSignedOverItsOwnDocument(t *testing.T) {
	signer, keys := newTestSigner(t)
	e := newEnv(t, func(o *Options) { o.Card.Signer = signer })
	_, body := fetchCard(t, e, "/.well-known/agent.json", nil)
	card03(t, body)
	res, err := cardsign.VerifyDocument(body, keys)
	if err != nil {
		t.Fatal(err)
	}
	if res.Form != cardsign.FormServed || !strings.Contains(string(res.Payload), `"protocolVersion":"0.3.0"`) {
		t.Errorf("verified over the %s: %s", res.Form, res.Payload)
	}
	// The v1.0 card's signatures are its own.
	_, v1 := fetchCard(t, e, "/.well-known/agent-card.json", nil)
	if res, err := cardsign.VerifyDocument(v1, keys); err != nil || res.Form != cardsign.FormV1 {
		t.Fatalf("v1.0 card: %+v, %v", res, err)
	}
}

func TestExtendedCardIsSigned(t *testing.T) {
	signer, keys := newTestSigner(t)
	extra := a2a.AgentSkill{ID: "admin", Name: "Admin", Description: "Operator tasks.", Tags: []string{"ops"}}
	e := newEnv(t, func(o *Options) {
		o.Card.Signer = signer
		o.Card.ExtendedSkills = []a2a.AgentSkill{extra}
	})
	raw := e.ok(tokAlice, "GetExtendedAgentCard", nil)
	res, err := cardsign.VerifyDocument(raw, keys)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Card.Skills); n < 2 || res.Card.Skills[n-1].ID != "admin" {
		t.Fatalf("extended skills %+v", res.Card.Skills)
	}
}

// failingSigner cannot sign.
type failingSigner struct{}

func (failingSigner) Sign(*a2a.AgentCard) (a2a.AgentCardSignature, error) {
	return a2a.AgentCardSignature{}, errors.New("the HSM is offline")
}

func TestCardIsServedUnsignedWhenSigningFails(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Card.Signer = failingSigner{} })
	resp, body := fetchCard(t, e, "/.well-known/agent-card.json", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if card, _ := splitCard(t, body); len(card.Signatures) != 0 {
		t.Fatalf("signatures %+v", card.Signatures)
	}
}
