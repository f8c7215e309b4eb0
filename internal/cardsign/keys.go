package cardsign

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/go-jose/go-jose/v4"
)

// Algorithms accepted for card signatures.
const (
	AlgEdDSA = string(jose.EdDSA)
	AlgES256 = string(jose.ES256)
)

// maxKeyFileBytes bounds a key file.
const maxKeyFileBytes = 1 << 20

// KeySet maps key ids to the public keys a client trusts for card
// signatures. The zero value is an empty set; a nil *KeySet is empty too.
type KeySet struct {
	keys map[string]crypto.PublicKey
	srcs map[string]string // kid → where the key came from, for messages
}

// NewKeySet returns an empty key set.
func NewKeySet() *KeySet { return &KeySet{} }

// Add trusts key under kid. key must be an Ed25519 or ECDSA P-256 public
// key. Adding the same key twice is harmless; a kid naming two different
// keys is an error.
func (ks *KeySet) Add(kid string, key crypto.PublicKey, source string) error {
	if kid == "" {
		return errors.New("a card key needs a key id (kid)")
	}
	if _, err := algorithmFor(key); err != nil {
		return err
	}
	if ks.keys == nil {
		ks.keys = map[string]crypto.PublicKey{}
		ks.srcs = map[string]string{}
	}
	if old, ok := ks.keys[kid]; ok {
		if sameKey(old, key) {
			return nil
		}
		return fmt.Errorf("kid %q names two different keys (%s and %s); give each key its own kid", kid, ks.srcs[kid], source)
	}
	ks.keys[kid] = key
	ks.srcs[kid] = source
	return nil
}

