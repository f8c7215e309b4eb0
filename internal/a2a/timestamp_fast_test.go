package a2a

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"
)

// TestAppendTimestampIsAppendFormat compares the hand-written formatting
// with time's on random instants of years 0–9999 and around, in other
// zones, at the edges of a second and of a year, and outside 0–9999.
func TestAppendTimestampIsAppendFormat(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	zones := []*time.Location{time.UTC, time.FixedZone("east", 14*3600), time.FixedZone("west", -12*3600-1800)}
	check := func(tm time.Time) {
		t.Helper()
		want := tm.UTC().AppendFormat([]byte("x"), timestampLayout)
		if got := appendTimestamp([]byte("x"), tm); !bytes.Equal(got, want) {
			t.Fatalf("appendTimestamp(%v) = %s, AppendFormat %s", tm, got, want)
		}
	}
	lo := time.Date(-20, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	hi := time.Date(10020, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	for range 200_000 {
		check(time.Unix(lo+rng.Int64N(hi-lo), rng.Int64N(1e9)).In(zones[rng.IntN(len(zones))]))
	}
	for _, y := range []int{-1, 0, 1, 999, 1000, 1969, 1970, 2026, 9999, 10000} {
		for _, ns := range []int{0, 999_999, 1_000_000, 999_999_999} {
			check(time.Date(y, 1, 1, 0, 0, 0, ns, time.UTC))
			check(time.Date(y, 12, 31, 23, 59, 59, ns, time.UTC))
		}
	}
	check(time.Time{})
}

func BenchmarkAppendTimestamp(b *testing.B) {
	tm := time.Date(2026, 12, 6, 10, 11, 12, 345_678_901, time.UTC)
	buf := make([]byte, 0, 64)
	for b.Loop() {
		buf = appendTimestamp(buf[:0], tm)
	}
}
