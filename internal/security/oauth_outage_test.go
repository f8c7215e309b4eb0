package security_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

// TestOAuthKeySetOutageSaysTryAgainLater: the issuer is discovered, but
// its JWK Set cannot be fetched — the endpoint fails, or hangs. A valid
// token is refused saying the keys could not be fetched and to try again
// later (not that its signature does not verify, which points the client
// at its own token), and without waiting for the fetch's own timeout.
func TestOAuthKeySetOutageSaysTryAgainLater(t *testing.T) {
	for _, tc := range []struct {
		name string
		jwks http.HandlerFunc
	}{
		{"the JWK Set endpoint fails", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		}},
		{"the JWK Set endpoint hangs", func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mux := http.NewServeMux()
			srv := httptest.NewServer(mux)
			defer srv.Close()
			mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_ = json.NewEncoder(w).Encode(map[string]any{
					"issuer": srv.URL, "jwks_uri": srv.URL + "/jwks",
					"authorization_endpoint": srv.URL + "/authorize", "token_endpoint": srv.URL + "/token",
				})
			})
			mux.HandleFunc("/jwks", tc.jwks)
			v, err := security.NewOAuthVerifier(security.OAuthConfig{AllowLoopbackHTTP: true,
				Issuers: []security.OAuthIssuer{{Name: "idp", URL: srv.URL, Audience: agentAudience}}})
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			signer, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithHeader("kid", "k1"))
			tok, _ := jwt.Signed(signer).Claims(jwt.Claims{Issuer: srv.URL, Subject: "x", Audience: jwt.Audience{agentAudience},
				Expiry: jwt.NewNumericDate(time.Now().Add(time.Hour))}).Serialize()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			start := time.Now()
			_, err = v.Authenticate(ctx, tok)
			took := time.Since(start)
			if err == nil || !strings.Contains(err.Error(), "could not be fetched; try again later") {
				t.Fatalf("key set outage: %v, want \"could not be fetched; try again later\"", err)
			}
			if took >= 10*time.Second {
				t.Errorf("the refusal waited %v, the fetch's own timeout", took)
			}
		})
	}
}
