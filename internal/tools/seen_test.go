package tools

import (
	"fmt"
	"testing"
)

func TestSeenSetForgetsTheOldestPastItsBound(t *testing.T) {
	s := newSeenSet(3)
	for _, k := range []string{"a", "b", "c"} {
		if s.add(k) {
			t.Fatalf("%s seen before it was added", k)
		}
	}
	if !s.add("a") || !s.add("c") {
		t.Fatal("remembered keys not seen")
	}
	if s.add("d") { // forgets a
		t.Fatal("d seen before it was added")
	}
	if s.add("a") { // a was forgotten; adding it again forgets b
		t.Fatal("a still remembered past the bound")
	}
	if !s.add("c") || !s.add("d") || !s.add("a") {
		t.Fatal("recent keys forgotten")
	}
	big := newSeenSet(maxRemembered)
	for i := range 10 * maxRemembered {
		big.add(fmt.Sprint(i))
	}
	if len(big.keys) != maxRemembered || len(big.order) != maxRemembered {
		t.Fatalf("set holds %d keys (%d in order), want %d", len(big.keys), len(big.order), maxRemembered)
	}
}
