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
// open stream is one DATA frame each way, which costs both sides less than
// half as much CPU (docs/performance.md, "Call streams, WAL, reference
// host"). This comment is the rationale and the rules of call streams;
// docs/architecture.md links here.
//
// A call on a stream means exactly what the unary RPC means and fails with
// the same gRPC code and message (CallError; status details are not
// carried, and the contract uses none), so the Platform and Host interfaces
// do not change. Calls are matched to answers by call_id and may be
// answered in any order; a caller that needs two calls ordered waits for
// the first answer, as with unary RPCs. The caller's deadline travels with
// the call, and a caller that stops waiting sends a cancel envelope, so the
// callee's handler sees its context end as a unary handler would. Unary
// server interceptors do not see calls on a stream.
//
// The stream is opened by the first call and again after it breaks. No
// caller waits — to open, to send or for its answer — longer than its own
// context allows: a caller sends its call itself only when the stream is
// free and gRPC cannot hold the send (directSendBytes), and otherwise
// queues it for the stream's writer goroutine, so a callee that stops
// reading holds up only the writer. When the
// stream breaks, the calls already sent on it fail with codes.Unavailable
// (their outcome is unknown, as for a unary call whose connection drops;
// they are never resent), and calls not yet sent are made as unary RPCs. A
// callee that answers the stream Unimplemented before answering anything
// (a peer that claimed 1.2 without it), or three streams in a row that end
// before answering anything, make the caller fall back to unary RPCs for
// good. A call whose request is larger
// than callStreamMaxBytes (a file carried inline) goes as a unary RPC too,
// so that it never holds up the small calls queued behind it on the stream
// while it transfers; so does one that gRPC cannot marshal (a string that
// is not UTF-8), which fails there as a unary call does, alone (sent on the
// stream, it would make gRPC end the stream and the calls in flight on it).
//
// Who uses them: the plugin calls HandleMessages when
// ConfigureRequest.host.protocol_minor is at least 2, host-sdk calls
// SendStream when the plugin's Describe says 1.2 or later (UseCallStreams);
// older peers get the unary RPCs. The served side runs calls on a pool of
// callStreamWorkers per stream, recovers a panicking call as
// codes.Internal, and answers the calls still in flight before its handler
// returns.

// callStreamWorkers is how many long-lived goroutines a served call stream
// keeps to run calls (like streamWorkers for unary calls); a call arriving
// while all are busy runs on a goroutine of its own.
const callStreamWorkers = 16

// callStreamMaxBytes is the largest request sent on a call stream; larger
// ones go as unary RPCs.
const callStreamMaxBytes = 256 << 10

// directSendBytes bounds what a caller may send on the stream itself
// rather than through the writer: the bytes sent on the stream that the
// callee may not have yet (sent after the call whose answer came last),
// its call included. On a stream that has answered (so gRPC has committed
// it and never retries a send on it, which could wait for a new
// connection), gRPC's Send waits, without a deadline, only when the
// stream's write quota (64 KiB of data not yet written to the connection,
// grpc/internal/transport defaultWriteQuota) is used up; the bytes of a
// call the callee answered were written, so below half that quota a send
// returns at once. One hand-off less per call than queueing for the
// writer (docs/performance.md, "The task manager and the contract path").
const directSendBytes = 32 << 10

// envelopeBytes bounds what an envelope adds to its request (call id,
// timeout, field tags) plus gRPC's 5-byte message header.
const envelopeBytes = 40

// maxDeadStreams is how many streams in a row may end without delivering
// a single answer before the caller gives up on streams.
const maxDeadStreams = 3

// errUseUnary tells call to make the call as a unary RPC: the callee does
// not serve the call stream, or the stream never got as far as the call.
var errUseUnary = errors.New("call stream not usable: use the unary RPC")

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
	// wrap builds the envelope of one call; cancel the envelope that
	// cancels call id.
	wrap   func(id uint64, timeoutMS uint32, in In) Req
	cancel func(id uint64) Req
	// unary makes the same call as a unary RPC (the fallback).
	unary func(ctx context.Context, in In) (Out, error)

	mu       sync.Mutex
	cur      *callConn[Out, Req, Resp]
	opening  *streamOpening[Out, Req, Resp] // a stream being opened, if any
	next     uint64
	dead     int  // streams in a row that ended without an answer
	fallback bool // use unary RPCs from now on
	closed   bool

	// calls holds *pendingCall[Out] whose last answer was taken, for
	// reuse (getCall, putCall).
	calls sync.Pool
}

