package server

import (
	"sync"
	"time"

	"google.golang.org/grpc"
)

// The gRPC binding reads an RPC's request message with a deadline
// (Limits.ReadTimeout), which RecvMsg has no way to take: the read runs
// on another goroutine while the handler waits for it or the deadline.
// Those goroutines are kept in a pool instead of started per RPC: a fresh
// goroutine's stack grows, by copying, through protobuf's decoding every
// time (about a tenth of the binding's CPU per request before the pool,
// docs/performance.md), while a pooled one keeps its grown stack.

// recvJob is one RPC's read: the message goes into msg, the result into
// done (buffered, so a receiver never waits for a handler that gave up).
type recvJob struct {
	ss   grpc.ServerStream
	msg  any
	done chan<- error
}

// recvIdle is how long a receiver waits for its next read before it ends:
// the pool follows the load, and an idle plugin keeps no receivers.
const recvIdle = 10 * time.Second

// recvPool hands reads to idle receivers and starts one when none is idle.
type recvPool struct{ jobs chan recvJob }

var receivers = recvPool{jobs: make(chan recvJob)}

// run reads j on an idle receiver, or on a new one.
func (p *recvPool) run(j recvJob) {
	select {
	case p.jobs <- j:
	default:
		go p.receive(j)
	}
}

// receive runs reads until it has been idle for recvIdle.
func (p *recvPool) receive(j recvJob) {
	idle := time.NewTimer(recvIdle)
	defer idle.Stop()
	for {
		j.done <- j.ss.RecvMsg(j.msg)
		j = recvJob{} // drop the finished RPC's references while idle
		idle.Reset(recvIdle)
		select {
		case j = <-p.jobs:
		case <-idle.C:
			return
		}
	}
}

// timerPool reuses the read deadline's timers (since Go 1.23 a stopped or
// reset timer delivers no stale tick, so a put timer is as good as new).
type timerPool struct{ p sync.Pool }

var readTimers timerPool

// get returns a timer that fires after d.
func (tp *timerPool) get(d time.Duration) *time.Timer {
	if t, ok := tp.p.Get().(*time.Timer); ok {
		t.Reset(d)
		return t
	}
	return time.NewTimer(d)
}

// put stops t and keeps it for reuse.
func (tp *timerPool) put(t *time.Timer) {
	t.Stop()
	tp.p.Put(t)
}
