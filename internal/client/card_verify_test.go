package client_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/cardsign"
	"github.com/a2a-plugin/a2a-plugin/internal/client"
)

// cardServer serves one card body with an ETag and answers conditional
// requests.
type cardServer struct {
	srv        *httptest.Server
	mu         sync.Mutex
	body       []byte
	full, hits atomic.Int32
}

func newCardServer(t *testing.T) *cardServer {
	cs := &cardServer{}
	cs.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != client.WellKnownCardPath {
			http.NotFound(w, r)
			return
		}
		cs.hits.Add(1)
		cs.mu.Lock()
		body := cs.body
		cs.mu.Unlock()
		sum := sha256.Sum256(body)
		etag := `"` + hex.EncodeToString(sum[:8]) + `"`
		w.Header().Set("ETag", etag)
		w.Header().Set("Cache-Control", "no-cache")
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		cs.full.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	t.Cleanup(cs.srv.Close)
	return cs
}

func (cs *cardServer) serve(body []byte) {
	cs.mu.Lock()
	cs.body = body
	cs.mu.Unlock()
}

func (cs *cardServer) card() *a2a.AgentCard {
	return &a2a.AgentCard{
		Name: "Signed agent", Description: "Signs its card.", Version: "1",
		SupportedInterfaces: []a2a.AgentInterface{{URL: cs.srv.URL + "/rpc", ProtocolBinding: "JSONRPC", ProtocolVersion: "1.0"}},
		Capabilities:        a2a.AgentCapabilities{Streaming: a2a.Bool(true)},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "s", Name: "S", Description: "Does s.", Tags: []string{"t"}}},
	}
}

func signWith(t *testing.T, card *a2a.AgentCard, signers ...*cardsign.Signer) []byte {
	t.Helper()
	c := *card
	for _, s := range signers {
		sig, err := s.Sign(card)
		if err != nil {
			t.Fatal(err)
		}
		c.Signatures = append(c.Signatures, sig)
	}
	b, err := a2a.Marshal(&c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newSigner(t *testing.T, kid string) (*cardsign.Signer, *cardsign.KeySet) {
	t.Helper()
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	s, err := cardsign.NewSigner(priv, kid, "")
	if err != nil {
		t.Fatal(err)
	}
	ks := cardsign.NewKeySet()
	if err := ks.Add(kid, s.PublicKey().Key, "test"); err != nil {
		t.Fatal(err)
	}
	return s, ks
}

func TestSignedPeerCardVerifies(t *testing.T) {
	cs := newCardServer(t)
	signer, keys := newSigner(t, "b-1")
	cs.serve(signWith(t, cs.card(), signer))
	c := client.New(client.Options{})
	p := c.Peer(client.Endpoint{Name: "b", URL: cs.srv.URL, CardKeys: keys})
	info, err := p.Card(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.Verified == nil || info.Verified.KeyID != "b-1" || info.Verified.Algorithm != "EdDSA" {
		t.Fatalf("verification %+v", info.Verified)
	}
	if info.Interface.URL != cs.srv.URL+"/rpc" || len(info.Card.Signatures) != 1 {
		t.Fatalf("interface %s, %d signatures", info.Interface.URL, len(info.Card.Signatures))
	}
	// A 304 revalidation keeps the verified card.
	info, err = p.Refresh(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !info.Revalidated || info.Verified == nil || cs.full.Load() != 1 {
		t.Fatalf("revalidated %v, verified %+v, full downloads %d", info.Revalidated, info.Verified, cs.full.Load())
	}
	if cached := p.CachedCard(); cached == nil || cached.Verified == nil {
		t.Fatalf("cached card %+v", cached)
	}
}

func TestSignedPeerRefusals(t *testing.T) {
	signer, keys := newSigner(t, "b-1")
	other, _ := newSigner(t, "b-2")
	cases := []struct {
		name   string
		body   func(cs *cardServer) []byte
		reason error
		text   string
	}{
		{"unsigned", func(cs *cardServer) []byte { return signWith(t, cs.card()) }, cardsign.ErrUnsigned,
			`peer "b" is configured as signed, but the card has no signature`},
		{"tampered", func(cs *cardServer) []byte {
			doc := signWith(t, cs.card(), signer)
			return []byte(strings.Replace(string(doc), "Does s.", "Does s, and more.", 1))
		}, cardsign.ErrBadSignature, "does not verify with key kid=b-1: the card was modified after signing or signed by another key"},
		{"unknown kid", func(cs *cardServer) []byte { return signWith(t, cs.card(), other) }, cardsign.ErrUnknownKey,
			"the card is signed with kid=b-2; the configured keys are kid=b-1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cs := newCardServer(t)
			cs.serve(tc.body(cs))
			c := client.New(client.Options{})
			p := c.Peer(client.Endpoint{Name: "b", URL: cs.srv.URL, CardKeys: keys})
			_, err := p.Card(context.Background())
			if !errors.Is(err, client.ErrUntrustedCard) || !errors.Is(err, tc.reason) {
				t.Fatalf("error %v", err)
			}
			if !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("message %q lacks %q", err, tc.text)
			}
			// Every use of the peer fails the same way, e.g. a send.
			_, err = p.SendMessage(context.Background(), &a2a.SendMessageRequest{Message: a2a.Message{MessageID: "m", Role: a2a.RoleUser,
				Parts: []a2a.Part{a2a.TextPart("hi")}}})
			if !errors.Is(err, tc.reason) {
				t.Fatalf("send: %v", err)
			}
			// The same URL without keys (an unsigned peer) still works.
			if _, err := c.Peer(client.Endpoint{URL: cs.srv.URL}).Card(context.Background()); err != nil {
				t.Fatalf("unsigned peer on the same URL: %v", err)
			}
		})
	}
}

func TestSignedPeerCardChangesAreCheckedOnRefresh(t *testing.T) {
	cs := newCardServer(t)
	oldKey, keys := newSigner(t, "b-2025")
	cs.serve(signWith(t, cs.card(), oldKey))
	c := client.New(client.Options{})
	p := c.Peer(client.Endpoint{Name: "b", URL: cs.srv.URL, CardKeys: keys})
	if _, err := p.Card(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The peer rotates to a key the client does not know yet: refused.
	newKey, _ := newSigner(t, "b-2026")
	cs.serve(signWith(t, cs.card(), newKey))
	if _, err := p.Refresh(context.Background()); !errors.Is(err, cardsign.ErrUnknownKey) {
		t.Fatalf("rotated to an unknown key: %v", err)
	}
	// During a rotation the card carries both signatures: accepted.
	cs.serve(signWith(t, cs.card(), oldKey, newKey))
	info, err := p.Refresh(context.Background())
	if err != nil || info.Verified.KeyID != "b-2025" {
		t.Fatalf("card with both signatures: %+v %v", info, err)
	}
}