// Merge returns a new set holding the keys of ks and others.
func (ks *KeySet) Merge(others ...*KeySet) (*KeySet, error) {
	out := NewKeySet()
	for _, s := range append([]*KeySet{ks}, others...) {
		if s == nil {
			continue
		}
		for _, kid := range s.KeyIDs() {
			if err := out.Add(kid, s.keys[kid], s.srcs[kid]); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// Len is the number of keys.
func (ks *KeySet) Len() int {
	if ks == nil {
		return 0
	}
	return len(ks.keys)
}

// KeyIDs lists the key ids, sorted.
func (ks *KeySet) KeyIDs() []string {
	if ks == nil {
		return nil
	}
	out := make([]string, 0, len(ks.keys))
	for k := range ks.keys {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// key returns the key named kid.
func (ks *KeySet) key(kid string) (crypto.PublicKey, bool) {
	if ks == nil {
		return nil, false
	}
	k, ok := ks.keys[kid]
	return k, ok
}

// LoadKeySet reads public keys from files. Each spec is a path, or
// "KID=PATH" to name the key in a PEM file (or the only key of a JWK file)
// explicitly. A file may hold PEM "PUBLIC KEY" blocks (PKIX: Ed25519 or
// EC P-256), a JWK or a JWK Set (JSON). Keys without a kid are named by
// their RFC 7638 thumbprint.
func LoadKeySet(specs ...string) (*KeySet, error) {
	ks := NewKeySet()
	for _, spec := range specs {
		kid, path := splitSpec(spec)
		if path == "" {
			return nil, fmt.Errorf("card key %q: no file given", spec)
		}
		data, err := readKeyFile(path)
		if err != nil {
			return nil, fmt.Errorf("card key %s: %w", path, err)
		}
		keys, err := ParsePublicKeys(data)
		if err != nil {
			return nil, fmt.Errorf("card key %s: %w", path, err)
		}
		if kid != "" && len(keys) != 1 {
			return nil, fmt.Errorf("card key %q: an explicit kid needs a file with exactly one key, %s holds %d", spec, path, len(keys))
		}
		for _, k := range keys {
			id := k.KeyID
			if kid != "" {
				id = kid
			}
			if err := ks.Add(id, k.Key, path); err != nil {
				return nil, fmt.Errorf("card key %s: %w", path, err)
			}
		}
	}
	return ks, nil
}

// splitSpec splits "KID=PATH" (a kid has no path separator).
func splitSpec(spec string) (kid, path string) {
	spec = strings.TrimSpace(spec)
	if k, p, ok := strings.Cut(spec, "="); ok && k != "" && !strings.ContainsAny(k, `/\`) {
		return strings.TrimSpace(k), strings.TrimSpace(p)
	}
	return "", spec
}

func readKeyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxKeyFileBytes {
		return nil, fmt.Errorf("larger than %d bytes: not a key file", maxKeyFileBytes)
	}
	return data, nil
}

// PublicKey is one parsed public key and its key id.
type PublicKey struct {
	KeyID string
	Key   crypto.PublicKey
}

// ParsePublicKeys parses PEM "PUBLIC KEY" blocks, a JWK or a JWK Set.
// Private keys are refused: a trust configuration must hold public keys
// only.
func ParsePublicKeys(data []byte) ([]PublicKey, error) {
	trimmed := bytes.TrimSpace(data)
	if bytes.HasPrefix(trimmed, []byte("{")) {
		return parseJWKs(trimmed)
	}
	var out []PublicKey
	rest := data
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		switch block.Type {
		case "PUBLIC KEY":
			pub, err := x509.ParsePKIXPublicKey(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("PEM public key: %w", err)
			}
			kid, err := Thumbprint(pub)
			if err != nil {
				return nil, err
			}
			out = append(out, PublicKey{KeyID: kid, Key: pub})
		case "PRIVATE KEY", "EC PRIVATE KEY", "RSA PRIVATE KEY", "OPENSSH PRIVATE KEY":
			return nil, errors.New("this is a private key; configure the public key instead (openssl pkey -in key.pem -pubout)")
		default:
			return nil, fmt.Errorf("PEM block %q is not a public key (want \"PUBLIC KEY\")", block.Type)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no key found: want PEM \"PUBLIC KEY\" blocks, a JWK or a JWK Set")
	}
	return out, nil
}

func parseJWKs(data []byte) ([]PublicKey, error) {
	var probe struct {
		Keys json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("not a JWK or JWK Set: %w", err)
	}
	var raw []json.RawMessage
	if probe.Keys != nil {
		if err := json.Unmarshal(probe.Keys, &raw); err != nil {
			return nil, fmt.Errorf("JWK Set: \"keys\" is not a list: %w", err)
		}
	} else {
		raw = []json.RawMessage{data}
	}
	var out []PublicKey
	for i, r := range raw {
		var jwk jose.JSONWebKey
		if err := jwk.UnmarshalJSON(r); err != nil {
			return nil, fmt.Errorf("JWK %d: %w", i, err)
		}
		if !jwk.IsPublic() {
			return nil, fmt.Errorf("JWK %d is a private key; configure the public key only", i)
		}
		if jwk.Use != "" && jwk.Use != "sig" {
			continue // an encryption key cannot sign cards
		}
		kid := jwk.KeyID
		if kid == "" {
			t, err := Thumbprint(jwk.Key)
			if err != nil {
				return nil, fmt.Errorf("JWK %d: %w", i, err)
			}
			kid = t
		}
		if _, err := algorithmFor(jwk.Key); err != nil {
			return nil, fmt.Errorf("JWK %d (kid %q): %w", i, kid, err)
		}
		out = append(out, PublicKey{KeyID: kid, Key: jwk.Key})
	}
	if len(out) == 0 {
		return nil, errors.New("the JWK Set holds no signing key")
	}
	return out, nil
}

// algorithmFor is the JWS algorithm a public key verifies, refusing key
// types other than Ed25519 and ECDSA P-256.
func algorithmFor(key crypto.PublicKey) (string, error) {
	switch k := key.(type) {
	case ed25519.PublicKey:
		if len(k) != ed25519.PublicKeySize {
			return "", errors.New("malformed Ed25519 public key")
		}
		return AlgEdDSA, nil
	case *ecdsa.PublicKey:
		if k.Curve != elliptic.P256() {
			return "", fmt.Errorf("EC keys must use curve P-256 (ES256), this one uses %s", k.Curve.Params().Name)
		}
		return AlgES256, nil
	}
	return "", fmt.Errorf("%s keys are not supported for card signatures; use Ed25519 or EC P-256", keyTypeName(key))
}

func keyTypeName(key any) string {
	switch key.(type) {
	case ed25519.PublicKey, ed25519.PrivateKey:
		return "Ed25519"
	case *ecdsa.PublicKey, *ecdsa.PrivateKey:
		return "ECDSA"
	}
	t := fmt.Sprintf("%T", key)
	switch {
	case strings.Contains(t, "rsa."):
		return "RSA"
	case strings.Contains(t, "ecdh."):
		return "X25519/ECDH"
	}
	return t
}

func sameKey(a, b crypto.PublicKey) bool {
	type equaler interface{ Equal(crypto.PublicKey) bool }
	if e, ok := a.(equaler); ok {
		return e.Equal(b)
	}
	return false
}

// Thumbprint is the RFC 7638 JWK SHA-256 thumbprint of a public key,
// base64url without padding: the default key id.
func Thumbprint(key crypto.PublicKey) (string, error) {
	if _, err := algorithmFor(key); err != nil {
		return "", err
	}
	t, err := (&jose.JSONWebKey{Key: key}).Thumbprint(crypto.SHA256)
	if err != nil {
		return "", fmt.Errorf("key thumbprint: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(t), nil
}

// JWKS encodes public keys as a JWK Set, each with its kid, alg and
// use "sig".
func JWKS(keys ...PublicKey) ([]byte, error) {
	set := jose.JSONWebKeySet{}
	for _, k := range keys {
		alg, err := algorithmFor(k.Key)
		if err != nil {
			return nil, err
		}
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.Key, KeyID: k.KeyID, Algorithm: alg, Use: "sig"})
	}
	return json.Marshal(set)
}
