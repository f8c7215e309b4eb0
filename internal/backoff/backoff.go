// Package backoff is the one retry delay of the work the plugin retries
// from its store: webhook deliveries (internal/push) and the cancels of a
// delegation tree (internal/cascade).
package backoff

import (
	"math/rand/v2"
	"time"
)

// Jittered is the delay before attempt (1 for the first retry): base
// doubled per attempt up to max, then drawn at random from its upper half,
// so peers that failed together do not retry together. Shifts that would
// overflow give max.
func Jittered(base, maxDelay time.Duration, attempt int) time.Duration {
	b := maxDelay
	if shift := attempt - 1; shift >= 0 && shift < 62 && base<<shift > 0 && base<<shift < maxDelay {
		b = base << shift
	}
	half := b / 2
	return b - half + time.Duration(rand.Int64N(int64(half)+1))
}
