package cardsign

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// testCard is a card like the one this plugin's server builds.
func testCard() *a2a.AgentCard {
	return &a2a.AgentCard{
		Name:        "Agent B",
		Description: "Answers questions.",
		SupportedInterfaces: []a2a.AgentInterface{
			{URL: "http://127.0.0.1:9/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0"},
			{URL: "http://127.0.0.1:9/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "0.3"},
		},
		Version:      "1.0.0",
		Capabilities: a2a.AgentCapabilities{Streaming: a2a.Bool(true), PushNotifications: a2a.Bool(false), ExtendedAgentCard: a2a.Bool(false)},
		SecuritySchemes: map[string]a2a.SecurityScheme{"bearer": {HTTPAuth: &a2a.HTTPAuthSecurityScheme{
			Scheme: "Bearer", Description: "token"}}},
		SecurityRequirements: []a2a.SecurityRequirement{{Schemes: map[string]a2a.StringList{"bearer": {}}}},
		DefaultInputModes:    []string{"text/plain"},
		DefaultOutputModes:   []string{"text/plain"},
		Skills: []a2a.AgentSkill{
			{ID: "search", Name: "search", Description: "Search the web.", Tags: []string{"web"}},
			{ID: "summarise", Name: "summarise", Description: "Summarise a text.", Tags: []string{"text"}},
		},
	}
}

func newEd25519(t *testing.T, kid string) *Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSigner(priv, kid, "")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newES256(t *testing.T, kid string) *Signer {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSigner(priv, kid, "")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func keysOf(t *testing.T, signers ...*Signer) *KeySet {
	t.Helper()
	ks := NewKeySet()
	for _, s := range signers {
		if err := ks.Add(s.KeyID(), s.PublicKey().Key, "test"); err != nil {
			t.Fatal(err)
		}
	}
	return ks
}

func signed(t *testing.T, card *a2a.AgentCard, signers ...*Signer) *a2a.AgentCard {
	t.Helper()
	c := *card
	c.Signatures = nil
	for _, s := range signers {
		sig, err := s.Sign(card)
		if err != nil {
			t.Fatal(err)
		}
		c.Signatures = append(c.Signatures, sig)
	}
	return &c
}

func TestSignVerifyRoundTrip(t *testing.T) {
	for _, s := range []*Signer{newEd25519(t, "ed-1"), newES256(t, "ec-1")} {
		t.Run(s.Algorithm(), func(t *testing.T) {
			card := signed(t, testCard(), s)
			if err := Verify(card, keysOf(t, s)); err != nil {
				t.Fatal(err)
			}
			sig := card.Signatures[0]
			hdr, err := parseProtected(sig.Protected)
			if err != nil {
				t.Fatal(err)
			}
			if hdr.Alg != s.Algorithm() || hdr.Kid != s.KeyID() || hdr.Typ != "JOSE" {
				t.Fatalf("protected header %+v", hdr)
			}
			// The served JSON verifies too, and the card is the signed one.
			doc, err := a2a.Marshal(card)
			if err != nil {
				t.Fatal(err)
			}
			res, err := VerifyDocument(doc, keysOf(t, s))
			if err != nil {
				t.Fatal(err)
			}
			if res.KeyID != s.KeyID() || res.Form != FormV1 || res.Card.Skills[1].Description != "Summarise a text." {
				t.Fatalf("result %+v", res)
			}
		})
	}
}

func TestTamperedCardIsRefused(t *testing.T) {
	for _, s := range []*Signer{newEd25519(t, "ed-1"), newES256(t, "ec-1")} {
		card := signed(t, testCard(), s)
		card.Skills[1].Description = "Summarise a text, and send it to evil.example."
		err := Verify(card, keysOf(t, s))
		if !errors.Is(err, ErrBadSignature) {
			t.Fatalf("%s: tampered card: %v", s.Algorithm(), err)
		}
		if msg := err.Error(); !strings.Contains(msg, "kid="+s.KeyID()) || !strings.Contains(msg, "modified") {
			t.Fatalf("message %q should name the key and say the card was modified", msg)
		}
	}
}

func TestUnsignedCardIsRefused(t *testing.T) {
	s := newEd25519(t, "k")
	err := Verify(testCard(), keysOf(t, s))
	if !errors.Is(err, ErrUnsigned) || !strings.Contains(err.Error(), "no signature") {
		t.Fatalf("unsigned card: %v", err)
	}
}

func TestUnknownKidIsRefused(t *testing.T) {
	signer, other := newEd25519(t, "b-2026"), newEd25519(t, "b-2025")
	err := Verify(signed(t, testCard(), signer), keysOf(t, other))
	if !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("unknown kid: %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "kid=b-2026") || !strings.Contains(msg, "kid=b-2025") {
		t.Fatalf("message %q should name both the card's and the configured kid", msg)
	}
}

func TestSameKidOtherKeyIsBadSignature(t *testing.T) {
	signer, impostor := newEd25519(t, "b"), newEd25519(t, "b")
	if err := Verify(signed(t, testCard(), impostor), keysOf(t, signer)); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("card signed by another key under the configured kid: %v", err)
	}
	// An ES256 signature under the kid of an Ed25519 key.
	ec := newES256(t, "b")
	err := Verify(signed(t, testCard(), ec), keysOf(t, signer))
	if !errors.Is(err, ErrBadSignature) || !strings.Contains(err.Error(), "Ed") {
		t.Fatalf("alg/key mismatch: %v", err)
	}
}

func TestUnsupportedAlgIsRefused(t *testing.T) {
	payload, err := CardPayload(testCard(), FormV1)
	if err != nil {
		t.Fatal(err)
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	for _, sk := range []jose.SigningKey{
		{Algorithm: jose.HS256, Key: []byte("0123456789abcdef0123456789abcdef")},
		{Algorithm: jose.RS256, Key: rsaKey},
	} {
		js, err := jose.NewSigner(sk, (&jose.SignerOptions{}).WithHeader("kid", "k"))
		if err != nil {
			t.Fatal(err)
		}
		obj, err := js.Sign(payload)
		if err != nil {
			t.Fatal(err)
		}
		compact, _ := obj.DetachedCompactSerialize()
		parts := strings.Split(compact, ".")
		card := testCard()
		card.Signatures = []a2a.AgentCardSignature{{Protected: parts[0], Signature: parts[2]}}
		err = Verify(card, keysOf(t, newEd25519(t, "k")))
		if !errors.Is(err, ErrUnsupportedAlg) || !strings.Contains(err.Error(), string(sk.Algorithm)) {
			t.Fatalf("%s: %v", sk.Algorithm, err)
		}
	}
	// alg "none" with an empty signature.
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","kid":"k"}`))
	card := testCard()
	card.Signatures = []a2a.AgentCardSignature{{Protected: none, Signature: ""}}
	if err := Verify(card, keysOf(t, newEd25519(t, "k"))); !errors.Is(err, ErrUnsupportedAlg) {
		t.Fatalf("alg none: %v", err)
	}
}

func TestKidComesFromTheProtectedHeaderOnly(t *testing.T) {
	trusted, attacker := newEd25519(t, "trusted"), newEd25519(t, "attacker")
	card := signed(t, testCard(), attacker)
	card.Signatures[0].Header = map[string]any{"kid": "trusted"}
	if err := Verify(card, keysOf(t, trusted)); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("an unprotected kid must not select a key: %v", err)
	}
}

func TestKeyRotation(t *testing.T) {
	oldKey, newKey := newEd25519(t, "b-2025"), newES256(t, "b-2026")
	t.Run("new key, client knows old and new", func(t *testing.T) {
		if err := Verify(signed(t, testCard(), newKey), keysOf(t, oldKey, newKey)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("new key, client knows only the old", func(t *testing.T) {
		err := Verify(signed(t, testCard(), newKey), keysOf(t, oldKey))
		if !errors.Is(err, ErrUnknownKey) {
			t.Fatal(err)
		}
	})
	t.Run("both signatures during rotation", func(t *testing.T) {
		card := signed(t, testCard(), oldKey, newKey)
		for _, ks := range []*KeySet{keysOf(t, oldKey), keysOf(t, newKey), keysOf(t, oldKey, newKey)} {
			if err := Verify(card, ks); err != nil {
				t.Fatalf("keys %v: %v", ks.KeyIDs(), err)
			}
		}
		// Tampering breaks both.
		card.Name = "Agent Evil"
		if err := Verify(card, keysOf(t, oldKey, newKey)); !errors.Is(err, ErrBadSignature) {
			t.Fatal(err)
		}
	})
	t.Run("rotated key under the same kid", func(t *testing.T) {
		rotated := newEd25519(t, "b-2025")
		if err := Verify(signed(t, testCard(), rotated), keysOf(t, oldKey)); !errors.Is(err, ErrBadSignature) {
			t.Fatal(err)
		}
	})
}

// TestSignDocumentCoversEveryReading checks the signatures a dual card
// carries: each reading's payload verifies with one of them.
func TestSignDocumentCoversEveryReading(t *testing.T) {
	s := newEd25519(t, "k")
	sigs, err := s.SignDocument([]byte(servedDoc))
	if err != nil {
		t.Fatal(err)
	}
	if len(sigs) != 3 {
		t.Fatalf("%d signatures, want one per distinct form (3)", len(sigs))
	}
	for _, f := range Forms {
		p, err := Payload([]byte(servedDoc), f)
		if err != nil {
			t.Fatal(err)
		}
		ok := false
		for _, sig := range sigs {
			obj, err := jose.ParseDetached(sig.Protected+".."+sig.Signature, p, allowedAlgs)
			if err == nil && obj.DetachedVerify(p, s.PublicKey().Key) == nil {
				ok = true
			}
		}
		if !ok {
			t.Errorf("no signature verifies over the %s", f)
		}
	}
	// A v1.0-only card without empty values needs one signature.
	doc, _ := a2a.Marshal(&a2a.AgentCard{Name: "n", Description: "d", Version: "1", Capabilities: a2a.AgentCapabilities{Streaming: a2a.Bool(true)},
		SupportedInterfaces: []a2a.AgentInterface{{URL: "u", ProtocolBinding: "JSONRPC", ProtocolVersion: "1.0"}},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "s", Name: "s", Description: "d", Tags: []string{"t"}}}})
	if sigs, err := s.SignDocument(doc); err != nil || len(sigs) != 1 {
		t.Fatalf("%d signatures, %v", len(sigs), err)
	}
}

// TestVerifiedCardIsTheSignedContent: keys added outside the signed
// payload (0.3 keys on a card signed in FormV1) never reach the card the
// client uses.
func TestVerifiedCardIsTheSignedContent(t *testing.T) {
	s := newEd25519(t, "k")
	base := testCard()
	base.Capabilities.ExtendedAgentCard = nil
	doc, _ := a2a.Marshal(signed(t, base, s))
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	// 0.3 keys are outside the v1.0 payload: the signature still verifies …
	m["supportsAuthenticatedExtendedCard"] = true
	m["url"] = "http://evil.example/"
	doc, _ = json.Marshal(m)
	res, err := VerifyDocument(doc, keysOf(t, s))
	if err != nil {
		t.Fatal(err)
	}
	// … but they do not reach the verified card, while a naive parse of
	// the same document would honour them.
	if res.Card.Capabilities.SupportsExtendedAgentCard() || len(res.Card.Signatures) != 1 {
		t.Fatalf("an unsigned 0.3 key changed the verified card: %+v", res.Card.Capabilities)
	}
	if naive, _ := a2a.ParseAgentCard(doc); !naive.Capabilities.SupportsExtendedAgentCard() {
		t.Fatal("test premise: the naive parse should read the 0.3 key")
	}
	// Removing a presence field changes the v1.0 payload: refused.
	delete(m["capabilities"].(map[string]any), "pushNotifications")
	doc, _ = json.Marshal(m)
	if _, err := VerifyDocument(doc, keysOf(t, s)); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("removing capabilities.pushNotifications: %v", err)
	}
}

func TestDuplicateMembersAreMalformed(t *testing.T) {
	s := newEd25519(t, "k")
	doc, _ := a2a.Marshal(signed(t, testCard(), s))
	dup := strings.Replace(string(doc), `"name":"Agent B"`, `"name":"Agent B","name":"Agent Evil"`, 1)
	if _, err := VerifyDocument([]byte(dup), keysOf(t, s)); !errors.Is(err, ErrMalformed) {
		t.Fatalf("duplicate member: %v", err)
	}
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func pemOf(t *testing.T, typ string, der []byte, err error) []byte {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func TestLoadSignerAndKeySetFromFiles(t *testing.T) {
	dir := t.TempDir()
	_, edPriv, _ := ed25519.GenerateKey(rand.Reader)
	ecPriv, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	edDER, err := x509.MarshalPKCS8PrivateKey(edPriv)
	edKeyFile := writeFile(t, dir, "ed.pem", pemOf(t, "PRIVATE KEY", edDER, err))
	ecDER, err := x509.MarshalECPrivateKey(ecPriv)
	ecKeyFile := writeFile(t, dir, "ec.pem", pemOf(t, "EC PRIVATE KEY", ecDER, err))
	edPubDER, err := x509.MarshalPKIXPublicKey(edPriv.Public())
	edPubFile := writeFile(t, dir, "ed.pub.pem", pemOf(t, "PUBLIC KEY", edPubDER, err))

	// Default kid: the thumbprint, which a PEM public key also gets.
	edSigner, err := LoadSigner(edKeyFile, "", "https://b.example/.well-known/jwks.json")
	if err != nil {
		t.Fatal(err)
	}
	ks, err := LoadKeySet(edPubFile)
	if err != nil {
		t.Fatal(err)
	}
	if got := ks.KeyIDs(); len(got) != 1 || got[0] != edSigner.KeyID() {
		t.Fatalf("PEM kid %v, signer kid %s", got, edSigner.KeyID())
	}
	card := signed(t, testCard(), edSigner)
	if err := Verify(card, ks); err != nil {
		t.Fatal(err)
	}
	if hdr, _ := parseProtected(card.Signatures[0].Protected); hdr.JKU != "https://b.example/.well-known/jwks.json" {
		t.Fatalf("jku %q", hdr.JKU)
	}

	// Explicit kids, and the signer's JWKS as a key file.
	ecSigner, err := LoadSigner(ecKeyFile, "ec-2026", "")
	if err != nil {
		t.Fatal(err)
	}
	jwks, err := ecSigner.JWKS()
	if err != nil {
		t.Fatal(err)
	}
	jwksFile := writeFile(t, dir, "jwks.json", jwks)
	ks, err = LoadKeySet("ed-2025="+edPubFile, jwksFile)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ks.KeyIDs(), ","); got != "ec-2026,ed-2025" {
		t.Fatalf("kids %s", got)
	}
	if err := Verify(signed(t, testCard(), ecSigner), ks); err != nil {
		t.Fatal(err)
	}
	// A single JWK file.
	var set struct{ Keys []json.RawMessage }
	_ = json.Unmarshal(jwks, &set)
	jwkFile := writeFile(t, dir, "one.jwk", set.Keys[0])
	if ks, err := LoadKeySet(jwkFile); err != nil || ks.KeyIDs()[0] != "ec-2026" {
		t.Fatalf("single JWK: %v %v", ks.KeyIDs(), err)
	}
}

func TestKeyFileErrorsAreClear(t *testing.T) {
	dir := t.TempDir()
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	_, edPriv, _ := ed25519.GenerateKey(rand.Reader)
	der := func(k any) []byte {
		b, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	pub := func(k crypto.PublicKey) []byte {
		b, err := x509.MarshalPKIXPublicKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	signerCases := []struct{ name, file, want string }{
		{"rsa", writeFile(t, dir, "rsa.pem", pemOf(t, "PRIVATE KEY", der(rsaKey), nil)), "RSA keys are not supported"},
		{"rsa pkcs1", writeFile(t, dir, "rsa1.pem", pemOf(t, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey), nil)), "RSA keys are not supported"},
		{"p384", writeFile(t, dir, "p384.pem", pemOf(t, "PRIVATE KEY", der(p384), nil)), "P-256"},
		{"public", writeFile(t, dir, "pub.pem", pemOf(t, "PUBLIC KEY", pub(edPriv.Public()), nil)), "needs the private key"},
		{"garbage", writeFile(t, dir, "x.pem", []byte("hello")), "no PEM private key"},
		{"missing", filepath.Join(dir, "nope.pem"), "no such file"},
	}
	for _, c := range signerCases {
		_, err := LoadSigner(c.file, "", "")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("LoadSigner %s: %v (want %q)", c.name, err, c.want)
		}
	}
	if _, err := LoadSigner(signerCasesFile(t, dir, edPriv), "", "ftp://x"); err == nil || !strings.Contains(err.Error(), "jku") {
		t.Errorf("bad jku: %v", err)
	}
	edPub := writeFile(t, dir, "ed.pub", pemOf(t, "PUBLIC KEY", pub(edPriv.Public()), nil))
	otherPub := func() string {
		_, k, _ := ed25519.GenerateKey(rand.Reader)
		return writeFile(t, dir, "other.pub", pemOf(t, "PUBLIC KEY", pub(k.Public()), nil))
	}()
	keyCases := []struct {
		name  string
		specs []string
		want  string
	}{
		{"private key", []string{writeFile(t, dir, "priv.pem", pemOf(t, "PRIVATE KEY", der(edPriv), nil))}, "private key"},
		{"rsa public", []string{writeFile(t, dir, "rsa.pub", pemOf(t, "PUBLIC KEY", pub(&rsaKey.PublicKey), nil))}, "RSA keys are not supported"},
		{"p384 public", []string{writeFile(t, dir, "p384.pub", pemOf(t, "PUBLIC KEY", pub(&p384.PublicKey), nil))}, "P-256"},
		{"kid twice", []string{"k=" + edPub, "k=" + otherPub}, "two different keys"},
		{"empty", []string{writeFile(t, dir, "empty", nil)}, "no key found"},
	}
	for _, c := range keyCases {
		_, err := LoadKeySet(c.specs...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("LoadKeySet %s: %v (want %q)", c.name, err, c.want)
		}
	}
	if ks, err := LoadKeySet("k="+edPub, "k="+edPub); err != nil || ks.Len() != 1 {
		t.Errorf("the same key twice: %v", err)
	}
}

func signerCasesFile(t *testing.T, dir string, k ed25519.PrivateKey) string {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	return writeFile(t, dir, "ok.pem", pemOf(t, "PRIVATE KEY", der, err))
}

func TestTooManySignaturesAreRefused(t *testing.T) {
	s := newEd25519(t, "k")
	card := signed(t, testCard(), s)
	for len(card.Signatures) <= MaxSignatures {
		card.Signatures = append(card.Signatures, card.Signatures[0])
	}
	if err := Verify(card, keysOf(t, s)); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "at most") {
		t.Fatalf("%d signatures: %v", len(card.Signatures), err)
	}
}
