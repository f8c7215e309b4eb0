// Package cardsign_test tests signed Agent Cards end to end through the
// real binary: Bob's host runs the A2A plugin with card_signing_key, so
// Bob's card carries JWS signatures; Alice's host configures Bob as a
// signed peer (signed: true, card_keys) several times over, once per key
// configuration, and her a2a_discover and a2a_call tools accept or refuse
// Bob's card accordingly — also after Bob restarts with a rotated key.
package cardsign_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/cardsign"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
	"github.com/a2a-plugin/a2a-plugin/testharness"
	"github.com/a2a-plugin/a2a-plugin/testharness/e2e/internal/e2etest"
)

// callTimeout bounds every tool call: a guard against hangs, never an
// assertion on how long something took.
const callTimeout = 60 * time.Second

// keyPair is a signing key on disk: the private PEM for Bob, the public
// PEM for Alice, and the kid Bob's signatures carry by default (the key's
// RFC 7638 thumbprint, which a PEM public key also gets).
type keyPair struct {
	private, public, kid string
}

func newKeyPair(t *testing.T, dir, name string, priv crypto.Signer) keyPair {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	kp := keyPair{private: filepath.Join(dir, name+".pem"), public: filepath.Join(dir, name+".pub.pem")}
	if err := os.WriteFile(kp.private, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kp.public, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o644); err != nil {
		t.Fatal(err)
	}
	if kp.kid, err = cardsign.Thumbprint(priv.Public()); err != nil {
		t.Fatal(err)
	}
	return kp
}

