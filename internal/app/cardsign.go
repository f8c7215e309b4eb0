package app

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/hashicorp/go-hclog"

	"github.com/a2a-plugin/a2a-plugin/internal/cardsign"
	"github.com/a2a-plugin/a2a-plugin/internal/config"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/server"
)

// JWKSPath is where the public card signing key is served as a JWK Set
// when the card is signed: what an operator hands to peers for their
// card_keys, and a target for card_signing_jku. Clients of this plugin
// never fetch keys from a card's jku: trust comes from configuration.
const JWKSPath = "/.well-known/jwks.json"

// cardSigning loads the card signing key when one is configured and
// returns the signer with the route serving its public key.
func cardSigning(cfg *config.Config, log hclog.Logger) (server.CardSigner, []server.ExtraRoute, error) {
	if cfg.CardSigningKey == "" {
		return nil, nil, nil
	}
	s, err := cardsign.LoadSigner(cfg.CardSigningKey, cfg.CardSigningKID, cfg.CardSigningJKU)
	if err != nil {
		return nil, nil, fmt.Errorf("card_signing_key (A2A_CARD_SIGNING_KEY): %w", err)
	}
	jwks, err := s.JWKS()
	if err != nil {
		return nil, nil, fmt.Errorf("card_signing_key (A2A_CARD_SIGNING_KEY): %w", err)
	}
	log.Info("the agent card is signed", "kid", s.KeyID(), "alg", s.Algorithm(), "jwks", JWKSPath)
	serve := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/jwk-set+json")
		h.Set("Cache-Control", "public, max-age=300")
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Content-Length", strconv.Itoa(len(jwks)))
		_, _ = w.Write(jwks)
	})
	// The public key is public: every caller may read it.
	route := server.ExtraRoute{Pattern: "GET " + JWKSPath, Handler: serve, Allow: func(security.Identity) bool { return true }}
	return s, []server.ExtraRoute{route}, nil
}