// streamOpening is an attempt to open a stream; done is closed when cc or
// err is set.
type streamOpening[Out, Req any, Resp callReply[Out]] struct {
	done chan struct{}
	cc   *callConn[Out, Req, Resp]
	err  error
}

// callConn is one open stream and the calls waiting on it.
type callConn[Out, Req any, Resp callReply[Out]] struct {
	stream callStreamClient[Req, Resp]
	cancel context.CancelFunc
	// queue holds envelopes for the stream's writer goroutine. Callers
	// wait to queue and for their answers on their own contexts, and send
	// themselves only what cannot wait (directSendBytes): a callee that
	// stops reading holds up only the writer.
	queue chan outgoing[Req]
	done  chan struct{} // closed when the stream has ended
	// sendMu is held by whoever sends on the stream (gRPC allows one
	// sender at a time): the writer, or a caller sending its own call.
	// sent counts the bytes sent (at most: envelopeBytes per envelope);
	// guarded by sendMu.
	sendMu sync.Mutex
	sent   int64
	// direct counts the calls their callers sent themselves (sendDirect),
	// for tests; guarded by sendMu.
	direct int64
	// pending holds the calls waiting for an answer; nil once the stream
	// ended. Guarded by callClient.mu, as are answered and confirmed (the
	// position in sent of the last answered call's end: the callee has
	// everything before it).
	pending   map[uint64]*pendingCall[Out]
	answered  bool
	confirmed int64
}

// pendingCall is a call waiting for its answer. sent is set (under
// callClient.mu) when the call is taken to be sent: from then on the
// callee may have it, and it is never resent; pos is then where it ends
// in callConn.sent.
type pendingCall[Out any] struct {
	ch   chan callResult[Out]
	sent bool
	pos  int64
}

// getCall returns an idle pendingCall: sent false, ch empty.
func (c *callClient[In, Out, Req, Resp]) getCall() *pendingCall[Out] {
	if p, ok := c.calls.Get().(*pendingCall[Out]); ok {
		return p
	}
	return &pendingCall[Out]{ch: make(chan callResult[Out], 1)}
}

// putCall keeps p for another call. Only its caller may put it, and only
// once nothing else can answer it: after taking its answer from ch, or
// after taking it out of pending itself (abandon, forget), since whoever
// takes a call out of pending answers it. A p with an answer still in ch
// (put back wrongly) is dropped rather than handing that answer to the
// next call.
func (c *callClient[In, Out, Req, Resp]) putCall(p *pendingCall[Out]) {
	if len(p.ch) != 0 {
		return
	}
	p.sent, p.pos = false, 0
	c.calls.Put(p)
}

// marshalBufs holds buffers for checkedSize.
var marshalBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// checkedSize is in's size on the wire, and the error if gRPC could not
// marshal it (a string field that is not valid UTF-8), found by marshalling
// it into a pooled buffer; a request larger than callStreamMaxBytes, which
// goes as a unary RPC, is only sized.
func checkedSize(in proto.Message) (int, error) {
	size := proto.Size(in)
	if size > callStreamMaxBytes {
		return size, nil
	}
	bp := marshalBufs.Get().(*[]byte)
	b, err := proto.MarshalOptions{UseCachedSize: true}.MarshalAppend((*bp)[:0], in)
	*bp = b[:0]
	marshalBufs.Put(bp)
	return size, err
}

// outgoing is one envelope for the writer: a call or a cancel, of at most
// size bytes on the stream.
type outgoing[Req any] struct {
	id     uint64
	env    Req
	size   int64
	cancel bool
}

// cancelBytes bounds a cancel envelope on the stream.
const cancelBytes = 32

// callQueue is how many envelopes may wait for a stream's writer.
const callQueue = 256

type callResult[Out any] struct {
	out Out
	err error
}

// contextError is the error of a call abandoned because ctx ended, as a
// unary call reports it.
func contextError(ctx context.Context) error {
	return fromStatus(status.FromContextError(ctx.Err()).Err())
}

