package push

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Headers of a webhook POST, as a receiver reads them.
const (
	// HeaderTimestamp carries the time of the attempt in Unix seconds; it is
	// part of the signed text, so a captured request cannot be replayed
	// once it is older than the receiver's allowed skew.
	HeaderTimestamp = "X-A2A-Timestamp"
	// HeaderSignature carries "v1=<hex HMAC-SHA256>" (see [Sign]).
	HeaderSignature = "X-A2A-Signature"
	// HeaderDeliveryID identifies one notification: it is the same on every
	// retry of that notification, so a receiver can drop duplicates.
	HeaderDeliveryID = "X-A2A-Delivery-Id"
	// HeaderTaskID is the id of the task the notification is about.
	HeaderTaskID = "X-A2A-Task-Id"
	// HeaderNotificationToken carries the config's token, when it has one.
	HeaderNotificationToken = "X-A2A-Notification-Token"
	// ContentType is the media type of every notification body (a v1.0
	// StreamResponse).
	ContentType = "application/a2a+json"
	// UserAgent is sent with every notification.
	UserAgent = "a2a-plugin"
)

// SignatureVersion prefixes every signature in [HeaderSignature]. A new
// scheme would get a new prefix, so receivers can accept both while they
// migrate.
const SignatureVersion = "v1"

// DefaultMaxSkew is the timestamp tolerance [Verify] uses when given none.
const DefaultMaxSkew = 5 * time.Minute

// Verification failures; [Verify] wraps one of them.
var (
	// ErrNoSignature: the timestamp or signature header is missing.
	ErrNoSignature = errors.New("push: missing " + HeaderTimestamp + " or " + HeaderSignature + " header")
	// ErrBadSignature: a header is malformed or no signature matches.
	ErrBadSignature = errors.New("push: signature does not verify")
	// ErrTimestampSkew: the timestamp is further from now than allowed (a
	// replay, or a badly set clock).
	ErrTimestampSkew = errors.New("push: timestamp outside the allowed skew")
)

// Sign returns the value of [HeaderSignature] for a body sent at ts (Unix
// seconds): "v1=" followed by the lowercase hex HMAC-SHA256, keyed with
// secret, of the decimal timestamp, a full stop and the body bytes exactly
// as sent.
func Sign(secret []byte, ts int64, body []byte) string {
	return SignatureVersion + "=" + hex.EncodeToString(mac(secret, strconv.FormatInt(ts, 10), body))
}

func mac(secret []byte, ts string, body []byte) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(ts))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// Verify checks a received notification: header must carry a
// [HeaderTimestamp] within maxSkew of now (either way; maxSkew <= 0 means
// [DefaultMaxSkew]) and a [HeaderSignature] with a v1 signature of body
// made with secret. The header may list several comma-separated
// signatures (e.g. during a key rotation); one match suffices. Signatures
// are compared in constant time. The error wraps [ErrNoSignature],
// [ErrBadSignature] or [ErrTimestampSkew].
//
// A receiver should verify before it parses the body, and should also drop
// a [HeaderDeliveryID] it has already processed: a delivery is retried
// until it is acknowledged, so duplicates are possible.
func Verify(secret []byte, header http.Header, body []byte, now time.Time, maxSkew time.Duration) error {
	if len(secret) == 0 {
		return fmt.Errorf("%w: no secret to verify with (set the same A2A_PUSH_SECRET as the sender)", ErrBadSignature)
	}
	tsText, sigText := header.Get(HeaderTimestamp), header.Get(HeaderSignature)
	if tsText == "" || sigText == "" {
		return ErrNoSignature
	}
	ts, err := parseTimestamp(tsText)
	if err != nil {
		return fmt.Errorf("%w: %s %q is not a Unix time in seconds", ErrBadSignature, HeaderTimestamp, tsText)
	}
	if maxSkew <= 0 {
		maxSkew = DefaultMaxSkew
	}
	skew := now.Sub(time.Unix(ts, 0))
	if skew > maxSkew || skew < -maxSkew {
		return fmt.Errorf("%w: %s is %s away from now, more than %s", ErrTimestampSkew, HeaderTimestamp, skew.Abs().Round(time.Second), maxSkew)
	}
	want := mac(secret, tsText, body)
	found := false
	for s := range strings.SplitSeq(sigText, ",") {
		version, sig, ok := strings.Cut(strings.TrimSpace(s), "=")
		if !ok || version != SignatureVersion {
			continue
		}
		got, err := hex.DecodeString(sig)
		if err != nil || len(got) != sha256.Size {
			continue
		}
		found = true
		if hmac.Equal(got, want) {
			return nil
		}
	}
	if !found {
		return fmt.Errorf("%w: %s has no well-formed %s= signature", ErrBadSignature, HeaderSignature, SignatureVersion)
	}
	return ErrBadSignature
}

// parseTimestamp accepts only plain decimal digits, so that the text signed
// is exactly the number checked.
func parseTimestamp(s string) (int64, error) {
	if len(s) > 18 {
		return 0, errors.New("too long")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, errors.New("not decimal")
		}
	}
	return strconv.ParseInt(s, 10, 64)
}
