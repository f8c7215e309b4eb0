package server

import (
	"sync"
	"testing"
)

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestStreamCountDrainsStreamsThatStartWhileShutdownWaits(t *testing.T) {
	var c streamCount
	if !isClosed(c.drained()) {
		t.Fatal("no stream open, yet not drained")
	}
	c.add()
	drained := c.drained()
	c.add() // admitted just before shutdown, starts while it waits
	c.done()
	if isClosed(drained) || c.open() != 1 {
		t.Fatalf("drained with %d streams open", c.open())
	}
	c.done()
	if !isClosed(drained) || c.open() != 0 {
		t.Fatalf("not drained after the last stream ended (%d open)", c.open())
	}
	// The count is reusable: a later stream gets a fresh wait.
	c.add()
	if isClosed(c.drained()) {
		t.Fatal("a new stream counts as drained")
	}
	c.done()
}

// Streams starting and ending from many goroutines while drained is
// called: run with -race. A sync.WaitGroup used this way (Add from zero
// concurrently with Wait) is a misuse that may panic.
func TestStreamCountConcurrentUse(t *testing.T) {
	var c streamCount
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				c.add()
				_ = c.drained()
				c.done()
			}
		}()
	}
	wg.Wait()
	if c.open() != 0 || !isClosed(c.drained()) {
		t.Fatalf("%d streams left open", c.open())
	}
}
