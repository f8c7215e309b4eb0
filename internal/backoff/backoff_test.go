package backoff

import (
	"testing"
	"time"
)

func TestJitteredDoublesWithJitterUpToMax(t *testing.T) {
	for attempt := 1; attempt <= 100; attempt++ {
		b := min(time.Second<<min(attempt-1, 20), 5*time.Minute)
		for range 50 {
			got := Jittered(time.Second, 5*time.Minute, attempt)
			if got < b-b/2 || got > b {
				t.Fatalf("Jittered(1s, 5m, %d) = %s, want within [%s, %s]", attempt, got, b-b/2, b)
			}
		}
	}
	if got := Jittered(time.Nanosecond, time.Nanosecond, 1); got < 0 || got > time.Nanosecond {
		t.Errorf("Jittered with 1 ns = %s", got)
	}
	if got := Jittered(time.Second, time.Minute, 0); got < 30*time.Second || got > time.Minute {
		t.Errorf("Jittered(attempt 0) = %s, want the max's range", got)
	}
}