func ed25519Key(t *testing.T) crypto.Signer {
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func p256Key(t *testing.T) crypto.Signer {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// freePort picks a loopback port for Bob, so that his URL survives a
// restart of his plugin.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func callTool(t *testing.T, h *testharness.Host, tool string, args map[string]any) *pb.ToolResult {
	t.Helper()
	res, _ := e2etest.CallTool(t, h, tool, args, callTimeout)
	return res
}

// get fetches a URL from Bob.
func get(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return b
}

// TestSignedCardsEndToEnd: Bob signs his card with an Ed25519 key; Alice
// accepts it with Bob's public key (as PEM, or as the JWK Set Bob serves)
// and refuses it with a wrong key. Bob then rotates to an ES256 key and
// restarts: Alice's peer that knows both keys still accepts Bob, the one
// that knows only the old key refuses him, naming the new kid.
func TestSignedCardsEndToEnd(t *testing.T) {
	dir := t.TempDir()
	oldKey := newKeyPair(t, dir, "bob-2025", ed25519Key(t))
	newKey := newKeyPair(t, dir, "bob-2026", p256Key(t))
	wrongKey := newKeyPair(t, dir, "mallory", ed25519Key(t))

	// Bob signs with a key file that the rotation later overwrites.
	bobKeyFile := filepath.Join(dir, "bob-card-key.pem")
	copyFile(t, oldKey.private, bobKeyFile)
	port := freePort(t)
	bob := testharness.Start(t, testharness.Options{
		PluginConfig: map[string]any{"port": port, "store": "memory", "rate_limit": 0, "card_signing_key": bobKeyFile},
	})
	bobURL := bob.Endpoint(testharness.A2APluginName)
	if want := "http://127.0.0.1:" + strconv.Itoa(port); !strings.HasPrefix(bobURL, want) {
		t.Fatalf("Bob serves at %s, want %s", bobURL, want)
	}

	// Bob's card is signed, and his public key is served as a JWK Set.
	card := get(t, strings.TrimRight(bobURL, "/")+"/.well-known/agent-card.json")
	if !strings.Contains(string(card), `"signatures":[{"protected":`) {
		t.Fatalf("Bob's card is not signed:\n%s", card)
	}
	jwksFile := filepath.Join(dir, "bob.jwks.json")
	if err := os.WriteFile(jwksFile, get(t, strings.TrimRight(bobURL, "/")+"/.well-known/jwks.json"), 0o644); err != nil {
		t.Fatal(err)
	}

	alice := testharness.Start(t, testharness.Options{
		PluginConfig: map[string]any{"port": 0, "store": "memory", "a2a_agents": []map[string]any{
			{"name": "bob", "url": bobURL, "signed": true, "card_keys": []string{oldKey.public, newKey.public}},
			{"name": "bob-jwks", "url": bobURL, "signed": true, "card_keys": []string{jwksFile}},
			{"name": "bob-oldkey", "url": bobURL, "signed": true, "card_keys": []string{oldKey.public}},
			{"name": "bob-wrongkey", "url": bobURL, "signed": true, "card_keys": []string{oldKey.kid + "=" + wrongKey.public}},
		}},
	})

	t.Run("discover and call a signed peer", func(t *testing.T) {
		for _, peer := range []string{"bob", "bob-jwks", "bob-oldkey"} {
			r := callTool(t, alice, "a2a_discover", map[string]any{"url": peer})
			e2etest.MustOK(t, r, "Card signature: signed and verified with the configured key kid="+oldKey.kid+" (EdDSA)", `"signature_verified":true`)
		}
		r := callTool(t, alice, "a2a_call", map[string]any{"agent": "bob", "message": "signed hello 1"})
		e2etest.MustOK(t, r, "signed hello 1")
	})

	t.Run("a wrong key is refused", func(t *testing.T) {
		r := callTool(t, alice, "a2a_discover", map[string]any{"url": "bob-wrongkey"})
		e2etest.MustErr(t, r, `peer "bob-wrongkey" is configured as signed, but the card's signature does not verify with key kid=`+oldKey.kid,
			"the card was modified after signing or signed by another key")
		t.Logf("the model reads:\n%s", r.GetContent())
		before := len(bob.Recorder().CallsOf(testharness.KindHandleMessage))
		r = callTool(t, alice, "a2a_call", map[string]any{"agent": "bob-wrongkey", "message": "must not arrive"})
		e2etest.MustErr(t, r, "does not verify with key kid="+oldKey.kid)
		if after := len(bob.Recorder().CallsOf(testharness.KindHandleMessage)); after != before {
			t.Fatalf("a refused call reached Bob's host (%d → %d messages)", before, after)
		}
	})

	t.Run("key rotation", func(t *testing.T) {
		copyFile(t, newKey.private, bobKeyFile)
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		if err := bob.Restart(ctx, testharness.A2APluginName); err != nil {
			t.Fatal(err)
		}
		if got := bob.Endpoint(testharness.A2APluginName); got != bobURL {
			t.Fatalf("Bob moved from %s to %s", bobURL, got)
		}
		r := callTool(t, alice, "a2a_discover", map[string]any{"url": "bob", "refresh": true})
		e2etest.MustOK(t, r, "Card signature: signed and verified with the configured key kid="+newKey.kid+" (ES256)")
		t.Logf("the model reads:\n%s", r.GetContent())
		r = callTool(t, alice, "a2a_call", map[string]any{"agent": "bob", "message": "signed hello 2"})
		e2etest.MustOK(t, r, "signed hello 2")

		r = callTool(t, alice, "a2a_discover", map[string]any{"url": "bob-oldkey", "refresh": true})
		e2etest.MustErr(t, r, `peer "bob-oldkey" is configured as signed, but no signature is by a configured key: the card is signed with kid=`+newKey.kid,
			"the configured keys are kid="+oldKey.kid, "if the peer rotated its signing key")
		t.Logf("the model reads:\n%s", r.GetContent())
		// The JWK Set saved before the rotation holds only the old key.
		r = callTool(t, alice, "a2a_call", map[string]any{"agent": "bob-jwks", "message": "must not arrive"})
		e2etest.MustErr(t, r, "kid="+newKey.kid)
	})
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
