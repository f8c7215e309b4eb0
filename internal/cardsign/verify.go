package cardsign

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/go-jose/go-jose/v4"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// Why a card failed verification; test with errors.Is.
var (
	// ErrUnsigned: the card carries no signature.
	ErrUnsigned = errors.New("card is unsigned")
	// ErrUnknownKey: no signature names (by kid) a configured key.
	ErrUnknownKey = errors.New("card is signed by an unknown key")
	// ErrBadSignature: a signature by a configured key does not verify: the
	// card was modified after signing, or signed by another key under the
	// same kid.
	ErrBadSignature = errors.New("card signature does not verify")
	// ErrUnsupportedAlg: the signatures use algorithms other than EdDSA
	// and ES256.
	ErrUnsupportedAlg = errors.New("card signature algorithm is not supported")
	// ErrMalformed: the card or a signature cannot be read.
	ErrMalformed = errors.New("card signature is malformed")
)

// MaxSignatures bounds the signatures a card may carry: each costs up to
// one verification per payload form, and the card comes from the network.
const MaxSignatures = 16

// allowedAlgs are the JWS algorithms accepted; "none", HMAC and RSA never
// are.
var allowedAlgs = []jose.SignatureAlgorithm{jose.EdDSA, jose.ES256}

// VerifyError says why a card did not verify. errors.Is matches its
// Reason (ErrUnsigned, ErrUnknownKey, …).
type VerifyError struct {
	// Reason is one of the Err* values above.
	Reason error
	// KeyID is the kid concerned, when one is.
	KeyID string
	// Detail is the full message.
	Detail string
}

func (e *VerifyError) Error() string { return e.Detail }

// Unwrap returns the Reason.
func (e *VerifyError) Unwrap() error { return e.Reason }

// Result is what verified.
type Result struct {
	// KeyID and Algorithm are those of the signature that verified.
	KeyID, Algorithm string
	// Form is the payload form that verified.
	Form Form
	// Payload is the canonical payload that verified.
	Payload []byte
	// Card is parsed from Payload alone (never from unsigned parts of the
	// document), with the document's signatures attached.
	Card *a2a.AgentCard
}

// Verify checks the signatures of a card as this package's a2a model
// encodes it. Prefer VerifyDocument on the document as fetched: parsing
// normalises some values, which a signer's payload may not share.
func Verify(card *a2a.AgentCard, keys *KeySet) error {
	if card == nil {
		return &VerifyError{Reason: ErrMalformed, Detail: "no card"}
	}
	doc, err := a2a.Marshal(card)
	if err != nil {
		return &VerifyError{Reason: ErrMalformed, Detail: "encoding the card: " + err.Error()}
	}
	_, err = VerifyDocument(doc, keys)
	return err
}