// call makes one call and waits for its answer or ctx.
func (c *callClient[In, Out, Req, Resp]) call(ctx context.Context, in In) (Out, error) {
	var zero Out
	if ctx.Err() != nil {
		return zero, contextError(ctx)
	}
	size, err := checkedSize(in)
	if err != nil || size > callStreamMaxBytes {
		// A request gRPC cannot marshal (a string field that is not
		// UTF-8) fails as the unary call, alone: sent on the stream, it
		// would make gRPC end the stream and every call in flight on it.
		return c.unary(ctx, in)
	}
	cc, err := c.conn(ctx)
	if errors.Is(err, errUseUnary) {
		return c.unary(ctx, in)
	}
	if err != nil {
		return zero, err
	}
	p := c.getCall()
	c.mu.Lock()
	if cc.pending == nil {
		// The stream ended between conn and here: nothing was sent.
		c.mu.Unlock()
		c.putCall(p)
		return c.unary(ctx, in)
	}
	c.next++
	id := c.next
	cc.pending[id] = p
	c.mu.Unlock()

	o := outgoing[Req]{id: id, env: c.wrap(id, timeoutMS(ctx), in), size: int64(size) + envelopeBytes}
	if sent, err := c.sendDirect(cc, p, o); sent {
		if err != nil {
			c.putCall(p)
			return zero, err
		}
		return c.await(ctx, cc, p, id, in)
	}
	select {
	case cc.queue <- o:
	case <-cc.done:
		// The stream ended first; its end answered p (below).
	case <-ctx.Done():
		if c.abandon(cc, id) {
			c.putCall(p)
		}
		return zero, contextError(ctx)
	}
	return c.await(ctx, cc, p, id, in)
}

// sendDirect sends o, the envelope of p, on the caller's goroutine if the
// stream is free (no writer or caller sending, nothing queued), has
// answered a call, and gRPC cannot hold the send (directSendBytes); it
// reports whether it took the call, and the call's error if the stream
// refused it.
func (c *callClient[In, Out, Req, Resp]) sendDirect(cc *callConn[Out, Req, Resp], p *pendingCall[Out], o outgoing[Req]) (bool, error) {
	if len(cc.queue) > 0 || !cc.sendMu.TryLock() {
		return false, nil
	}
	defer cc.sendMu.Unlock()
	c.mu.Lock()
	if cc.pending == nil {
		// The stream ended: its end answered p (never sent: unary).
		c.mu.Unlock()
		return true, nil
	}
	if !cc.answered || cc.sent+o.size-cc.confirmed > directSendBytes {
		c.mu.Unlock()
		return false, nil
	}
	p.sent = true
	cc.sent += o.size
	p.pos = cc.sent
	c.mu.Unlock()
	cc.direct++
	if err := cc.stream.Send(o.env); err != nil && !errors.Is(err, io.EOF) && c.forget(cc, o.id) {
		// gRPC refused the envelope and ended the stream with it (any
		// Send error but io.EOF does): this call gets the error, receive
		// fails the others. call rules out the refusals it can foresee
		// (checkedSize). (io.EOF: the stream ended, and its end answers
		// p, as in write.)
		return true, fromStatus(err)
	}
	return true, nil
}

