package cardsign

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/go-jose/go-jose/v4"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// Signer signs agent cards with one private key. It is safe for
// concurrent use.
type Signer struct {
	key    crypto.Signer
	pub    crypto.PublicKey
	alg    string
	kid    string
	jku    string
	signer jose.Signer
}

// LoadSigner reads a PEM private key (PKCS#8 "PRIVATE KEY" holding an
// Ed25519 or EC P-256 key, or SEC 1 "EC PRIVATE KEY") and returns a signer
// whose signatures name kid (default: the key's RFC 7638 thumbprint) and,
// when set, jku (an absolute https or http URL of a JWK Set holding the
// public key).
func LoadSigner(keyFile, kid, jku string) (*Signer, error) {
	data, err := readKeyFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("card signing key %s: %w", keyFile, err)
	}
	key, err := ParsePrivateKey(data)
	if err != nil {
		return nil, fmt.Errorf("card signing key %s: %w", keyFile, err)
	}
	s, err := NewSigner(key, kid, jku)
	if err != nil {
		return nil, fmt.Errorf("card signing key %s: %w", keyFile, err)
	}
	return s, nil
}

// ParsePrivateKey parses the first PEM private key in data.
func ParsePrivateKey(data []byte) (crypto.Signer, error) {
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return nil, errors.New("no PEM private key found: want a PKCS#8 \"PRIVATE KEY\" block (openssl genpkey -algorithm ed25519 -out card-key.pem)")
		}
		switch block.Type {
		case "PRIVATE KEY":
			k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("PKCS#8 private key: %w", err)
			}
			return checkPrivate(k)
		case "EC PRIVATE KEY":
			k, err := x509.ParseECPrivateKey(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("EC private key: %w", err)
			}
			return checkPrivate(k)
		case "RSA PRIVATE KEY":
			return nil, errors.New("RSA keys are not supported for card signing; use Ed25519 (openssl genpkey -algorithm ed25519) or EC P-256 (openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256)")
		case "ENCRYPTED PRIVATE KEY":
			return nil, errors.New("the private key is encrypted; store it unencrypted with file permissions 0600 (openssl pkey -in enc.pem -out card-key.pem)")
		case "PUBLIC KEY":
			return nil, errors.New("this is a public key; card signing needs the private key (the public key goes to the peers' card_keys)")
		}
	}
}

func checkPrivate(k any) (crypto.Signer, error) {
	switch key := k.(type) {
	case ed25519.PrivateKey:
		return key, nil
	case *ecdsa.PrivateKey:
		if key.Curve != elliptic.P256() {
			return nil, fmt.Errorf("EC keys must use curve P-256 (ES256), this one uses %s", key.Curve.Params().Name)
		}
		return key, nil
	}
	return nil, fmt.Errorf("%s keys are not supported for card signing; use Ed25519 or EC P-256", keyTypeName(k))
}

// NewSigner returns a signer for key (ed25519.PrivateKey or a P-256
// *ecdsa.PrivateKey).
func NewSigner(key crypto.Signer, kid, jku string) (*Signer, error) {
	if _, err := checkPrivate(key); err != nil {
		return nil, err
	}
	pub := key.Public()
	alg, err := algorithmFor(pub)
	if err != nil {
		return nil, err
	}
	kid = strings.TrimSpace(kid)
	if kid == "" {
		if kid, err = Thumbprint(pub); err != nil {
			return nil, err
		}
	}
	opts := (&jose.SignerOptions{}).WithType("JOSE")
	if jku = strings.TrimSpace(jku); jku != "" {
		u, err := url.Parse(jku)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, fmt.Errorf("jku %q must be an absolute https URL of a JWK Set", jku)
		}
		opts = opts.WithHeader("jku", jku)
	}
	js, err := jose.NewSigner(jose.SigningKey{
		Algorithm: jose.SignatureAlgorithm(alg),
		Key:       jose.JSONWebKey{Key: key, KeyID: kid, Algorithm: alg},
	}, opts)
	if err != nil {
		return nil, fmt.Errorf("JWS signer: %w", err)
	}
	return &Signer{key: key, pub: pub, alg: alg, kid: kid, jku: jku, signer: js}, nil
}

// KeyID is the kid the signatures carry.
func (s *Signer) KeyID() string { return s.kid }

// Algorithm is the JWS alg the signatures carry: EdDSA or ES256.
func (s *Signer) Algorithm() string { return s.alg }

// JKU is the jku the signatures carry ("" when none).
func (s *Signer) JKU() string { return s.jku }

// PublicKey is the public half of the signing key, with its kid.
func (s *Signer) PublicKey() PublicKey { return PublicKey{KeyID: s.kid, Key: s.pub} }

// JWKS is the JWK Set holding the public key, to serve at the jku URL or
// to hand to peers for their card_keys.
func (s *Signer) JWKS() ([]byte, error) { return JWKS(s.PublicKey()) }

// Sign returns a signature over the card's FormV1 payload (the v1.0
// projection; any signatures the card already has are ignored).
func (s *Signer) Sign(card *a2a.AgentCard) (a2a.AgentCardSignature, error) {
	p, err := CardPayload(card, FormV1)
	if err != nil {
		return a2a.AgentCardSignature{}, err
	}
	return s.signPayload(p)
}

// SignDocument returns one signature per distinct payload form of doc, the
// card document exactly as it will be served (its signatures, if any, are
// ignored): FormV1 first, then FormPruned and FormServed where they differ.
// A form that is no usable card is not signed (the v1.0 projection of a
// 0.3 card has no endpoint). Attach them all, so that verifiers of every
// reading accept the card.
func (s *Signer) SignDocument(doc []byte) ([]a2a.AgentCardSignature, error) {
	obj, err := decodeObject(doc)
	if err != nil {
		return nil, err
	}
	forms, err := payloads(obj)
	if err != nil {
		return nil, err
	}
	out := make([]a2a.AgentCardSignature, 0, len(forms))
	for _, f := range forms {
		if _, err := a2a.ParseAgentCard(f.payload); err != nil && f.form != FormServed {
			continue
		}
		sig, err := s.signPayload(f.payload)
		if err != nil {
			return nil, err
		}
		out = append(out, sig)
	}
	return out, nil
}

// signPayload makes a detached compact JWS over payload and splits it
// into the card signature's protected header and signature.
func (s *Signer) signPayload(payload []byte) (a2a.AgentCardSignature, error) {
	obj, err := s.signer.Sign(payload)
	if err != nil {
		return a2a.AgentCardSignature{}, fmt.Errorf("signing the card: %w", err)
	}
	compact, err := obj.DetachedCompactSerialize()
	if err != nil {
		return a2a.AgentCardSignature{}, fmt.Errorf("signing the card: %w", err)
	}
	parts := strings.Split(compact, ".")
	if len(parts) != 3 || parts[1] != "" {
		return a2a.AgentCardSignature{}, errors.New("signing the card: unexpected JWS serialization")
	}
	return a2a.AgentCardSignature{Protected: parts[0], Signature: parts[2]}, nil
}