// VerifyDocument checks that at least one signature of the card document
// doc (as fetched) names a key of keys by kid, uses an accepted algorithm
// matching that key, and verifies over one of the card's payload forms.
func VerifyDocument(doc []byte, keys *KeySet) (*Result, error) {
	obj, err := decodeObject(doc)
	if err != nil {
		return nil, &VerifyError{Reason: ErrMalformed, Detail: err.Error()}
	}
	sigs, err := signaturesOf(obj)
	if err != nil {
		return nil, &VerifyError{Reason: ErrMalformed, Detail: err.Error()}
	}
	if len(sigs) == 0 {
		return nil, &VerifyError{Reason: ErrUnsigned, Detail: "the card has no signature"}
	}
	if len(sigs) > MaxSignatures {
		return nil, &VerifyError{Reason: ErrMalformed, Detail: fmt.Sprintf("the card carries %d signatures; at most %d are checked, so it is refused rather than partly checked", len(sigs), MaxSignatures)}
	}
	if keys.Len() == 0 {
		return nil, &VerifyError{Reason: ErrUnknownKey, Detail: "no card keys are configured to verify the card with"}
	}
	var (
		forms                []formPayload
		formsErr             error
		bad, unsupported     *VerifyError
		malformed, unusable  *VerifyError
		unknownKids, badKids []string
	)
	for i, sig := range sigs {
		hdr, err := parseProtected(sig.Protected)
		if err != nil {
			malformed = &VerifyError{Reason: ErrMalformed, Detail: fmt.Sprintf("signature %d: %v", i+1, err)}
			continue
		}
		if !algAllowed(hdr.Alg) {
			unsupported = &VerifyError{Reason: ErrUnsupportedAlg, KeyID: hdr.Kid,
				Detail: fmt.Sprintf("the card's signature uses alg=%s; only EdDSA and ES256 are accepted", quoteEmpty(hdr.Alg))}
			continue
		}
		key, ok := keys.key(hdr.Kid)
		if !ok {
			unknownKids = append(unknownKids, "kid="+quoteEmpty(hdr.Kid))
			continue
		}
		if want, _ := algorithmFor(key); want != hdr.Alg {
			badKids = append(badKids, hdr.Kid)
			bad = &VerifyError{Reason: ErrBadSignature, KeyID: hdr.Kid,
				Detail: fmt.Sprintf("the signature with kid=%s claims alg=%s, but the configured key kid=%s is an %s key: the card was signed by another key", hdr.Kid, hdr.Alg, hdr.Kid, want)}
			continue
		}
		if forms == nil && formsErr == nil {
			forms, formsErr = verifyPayloads(obj)
		}
		if formsErr != nil {
			return nil, &VerifyError{Reason: ErrMalformed, Detail: formsErr.Error()}
		}
		compact := sig.Protected + ".." + sig.Signature
		parsed := true
		for _, f := range forms {
			jws, err := jose.ParseDetached(compact, f.payload, allowedAlgs)
			if err != nil {
				malformed = &VerifyError{Reason: ErrMalformed, KeyID: hdr.Kid, Detail: fmt.Sprintf("signature %d (kid=%s): %v", i+1, hdr.Kid, err)}
				parsed = false
				break
			}
			if jws.DetachedVerify(f.payload, key) == nil {
				card, err := a2a.ParseAgentCard(f.payload)
				if err != nil {
					// Signed, but this reading is no usable card (the
					// v1.0 projection of a 0.3 card has no endpoint):
					// another form or signature may be.
					unusable = &VerifyError{Reason: ErrMalformed, KeyID: hdr.Kid, Detail: "the signed card is not a usable agent card: " + err.Error()}
					continue
				}
				card.Signatures = sigs
				return &Result{KeyID: hdr.Kid, Algorithm: hdr.Alg, Form: f.form, Payload: f.payload, Card: card}, nil
			}
		}
		if parsed && unusable == nil {
			badKids = append(badKids, hdr.Kid)
		}
	}
	switch {
	case unusable != nil:
		return nil, unusable
	case len(badKids) > 0:
		if bad != nil && len(badKids) == 1 {
			return nil, bad
		}
		kid := badKids[0]
		return nil, &VerifyError{Reason: ErrBadSignature, KeyID: kid,
			Detail: fmt.Sprintf("the card's signature does not verify with key kid=%s: the card was modified after signing or signed by another key", strings.Join(dedupe(badKids), ", kid="))}
	case unsupported != nil:
		return nil, unsupported
	case malformed != nil:
		return nil, malformed
	}
	return nil, &VerifyError{Reason: ErrUnknownKey, KeyID: strings.TrimPrefix(firstOr(unknownKids), "kid="),
		Detail: fmt.Sprintf("no signature is by a configured key: the card is signed with %s; the configured keys are kid=%s",
			strings.Join(dedupe(unknownKids), ", "), strings.Join(keys.KeyIDs(), ", kid="))}
}

// verifyPayloads is payloads for verification: a form that cannot be
// computed (say a field given under two names, which FormV1 refuses) is
// skipped as long as another one can.
func verifyPayloads(obj map[string]any) ([]formPayload, error) {
	var out []formPayload
	var firstErr error
	for _, f := range Forms {
		p, err := payloadOf(obj, f)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		dup := false
		for _, q := range out {
			if string(q.payload) == string(p) {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, formPayload{form: f, payload: p})
		}
	}
	if len(out) == 0 {
		return nil, firstErr
	}
	return out, nil
}

// protectedHeader is what verification reads from a JWS protected header.
type protectedHeader struct {
	Alg string `json:"alg"`
	Kid string `json:"kid"`
	Typ string `json:"typ"`
	JKU string `json:"jku"`
}

// parseProtected decodes a base64url JWS protected header.
func parseProtected(p string) (protectedHeader, error) {
	var h protectedHeader
	if p == "" {
		return h, errors.New("the protected header is empty")
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(p, "="))
	if err != nil {
		return h, fmt.Errorf("the protected header is not base64url: %w", err)
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return h, fmt.Errorf("the protected header is not a JSON object with string alg and kid: %w", err)
	}
	if h.Alg == "" {
		return h, errors.New("the protected header has no alg")
	}
	return h, nil
}

// signaturesOf reads the document's signatures.
func signaturesOf(obj map[string]any) ([]a2a.AgentCardSignature, error) {
	v, ok := obj[signaturesKey]
	if !ok || v == nil {
		return nil, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var sigs []a2a.AgentCardSignature
	if err := json.Unmarshal(raw, &sigs); err != nil {
		return nil, fmt.Errorf("the card's signatures are not a list of {protected, signature}: %w", err)
	}
	return sigs, nil
}

func algAllowed(alg string) bool {
	for _, a := range allowedAlgs {
		if string(a) == alg {
			return true
		}
	}
	return false
}

func quoteEmpty(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

func firstOr(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func dedupe(s []string) []string {
	var out []string
	for _, v := range s {
		found := false
		for _, w := range out {
			if v == w {
				found = true
				break
			}
		}
		if !found {
			out = append(out, v)
		}
	}
	return out
}
