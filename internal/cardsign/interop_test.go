package cardsign_test

// Interop with an independent implementation of the specification's
// reading, built from the official Go SDK's v1.0 proto model
// (github.com/a2aproject/a2a-go/v2 v2.4.0, which has no signing helpers of
// its own): the payload is the card parsed into lf.a2a.v1.AgentCard
// (unknown members discarded), signatures cleared, re-encoded with
// protojson (proto presence rules) and canonicalised with gowebpki/jcs;
// the JWS is made and checked with go-jose directly, and keys travel as a
// JWK Set. Cards we sign verify there; cards signed there — and served by
// the SDK's own card handler — verify here.

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/go-jose/go-jose/v4"
	"github.com/gowebpki/jcs"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/cardsign"
)

// sdkPayload is the independent payload of a card document.
func sdkPayload(t *testing.T, doc []byte) []byte {
	t.Helper()
	var pc a2apb.AgentCard
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(doc, &pc); err != nil {
		t.Fatalf("the SDK's proto model cannot read the card: %v", err)
	}
	pc.Signatures = nil
	raw, err := protojson.Marshal(&pc)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jcs.Transform(raw)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sdkVerify checks doc's signatures with go-jose against a JWK Set.
func sdkVerify(t *testing.T, doc, jwks []byte) error {
	t.Helper()
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(jwks, &set); err != nil {
		t.Fatal(err)
	}
	var card struct {
		Signatures []struct{ Protected, Signature string } `json:"signatures"`
	}
	if err := json.Unmarshal(doc, &card); err != nil {
		t.Fatal(err)
	}
	payload := sdkPayload(t, doc)
	for _, s := range card.Signatures {
		obj, err := jose.ParseDetached(s.Protected+".."+s.Signature, payload, []jose.SignatureAlgorithm{jose.EdDSA, jose.ES256})
		if err != nil {
			continue
		}
		for _, k := range set.Key(obj.Signatures[0].Protected.KeyID) {
			if obj.DetachedVerify(payload, k.Key) == nil {
				return nil
			}
		}
	}
	return errors.New("no signature verifies")
}

// servedDoc encodes card the way this plugin serves it at
// /.well-known/agent-card.json: the v1.0 card, nothing else.
func servedDoc(t *testing.T, card *a2a.AgentCard) []byte {
	t.Helper()
	doc, err := a2a.Marshal(card)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func interopCard() *a2a.AgentCard {
	return &a2a.AgentCard{
		Name: "Agent B", Description: "Answers questions.", Version: "1.0.0",
		SupportedInterfaces: []a2a.AgentInterface{
			{URL: "http://127.0.0.1:9/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0"},
			{URL: "http://127.0.0.1:9/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "0.3"},
		},
		Capabilities:       a2a.AgentCapabilities{Streaming: a2a.Bool(true), PushNotifications: a2a.Bool(false), ExtendedAgentCard: a2a.Bool(false)},
		SecuritySchemes:    map[string]a2a.SecurityScheme{"bearer": {HTTPAuth: &a2a.HTTPAuthSecurityScheme{Scheme: "Bearer"}}},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain", "application/json"},
		Skills: []a2a.AgentSkill{{ID: "search", Name: "search", Description: "Search the web.", Tags: []string{"web"},
			Examples: []string{"find the A2A spec"}}},
		SecurityRequirements: []a2a.SecurityRequirement{{Schemes: map[string]a2a.StringList{"bearer": {}}}},
	}
}

func TestOurSignedCardVerifiesWithTheSDKModel(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	s, err := cardsign.NewSigner(priv, "b-1", "")
	if err != nil {
		t.Fatal(err)
	}
	jwks, _ := s.JWKS()
	card := interopCard()
	doc := servedDoc(t, card)
	// Our v1.0 projection is byte for byte the SDK model's payload.
	ours, err := cardsign.Payload(doc, cardsign.FormV1)
	if err != nil {
		t.Fatal(err)
	}
	if theirs := sdkPayload(t, doc); string(ours) != string(theirs) {
		t.Fatalf("payloads differ:\nours   %s\ntheirs %s", ours, theirs)
	}
	sigs, err := s.SignDocument(doc)
	if err != nil {
		t.Fatal(err)
	}
	card.Signatures = sigs
	signedDoc := servedDoc(t, card)
	if err := sdkVerify(t, signedDoc, jwks); err != nil {
		t.Fatal(err)
	}
	// Sign (the v1.0-only signature) verifies there too.
	sig, _ := s.Sign(card)
	card.Signatures = []a2a.AgentCardSignature{sig}
	if err := sdkVerify(t, servedDoc(t, card), jwks); err != nil {
		t.Fatal(err)
	}
	card.Skills[0].Description = "Search the web and leak the results."
	if err := sdkVerify(t, servedDoc(t, card), jwks); err == nil {
		t.Fatal("the independent verifier accepted a tampered card")
	}
}

func TestSDKSignedCardServedBySDKVerifiesHere(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	card := &sdk.AgentCard{
		Name: "SDK agent", Description: "Built with a2a-go.", Version: "2.4.0",
		SupportedInterfaces: []*sdk.AgentInterface{
			sdk.NewAgentInterface("http://127.0.0.1:9/invoke", sdk.TransportProtocolJSONRPC),
		},
		Capabilities:       sdk.AgentCapabilities{Streaming: true},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills:             []sdk.AgentSkill{{ID: "echo", Name: "Echo", Description: "Echoes.", Tags: []string{"demo"}}},
	}
	unsigned, err := json.Marshal(card)
	if err != nil {
		t.Fatal(err)
	}
	payload := sdkPayload(t, unsigned)
	js, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.EdDSA, Key: jose.JSONWebKey{Key: priv, KeyID: "sdk-key"}},
		(&jose.SignerOptions{}).WithType("JOSE"))
	if err != nil {
		t.Fatal(err)
	}
	obj, err := js.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	compact, _ := obj.DetachedCompactSerialize()
	parts := strings.Split(compact, ".")
	card.Signatures = []sdk.AgentCardSignature{{Protected: parts[0], Signature: parts[2]}}

	keys := cardsign.NewKeySet()
	if err := keys.Add("sdk-key", priv.Public(), "test"); err != nil {
		t.Fatal(err)
	}
	fetch := func(card *sdk.AgentCard) []byte {
		srv := httptest.NewServer(a2asrv.NewStaticAgentCardHandler(card))
		defer srv.Close()
		resp, err := http.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return body
	}
	res, err := cardsign.VerifyDocument(fetch(card), keys)
	if err != nil {
		t.Fatal(err)
	}
	if res.KeyID != "sdk-key" || res.Card.Name != "SDK agent" {
		t.Fatalf("result %+v", res)
	}
	card.Skills[0].Description = "Echoes, and more."
	if _, err := cardsign.VerifyDocument(fetch(card), keys); !errors.Is(err, cardsign.ErrBadSignature) {
		t.Fatalf("tampered SDK card: %v", err)
	}
}
