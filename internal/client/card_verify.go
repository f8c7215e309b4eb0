package client

import (
	"errors"
	"fmt"

	"github.com/a2a-plugin/a2a-plugin/internal/cardsign"
)

// checkSigned returns info as the peer may use it. For a peer without
// CardKeys that is info itself. For a "signed" peer the card body must
// verify with the peer's keys; the card and interface are then taken from
// the signed content alone. Outcomes are memoised per key set on the cache
// entry until a new body is downloaded, so a fresh or revalidated (304)
// card is not checked again. Called with e.mu held.
func (c *Client) checkSigned(p *Peer, e *cardEntry, info *CardInfo) (*CardInfo, error) {
	ks := p.ep.CardKeys
	if ks == nil {
		return info, nil
	}
	v, ok := e.verified[ks]
	if !ok {
		v = verifyBody(p, e.body, info.CardURL, ks)
		if e.verified == nil {
			e.verified = make(map[*cardsign.KeySet]*verifiedCard)
		}
		e.verified[ks] = v
		if v.err == nil {
			c.log.Debug("agent card signature verified", "peer", p.name(), "kid", v.ver.KeyID, "alg", v.ver.Algorithm, "form", v.ver.Form)
		} else {
			c.log.Warn("agent card refused", "peer", p.name(), "error", v.err)
		}
	}
	if v.err != nil {
		return nil, v.err
	}
	out := *info
	out.Card, out.Interface = v.card, v.iface
	ver := v.ver
	out.Verified = &ver
	return &out, nil
}

// verifyBody checks one card body with one key set.
func verifyBody(p *Peer, body []byte, cardURL string, ks *cardsign.KeySet) *verifiedCard {
	fail := func(kind Kind, err error) *verifiedCard {
		return &verifiedCard{err: &Error{Kind: kind, Peer: p.name(), URL: cardURL, Op: "verify agent card signature", Err: err}}
	}
	if body == nil {
		return fail(ErrUntrustedCard, fmt.Errorf("peer %q is configured as signed, but no card body is at hand to verify; refresh the card", p.name()))
	}
	res, err := cardsign.VerifyDocument(body, ks)
	if err != nil {
		return fail(ErrUntrustedCard, fmt.Errorf("peer %q is configured as signed, but %w", p.name(), err))
	}
	in, err := usableInterface(res.Card, cardURL)
	if err != nil {
		return fail(ErrBadCard, fmt.Errorf("the signed card: %w", err))
	}
	return &verifiedCard{card: res.Card, iface: in,
		ver: Verification{KeyID: res.KeyID, Algorithm: res.Algorithm, Form: res.Form.String()}}
}

// untrustedCardHint says what to do about a refused card.
func untrustedCardHint(err error) string {
	switch {
	case errors.Is(err, cardsign.ErrUnsigned):
		return "the peer must sign its card (card_signing_key on an a2a-plugin peer); until then it is not used — or drop signed/card_keys for it if an unsigned card is acceptable"
	case errors.Is(err, cardsign.ErrUnknownKey):
		return "if the peer rotated its signing key, add its new public key to the peer's card_keys (or card_trusted_keys) after checking it with the peer's operator"
	case errors.Is(err, cardsign.ErrBadSignature):
		return "do not use this peer until its operator confirms the card: it may have been tampered with on the way or on the server"
	}
	return "the peer is not used until its card verifies with a configured key"
}
