package plugin

import (
	"context"
	"errors"
	"io"
	"math"
	"sync"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// Call streams (contract 1.2) carry the two calls every inbound task makes —
// the plugin's HandleMessage and the host's Send — over one long-lived
// bidirectional stream each instead of one unary RPC per call. A unary gRPC
// call opens an HTTP/2 stream, sends and parses headers and trailers and
// runs its handler through the server's per-call machinery; a message on an
// open stream is one DATA frame each way. Measured between two processes at
// 16 concurrent callers, a call costs about 15 µs of the caller's CPU as a
// unary RPC and 6 µs on a stream, and the callee saves alike
// (docs/performance.md).
//
// A call on a stream means exactly what the unary RPC means and fails with
// the same gRPC status (CallError carries its code and message), so the
// Platform and Host interfaces do not change. Calls are matched to answers
// by call_id and may be answered in any order; a caller that needs two
// calls ordered waits for the first answer, as with unary RPCs. The stream
// is opened on the first call and again after it breaks; when it breaks,
// the calls waiting on it fail with codes.Unavailable (their outcome is
// unknown, as for a unary call whose connection drops). A callee that
// answers the stream Unimplemented (a peer that claimed 1.2 without it)
// makes the caller fall back to unary RPCs for good. A call whose request
// is larger than callStreamMaxBytes (a file carried inline) goes as a unary
// RPC too, so that it never holds up the small calls queued behind it on
// the stream while it transfers.

// callStreamWorkers is how many long-lived goroutines a served call stream
// keeps to run calls (like streamWorkers for unary calls); a call arriving
// while all are busy runs on a goroutine of its own.
const callStreamWorkers = 16

// callStreamMaxBytes is the largest request sent on a call stream; larger
// ones go as unary RPCs.
const callStreamMaxBytes = 256 << 10

// errStreamUnimplemented marks calls that never reached a callee because it
// does not serve the call stream; they are retried as unary RPCs.
var errStreamUnimplemented = errors.New("call stream not implemented by the callee")

// callStreamClient and callStreamServer are the halves of a generated
// bidirectional stream that call streams use.
type callStreamClient[Req, Resp any] interface {
	Send(Req) error
	Recv() (Resp, error)
}

type callStreamServer[Req, Resp any] interface {
	Context() context.Context
	Send(Resp) error
	Recv() (Req, error)
}

// callReply is what a caller needs from a response envelope.
type callReply[Out any] interface {
	GetCallId() uint64
	GetResponse() Out
	GetError() *pb.CallError
}

// callClient multiplexes calls of one kind over a bidirectional stream.
// In is the unary request type, Out the unary response type, Req and Resp
// the stream's envelopes.
type callClient[In proto.Message, Out any, Req any, Resp callReply[Out]] struct {
	// open opens a new stream; ctx bounds the stream's life.
	open func(ctx context.Context) (callStreamClient[Req, Resp], error)
	// wrap builds the envelope of one call.
	wrap func(id uint64, timeoutMS uint32, in In) Req
	// unary makes the same call as a unary RPC (the fallback).
	unary func(ctx context.Context, in In) (Out, error)

	mu       sync.Mutex
	cur      *callConn[Out, Req, Resp]
	next     uint64
	fallback bool // the callee does not serve the stream: use unary
	closed   bool
}

// callConn is one open stream and the calls waiting on it.
type callConn[Out, Req any, Resp callReply[Out]] struct {
	stream  callStreamClient[Req, Resp]
	cancel  context.CancelFunc
	sendMu  sync.Mutex                      // grpc streams allow one sender at a time
	pending map[uint64]chan callResult[Out] // guarded by callClient.mu
}

type callResult[Out any] struct {
	out Out
	err error
}

// call makes one call and waits for its answer or ctx.
func (c *callClient[In, Out, Req, Resp]) call(ctx context.Context, in In) (Out, error) {
	var zero Out
	if err := ctx.Err(); err != nil {
		return zero, fromStatus(status.FromContextError(err).Err())
	}
	if proto.Size(in) > callStreamMaxBytes {
		return c.unary(ctx, in)
	}
	ch := make(chan callResult[Out], 1)
	c.mu.Lock()
	if c.fallback {
		c.mu.Unlock()
		return c.unary(ctx, in)
	}
	cc, err := c.connLocked()
	if err != nil {
		c.mu.Unlock()
		return zero, err
	}
	c.next++
	id := c.next
	cc.pending[id] = ch
	c.mu.Unlock()

	err = cc.send(c.wrap(id, timeoutMS(ctx), in))
	if err != nil && !errors.Is(err, io.EOF) {
		// Refused before it left (e.g. a message over the size limit); the
		// stream itself is fine. io.EOF means the stream ended: its
		// receiver fails the call with the reason.
		c.forget(cc, id)
		return zero, fromStatus(err)
	}
	select {
	case r := <-ch:
		if errors.Is(r.err, errStreamUnimplemented) {
			return c.unary(ctx, in)
		}
		return r.out, r.err
	case <-ctx.Done():
		c.forget(cc, id)
		return zero, fromStatus(status.FromContextError(ctx.Err()).Err())
	}
}

// timeoutMS is what is left of ctx's deadline, in whole milliseconds
// rounded up, or 0 for none.
func timeoutMS(ctx context.Context) uint32 {
	d, ok := ctx.Deadline()
	if !ok {
		return 0
	}
	ms := (time.Until(d) + time.Millisecond - 1) / time.Millisecond
	return uint32(min(max(ms, 1), math.MaxUint32))
}

// connLocked returns the open stream, opening one if there is none.
// c.mu is held.
func (c *callClient[In, Out, Req, Resp]) connLocked() (*callConn[Out, Req, Resp], error) {
	if c.closed {
		return nil, fromStatus(status.Error(codes.Canceled, "the connection is closed"))
	}
	if c.cur != nil {
		return c.cur, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	st, err := c.open(ctx)
	if err != nil {
		cancel()
		return nil, fromStatus(err)
	}
	cc := &callConn[Out, Req, Resp]{stream: st, cancel: cancel, pending: make(map[uint64]chan callResult[Out])}
	c.cur = cc
	go c.receive(cc)
	return cc, nil
}

func (cc *callConn[Out, Req, Resp]) send(r Req) error {
	cc.sendMu.Lock()
	defer cc.sendMu.Unlock()
	return cc.stream.Send(r)
}

// forget drops a call whose caller stopped waiting; a late answer to it is
// discarded.
func (c *callClient[In, Out, Req, Resp]) forget(cc *callConn[Out, Req, Resp], id uint64) {
	c.mu.Lock()
	delete(cc.pending, id)
	c.mu.Unlock()
}

// receive hands each answer on cc to its caller until the stream ends, then
// fails the calls still waiting on it.
func (c *callClient[In, Out, Req, Resp]) receive(cc *callConn[Out, Req, Resp]) {
	for {
		resp, err := cc.stream.Recv()
		if err != nil {
			c.end(cc, err)
			return
		}
		r := callResult[Out]{out: resp.GetResponse()}
		if e := resp.GetError(); e != nil {
			var zero Out
			r = callResult[Out]{out: zero, err: fromStatus(status.Error(codes.Code(e.GetCode()), e.GetMessage()))}
		}
		c.mu.Lock()
		ch := cc.pending[resp.GetCallId()]
		delete(cc.pending, resp.GetCallId())
		c.mu.Unlock()
		if ch != nil {
			ch <- r
		}
	}
}

// end retires cc after its stream ended with err.
func (c *callClient[In, Out, Req, Resp]) end(cc *callConn[Out, Req, Resp], err error) {
	cc.cancel()
	var failure error
	switch {
	case status.Code(err) == codes.Unimplemented:
		failure = errStreamUnimplemented
	case errors.Is(err, io.EOF):
		failure = status.Error(codes.Unavailable, "the call stream ended (the other side closed it); the call's outcome is unknown")
	default:
		failure = status.Errorf(codes.Unavailable, "the call stream broke (%v); the call's outcome is unknown", err)
	}
	if !errors.Is(failure, errStreamUnimplemented) {
		failure = fromStatus(failure)
	}
	c.mu.Lock()
	if c.cur == cc {
		c.cur = nil
	}
	if errors.Is(failure, errStreamUnimplemented) {
		c.fallback = true
	}
	pending := cc.pending
	cc.pending = nil
	c.mu.Unlock()
	for _, ch := range pending {
		ch <- callResult[Out]{err: failure}
	}
}

// close ends the open stream, if any; later calls fail.
func (c *callClient[In, Out, Req, Resp]) close() {
	c.mu.Lock()
	c.closed = true
	cc := c.cur
	c.mu.Unlock()
	if cc != nil {
		cc.cancel()
	}
}

// callRequest is what a served call stream needs from a request envelope.
type callRequest[In any] interface {
	GetCallId() uint64
	GetRequest() In
	GetTimeoutMs() uint32
}

// serveCalls serves one call stream: every request envelope is handled as
// handle handles the unary call (by a pool of workers, concurrently, in no
// particular order) and answered with wrap. A panicking call is answered
// codes.Internal and logged, like a panicking unary handler. It returns
// when the caller closes the stream, after the calls in flight are
// answered.
func serveCalls[In, Out any, Req callRequest[In], Resp any](
	stream callStreamServer[Req, Resp],
	logger hclog.Logger, method string,
	handle func(context.Context, In) (Out, error),
	wrap func(id uint64, out Out, e *pb.CallError) Resp,
) error {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	ctx := stream.Context()
	var sendMu sync.Mutex
	run := func(r Req) {
		out, err := runCall(ctx, logger, method, r, handle)
		var e *pb.CallError
		if err != nil {
			st := status.Convert(err)
			e = &pb.CallError{Code: uint32(st.Code()), Message: st.Message()}
			var zero Out
			out = zero
		}
		sendMu.Lock()
		defer sendMu.Unlock()
		// A failed send means the stream is gone; the caller's calls
		// fail on its side.
		_ = stream.Send(wrap(r.GetCallId(), out, e))
	}
	work := make(chan Req)
	var wg sync.WaitGroup
	defer func() {
		close(work)
		wg.Wait()
	}()
	workers := 0
	for {
		r, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		select {
		case work <- r:
			continue
		default:
		}
		wg.Add(1)
		if workers < callStreamWorkers {
			workers++
			go func() {
				defer wg.Done()
				run(r)
				for r := range work {
					run(r)
				}
			}()
		} else {
			go func() {
				defer wg.Done()
				run(r)
			}()
		}
	}
}

// runCall runs one call with the envelope's deadline, recovering a panic.
func runCall[In, Out any, Req callRequest[In]](ctx context.Context, logger hclog.Logger, method string, r Req,
	handle func(context.Context, In) (Out, error)) (out Out, err error) {
	defer func() {
		if p := recover(); p != nil {
			var zero Out
			out, err = zero, panicError(logger, method, p)
		}
	}()
	if ms := r.GetTimeoutMs(); ms > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(ms)*time.Millisecond)
		defer cancel()
	}
	return handle(ctx, r.GetRequest())
}
