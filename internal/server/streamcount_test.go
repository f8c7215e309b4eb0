package server

import (
	"context"
	"sync"
	"testing"
	"time"
)

// waitReturned runs c.wait in the background and returns its result
// channel.
func waitReturned(ctx context.Context, c *streamCount) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- c.wait(ctx) }()
	return ch
}

func TestStreamCountWaitsForStreamsThatStartWhileItWaits(t *testing.T) {
	var c streamCount
	if err := c.wait(context.Background()); err != nil {
		t.Fatalf("no stream open: wait = %v", err)
	}

	// One stream open; another starts while Shutdown waits and outlives
	// the first.
	c.add()
	done := waitReturned(context.Background(), &c)
	c.add()
	c.done()
	select {
	case err := <-done:
		t.Fatalf("wait returned (%v) with %d stream(s) open", err, c.open())
	case <-time.After(50 * time.Millisecond):
	}
	c.done()
	select {
	case err := <-done:
		if err != nil || c.open() != 0 {
			t.Fatalf("wait = %v with %d open", err, c.open())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("wait did not return after the last stream ended")
	}

	// A stream that starts after the count reached zero once is waited
	// for by a later wait.
	c.add()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := c.wait(ctx); err == nil {
		t.Fatal("wait returned nil with a stream open")
	}
	c.done()
}

// Streams start and end from many goroutines while others wait: run with
// -race. A sync.WaitGroup used this way (Add from zero concurrently with
// Wait) is a misuse that may panic.
func TestStreamCountConcurrentUse(t *testing.T) {
	var c streamCount
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				c.add()
				ctx, cancel := context.WithTimeout(context.Background(), time.Microsecond)
				_ = c.wait(ctx)
				cancel()
				c.done()
			}
		}()
	}
	wg.Wait()
	if err := c.wait(context.Background()); err != nil || c.open() != 0 {
		t.Fatalf("%d streams left open (%v)", c.open(), err)
	}
}
