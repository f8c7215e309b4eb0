package server

import (
	"crypto/sha256"
	"sync"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/a2a/a2av03"
)

// CardSigner signs the agent card (*cardsign.Signer implements it). The
// card is built at request time from the host's live tool registry, so it
// is signed then; signatures are cached by the card's content.
type CardSigner interface {
	// Sign returns a signature over the card's v1.0 content.
	Sign(card *a2a.AgentCard) (a2a.AgentCardSignature, error)
}

// DocumentSigner is optionally implemented by a CardSigner that signs the
// card document as served, possibly with several signatures (one per
// distinct reading of the specification's signing input; see package
// cardsign).
type DocumentSigner interface {
	SignDocument(doc []byte) ([]a2a.AgentCardSignature, error)
}

// maxSignedCards bounds the signature cache; cards differ only when the
// host's tools, the Host header or the configuration do.
const maxSignedCards = 64

// cardSignatures caches signatures by the SHA-256 of the unsigned card
// document, so that repeated requests neither re-sign nor (with ES256,
// whose signatures are randomised) change the body and its ETag.
type cardSignatures struct {
	mu    sync.Mutex
	cache map[[32]byte][]a2a.AgentCardSignature
}

// signCard attaches the configured signer's signatures to card, computed
// over its v1.0 encoding (the extended card). Without a signer it does
// nothing.
func (h *cardHandler) signCard(card *a2a.AgentCard) {
	if h.opts.Card.Signer == nil || card == nil {
		return
	}
	card.Signatures = nil
	doc, err := a2a.Marshal(card)
	if err != nil {
		h.log.Error("encoding the agent card for signing failed; it is served unsigned", "error", err)
		return
	}
	card.Signatures = h.signatures(card, doc)
}

// signatures returns the signatures of doc, the card document as it will
// be served without signatures (card is what it encodes, for a signer
// that signs cards rather than documents). They are cached by the
// document's content. A signing failure is logged and the card goes out
// unsigned (peers that require a signature then refuse it with a clear
// error).
func (h *cardHandler) signatures(card *a2a.AgentCard, doc []byte) []a2a.AgentCardSignature {
	signer := h.opts.Card.Signer
	key := sha256.Sum256(doc)
	c := &h.state.sigs
	c.mu.Lock()
	sigs, ok := c.cache[key]
	c.mu.Unlock()
	if !ok {
		var err error
		if ds, isDoc := signer.(DocumentSigner); isDoc {
			sigs, err = ds.SignDocument(doc)
		} else {
			var sig a2a.AgentCardSignature
			sig, err = signer.Sign(card)
			sigs = []a2a.AgentCardSignature{sig}
		}
		if err != nil {
			h.log.Error("signing the agent card failed; it is served unsigned", "error", err)
			return nil
		}
		c.mu.Lock()
		if c.cache == nil || len(c.cache) >= maxSignedCards {
			c.cache = make(map[[32]byte][]a2a.AgentCardSignature)
		}
		c.cache[key] = sigs
		c.mu.Unlock()
	}
	return append([]a2a.AgentCardSignature(nil), sigs...)
}

// encodeServedCard encodes the public card as served — the v1.0 card, or
// with v03 the 0.3 card (a2av03.FromCard) — signed when a signer is
// configured: over that very document, so each document verifies on its
// own.
func (h *cardHandler) encodeServedCard(card *a2a.AgentCard, v03 bool) ([]byte, error) {
	encode := func() ([]byte, error) {
		if v03 {
			return a2a.Marshal(a2av03.FromCard(card))
		}
		return a2a.Marshal(card)
	}
	card.Signatures = nil
	body, err := encode()
	if err != nil || h.opts.Card.Signer == nil {
		return body, err
	}
	if card.Signatures = h.signatures(card, body); len(card.Signatures) == 0 {
		return body, nil
	}
	return encode()
}