// await waits for the answer to call id (p) on cc, or for ctx.
func (c *callClient[In, Out, Req, Resp]) await(ctx context.Context, cc *callConn[Out, Req, Resp], p *pendingCall[Out], id uint64, in In) (Out, error) {
	var zero Out
	select {
	case r := <-p.ch:
		c.putCall(p)
		if errors.Is(r.err, errUseUnary) {
			return c.unary(ctx, in)
		}
		return r.out, r.err
	case <-ctx.Done():
		if c.abandon(cc, id) {
			c.putCall(p)
		}
		return zero, contextError(ctx)
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

// conn returns the open stream, opening one if there is none; it waits for
// an opening no longer than ctx allows. errUseUnary means the caller
// should make a unary call.
func (c *callClient[In, Out, Req, Resp]) conn(ctx context.Context) (*callConn[Out, Req, Resp], error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, fromStatus(status.Error(codes.Canceled, "the connection is closed"))
	}
	if c.fallback {
		c.mu.Unlock()
		return nil, errUseUnary
	}
	if cc := c.cur; cc != nil {
		c.mu.Unlock()
		return cc, nil
	}
	o := c.opening
	if o == nil {
		o = &streamOpening[Out, Req, Resp]{done: make(chan struct{})}
		c.opening = o
		go c.openStream(o)
	}
	c.mu.Unlock()
	select {
	case <-o.done:
		return o.cc, o.err
	case <-ctx.Done():
		return nil, contextError(ctx)
	}
}

// openStream opens a stream for o (on its own goroutine: opening waits for
// the connection, which callers must not wait for past their deadlines).
func (c *callClient[In, Out, Req, Resp]) openStream(o *streamOpening[Out, Req, Resp]) {
	ctx, cancel := context.WithCancel(context.Background())
	st, err := c.open(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	defer close(o.done)
	c.opening = nil
	switch {
	case err != nil && status.Code(err) == codes.Unimplemented:
		cancel()
		c.fallback = true
		o.err = errUseUnary
	case err != nil:
		cancel()
		o.err = fromStatus(err)
	case c.closed:
		cancel()
		o.err = fromStatus(status.Error(codes.Canceled, "the connection is closed"))
	default:
		cc := &callConn[Out, Req, Resp]{stream: st, cancel: cancel,
			queue: make(chan outgoing[Req], callQueue), done: make(chan struct{}),
			pending: make(map[uint64]*pendingCall[Out])}
		c.cur, o.cc = cc, cc
		go c.receive(cc)
		go c.write(cc)
	}
}

// write sends the queued envelopes one by one until the stream ends. A call
// whose caller gave up before its turn is skipped: it never reaches the
// callee.
func (c *callClient[In, Out, Req, Resp]) write(cc *callConn[Out, Req, Resp]) {
	for {
		var o outgoing[Req]
		select {
		case o = <-cc.queue:
		case <-cc.done:
			return
		}
		var p *pendingCall[Out]
		cc.sendMu.Lock()
		if !o.cancel {
			c.mu.Lock()
			if p = cc.pending[o.id]; p != nil {
				p.sent = true
				p.pos = cc.sent + o.size
			}
			c.mu.Unlock()
			if p == nil {
				cc.sendMu.Unlock()
				continue
			}
		}
		cc.sent += o.size
		err := cc.stream.Send(o.env)
		cc.sendMu.Unlock()
		switch {
		case err == nil:
		case errors.Is(err, io.EOF):
			// The stream ended: receive learns why and answers the
			// calls still pending, this one included.
			return
		case p != nil:
			// gRPC refused the envelope and ended the stream with it (as
			// in sendDirect): this call gets the error, receive fails
			// the others.
			if c.forget(cc, o.id) {
				p.ch <- callResult[Out]{err: fromStatus(err)}
			}
		}
	}
}

// forget drops a pending call; it reports whether the call was still
// pending (so that whoever forgets it answers it, exactly once).
func (c *callClient[In, Out, Req, Resp]) forget(cc *callConn[Out, Req, Resp], id uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := cc.pending[id]
	delete(cc.pending, id)
	return ok
}

// abandon drops a call whose caller stopped waiting; a late answer to it is
// discarded. A call already sent is cancelled on the callee's side too, as
// a unary call's cancellation would; if the writer's queue is full the
// cancel is dropped and the call's deadline still bounds it there. It
// reports whether the call was still pending (then nothing answers it).
func (c *callClient[In, Out, Req, Resp]) abandon(cc *callConn[Out, Req, Resp], id uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := cc.pending[id]
	delete(cc.pending, id)
	if p != nil && p.sent {
		select {
		case cc.queue <- outgoing[Req]{id: id, env: c.cancel(id), size: cancelBytes, cancel: true}:
		default:
		}
	}
	return p != nil
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
		cc.answered = true
		c.dead = 0
		p := cc.pending[resp.GetCallId()]
		delete(cc.pending, resp.GetCallId())
		if p != nil && p.pos > cc.confirmed {
			cc.confirmed = p.pos
		}
		c.mu.Unlock()
		if p != nil {
			p.ch <- r
		}
	}
}

// end retires cc after its stream ended with err and answers the calls
// still pending: those never sent, and all of them when the callee refused
// the stream as Unimplemented before answering anything (no call reached a
// handler), are retried as unary calls; the others fail as Unavailable,
// their outcome unknown.
func (c *callClient[In, Out, Req, Resp]) end(cc *callConn[Out, Req, Resp], err error) {
	cc.cancel()
	c.mu.Lock()
	if c.cur == cc {
		c.cur = nil
	}
	refused := status.Code(err) == codes.Unimplemented && !cc.answered
	var failure error
	switch {
	case refused:
		c.fallback = true
		failure = errUseUnary
	case errors.Is(err, io.EOF):
		failure = fromStatus(status.Error(codes.Unavailable, "the call stream ended (the other side closed it); the call's outcome is unknown"))
	default:
		failure = fromStatus(status.Errorf(codes.Unavailable, "the call stream broke (%v); the call's outcome is unknown", err))
	}
	if !cc.answered && !c.closed {
		if c.dead++; c.dead >= maxDeadStreams {
			c.fallback = true
		}
	}
	pending := cc.pending
	cc.pending = nil
	close(cc.done)
	c.mu.Unlock()
	for _, p := range pending {
		if p.sent {
			p.ch <- callResult[Out]{err: failure}
		} else {
			p.ch <- callResult[Out]{err: errUseUnary}
		}
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
	GetCancel() bool
}

// serveCalls serves one call stream: every request envelope is handled as
// handle handles the unary call (by a pool of workers, concurrently, in no
// particular order), with the caller's deadline and a context that a
// cancel envelope ends, and answered with wrap. A panicking call is
// answered codes.Internal and logged, like a panicking unary handler. It
// returns when the caller closes the stream, after the calls in flight are
// answered (a gRPC stream must not be written after its handler returns).
func serveCalls[In any, Out proto.Message, Req callRequest[In], Resp any](
	stream callStreamServer[Req, Resp],
	logger hclog.Logger, method string,
	handle func(context.Context, In) (Out, error),
	wrap func(id uint64, out Out, e *pb.CallError) Resp,
) error {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	streamCtx := stream.Context()
	var (
		sendMu    sync.Mutex
		cancelsMu sync.Mutex
		cancels   = map[uint64]context.CancelFunc{}
	)
	type job struct {
		r      Req
		ctx    context.Context
		cancel context.CancelFunc
	}
	run := func(j job) {
		id := j.r.GetCallId()
		out, err := runCall(j.ctx, logger, method, j.r, handle)
		cancelsMu.Lock()
		delete(cancels, id)
		cancelsMu.Unlock()
		j.cancel()
		var e *pb.CallError
		if err == nil && !out.ProtoReflect().IsValid() {
			err = status.Errorf(codes.Internal, "%s: the handler returned neither a response nor an error", method)
		}
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
		_ = stream.Send(wrap(id, out, e))
	}
	work := make(chan job)
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
		id := r.GetCallId()
		if r.GetCancel() {
			cancelsMu.Lock()
			if cancel := cancels[id]; cancel != nil {
				cancel()
			}
			cancelsMu.Unlock()
			continue
		}
		var (
			ctx    context.Context
			cancel context.CancelFunc
		)
		if ms := r.GetTimeoutMs(); ms > 0 {
			ctx, cancel = context.WithTimeout(streamCtx, time.Duration(ms)*time.Millisecond)
		} else {
			ctx, cancel = context.WithCancel(streamCtx)
		}
		cancelsMu.Lock()
		cancels[id] = cancel
		cancelsMu.Unlock()
		j := job{r: r, ctx: ctx, cancel: cancel}
		select {
		case work <- j:
			continue
		default:
		}
		wg.Add(1)
		if workers < callStreamWorkers {
			workers++
			go func() {
				defer wg.Done()
				run(j)
				for j := range work {
					run(j)
				}
			}()
		} else {
			go func() {
				defer wg.Done()
				run(j)
			}()
		}
	}
}

// runCall runs one call, recovering a panic.
func runCall[In, Out any, Req callRequest[In]](ctx context.Context, logger hclog.Logger, method string, r Req,
	handle func(context.Context, In) (Out, error)) (out Out, err error) {
	defer func() {
		if p := recover(); p != nil {
			var zero Out
			out, err = zero, panicError(logger, method, p)
		}
	}()
	return handle(ctx, r.GetRequest())
}
