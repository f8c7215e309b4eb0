package plugin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// scriptedHost answers HandleMessage with fn and counts how each call came:
// over the call stream or as a unary RPC.
type scriptedHost struct {
	fn func(ctx context.Context, req *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error)
}

func (h *scriptedHost) HandleMessage(ctx context.Context, req *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error) {
	return h.fn(ctx, req)
}
func (h *scriptedHost) CancelTurn(context.Context, *pb.CancelTurnRequest) (*pb.CancelTurnResponse, error) {
	return nil, ErrUnimplemented
}
func (h *scriptedHost) ListTools(context.Context) ([]*pb.ToolDefinition, error) { return nil, nil }

// countingHostService counts which RPC carried each HandleMessage, and can
// misbehave on the call stream the ways a peer can.
type countingHostService struct {
	*hostServiceServer
	unary, streams, attempts atomic.Int32
	noStream                 bool // answer HandleMessages Unimplemented, like a host without 1.2
	// streamMode makes the stream misbehave: "end" ends it cleanly after
	// reading one call, "fail" ends it with an error after reading one
	// call, "failAtOnce" ends it with an error before reading anything,
	// "noRead" never reads it (a frozen host), "stall" reads and answers
	// the first call and then stops reading.
	streamMode atomic.Value // string
}

// stallingStream reads one call from its stream, then stops reading
// (Recv waits for the stream's end), as a host that froze mid-stream.
type stallingStream struct {
	pb.HostService_HandleMessagesServer
	reads atomic.Int32
}

func (s *stallingStream) Recv() (*pb.HandleMessagesRequest, error) {
	if s.reads.Add(1) == 1 {
		return s.HostService_HandleMessagesServer.Recv()
	}
	<-s.Context().Done()
	return nil, s.Context().Err()
}

func (s *countingHostService) mode() string {
	m, _ := s.streamMode.Load().(string)
	return m
}

func (s *countingHostService) HandleMessage(ctx context.Context, req *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error) {
	s.unary.Add(1)
	return s.hostServiceServer.HandleMessage(ctx, req)
}

func (s *countingHostService) HandleMessages(stream pb.HostService_HandleMessagesServer) error {
	s.attempts.Add(1)
	if s.noStream {
		return status.Error(codes.Unimplemented, "method HandleMessages not implemented")
	}
	s.streams.Add(1)
	mode := s.mode()
	switch mode {
	case "end", "fail":
		if _, err := stream.Recv(); err != nil {
			return err
		}
		if mode == "fail" {
			return status.Error(codes.Internal, "the host's stream handler failed")
		}
		return nil
	case "failAtOnce":
		return status.Error(codes.Internal, "the host's stream handler failed")
	case "noRead":
		<-stream.Context().Done()
		return nil
	case "stall":
		return s.hostServiceServer.HandleMessages(&stallingStream{HostService_HandleMessagesServer: stream})
	}
	return s.hostServiceServer.HandleMessages(stream)
}

type callFixture struct {
	svc    *countingHostService
	srv    *grpc.Server
	client *hostClient
	logs   *strings.Builder
	logMu  *sync.Mutex
}

// newCallFixture serves fn as the host's HandleMessage on a real gRPC
// server on loopback, both ends with the contract's options, and returns the plugin's client of a host of contract
// minor hostMinor.
func newCallFixture(t *testing.T, hostMinor uint32, noStream bool,
	fn func(ctx context.Context, req *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error)) *callFixture {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	var mu sync.Mutex
	logger := hclog.New(&hclog.LoggerOptions{Output: lockedWriter{&mu, &logs}})
	svc := &countingHostService{
		hostServiceServer: &hostServiceServer{hs: NewHostServer(&scriptedHost{fn: fn}, 0), logger: logger},
		noStream:          noStream,
	}
	srv := grpc.NewServer(ServerOptions(logger)...)
	pb.RegisterHostServiceServer(srv, svc)
	go func() { _ = srv.Serve(ln) }()
	conn, err := grpc.NewClient(ln.Addr().String(), append(DialOptions(), grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	f := &callFixture{svc: svc, srv: srv, client: newHostClient(conn, hostMinor), logs: &logs, logMu: &mu}
	t.Cleanup(func() {
		srv.Stop()
		_ = f.client.Close()
	})
	return f
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func echoTurn(_ context.Context, req *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error) {
	return &pb.HandleMessageResponse{TurnId: "turn-" + req.GetChatId()}, nil
}

// echoAfter answers like echoTurn after n%spread milliseconds, n being the
// number the chat id carries (read with format), so that answers come back
// in another order than the calls went out.
func echoAfter(format string, spread int) func(context.Context, *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error) {
	return func(ctx context.Context, req *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error) {
		var n int
		fmt.Sscanf(req.GetChatId(), format, &n)
		time.Sleep(time.Duration(n%spread) * time.Millisecond)
		return echoTurn(ctx, req)
	}
}

func callCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestCallStreamMatchesEachAnswerToItsCall(t *testing.T) {
	// Answers come back in a different order than the calls went out (a
	// random delay each); every caller must still get its own.
	f := newCallFixture(t, 2, false, echoAfter("chat-%d", 7))
	ctx := callCtx(t)
	const calls = 300
	var wg sync.WaitGroup
	errs := make(chan error, calls)
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			chat := fmt.Sprintf("chat-%d", i)
			resp, err := f.client.HandleMessage(ctx, &pb.HandleMessageRequest{ChatId: chat})
			if err != nil {
				errs <- fmt.Errorf("call %d: %w", i, err)
				return
			}
			if got, want := resp.GetTurnId(), "turn-"+chat; got != want {
				errs <- fmt.Errorf("call %d got the answer %q, want %q", i, got, want)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if u, s := f.svc.unary.Load(), f.svc.streams.Load(); u != 0 || s != 1 {
		t.Errorf("calls travelled as %d unary RPCs on %d streams; want 0 unary on 1 stream", u, s)
	}
}

func TestCallStreamFailsACallAsTheUnaryRPCWould(t *testing.T) {
	fail := func(_ context.Context, req *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error) {
		return nil, fmt.Errorf("chat %q is closed: %w", req.GetChatId(), ErrNotReady)
	}
	unary := newCallFixture(t, 1, false, fail)
	streamed := newCallFixture(t, 2, false, fail)
	ctx := callCtx(t)
	_, uerr := unary.client.HandleMessage(ctx, &pb.HandleMessageRequest{ChatId: "c1"})
	_, serr := streamed.client.HandleMessage(ctx, &pb.HandleMessageRequest{ChatId: "c1"})
	if uerr == nil || serr == nil {
		t.Fatalf("errors: unary %v, stream %v; want both to fail", uerr, serr)
	}
	if uerr.Error() != serr.Error() {
		t.Errorf("stream error %q, unary error %q; want the same", serr, uerr)
	}
	if status.Code(serr) != codes.FailedPrecondition || !errors.Is(serr, ErrNotReady) {
		t.Errorf("stream error %v: code %v, errors.Is(ErrNotReady) %v; want FailedPrecondition matching ErrNotReady",
			serr, status.Code(serr), errors.Is(serr, ErrNotReady))
	}
	if streamed.svc.streams.Load() != 1 || unary.svc.unary.Load() != 1 || streamed.svc.unary.Load() != 0 {
		t.Errorf("minor 1 made %d unary calls, minor 2 %d unary calls on %d streams; want 1, 0, 1",
			unary.svc.unary.Load(), streamed.svc.unary.Load(), streamed.svc.streams.Load())
	}
}

func TestCallThatGRPCCannotMarshalFailsAlone(t *testing.T) {
	// A string field that is not UTF-8 (a host that cut model text
	// mid-rune): gRPC cannot marshal the request. The call must fail as
	// the unary call does, and neither the stream nor the calls in flight
	// on it may notice, whether it comes first (three such sends on fresh
	// streams would count as dead streams) or while a call is in flight.
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	defer unblock()
	f := newCallFixture(t, 2, false, func(ctx context.Context, req *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error) {
		if req.GetChatId() == "slow" {
			started <- struct{}{}
			<-release
		}
		return echoTurn(ctx, req)
	})
	ctx := callCtx(t)
	bad := &pb.HandleMessageRequest{ChatId: "bad\xff"}
	_, uerr := f.client.handleMessageUnary(ctx, bad)
	if status.Code(uerr) != codes.Internal {
		t.Fatalf("unary call with a non-UTF-8 string: %v; want Internal", uerr)
	}
	for i := range maxDeadStreams {
		if _, err := f.client.HandleMessage(ctx, bad); err == nil || err.Error() != uerr.Error() {
			t.Fatalf("bad call %d before any stream: %v; want the unary error %q", i, err, uerr)
		}
	}
	if resp, err := f.client.HandleMessage(ctx, &pb.HandleMessageRequest{ChatId: "first"}); err != nil || resp.GetTurnId() != "turn-first" {
		t.Fatalf("first good call: %v, %v", resp, err)
	}
	slow := make(chan error, 1)
	go func() {
		resp, err := f.client.HandleMessage(ctx, &pb.HandleMessageRequest{ChatId: "slow"})
		if err == nil && resp.GetTurnId() != "turn-slow" {
			err = fmt.Errorf("answer %v", resp)
		}
		slow <- err
	}()
	<-started
	if _, err := f.client.HandleMessage(ctx, bad); err == nil || err.Error() != uerr.Error() {
		t.Errorf("bad call while another is in flight: %v; want the unary error %q", err, uerr)
	}
	unblock()
	if err := <-slow; err != nil {
		t.Fatalf("the call in flight while a bad call was made: %v; want its answer", err)
	}
	if s, u := f.svc.streams.Load(), f.svc.unary.Load(); s != 1 || u != 0 {
		t.Errorf("good calls travelled on %d streams and as %d unary RPCs; want 1 stream, 0 unary", s, u)
	}
}

func TestCallStreamCarriesTheCallersDeadline(t *testing.T) {
	deadlines := make(chan time.Duration, 1)
	f := newCallFixture(t, 2, false, func(ctx context.Context, req *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error) {
		d, ok := ctx.Deadline()
		if !ok {
			deadlines <- -1
		} else {
			deadlines <- time.Until(d)
		}
		return echoTurn(ctx, req)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := f.client.HandleMessage(ctx, &pb.HandleMessageRequest{ChatId: "c"}); err != nil {
		t.Fatal(err)
	}
	if d := <-deadlines; d <= 0 || d > 3*time.Second {
		t.Errorf("the handler's deadline was %v away; want the caller's (at most 3s, some left)", d)
	}
	if _, err := f.client.HandleMessage(context.Background(), &pb.HandleMessageRequest{ChatId: "c"}); err != nil {
		t.Fatal(err)
	}
	if d := <-deadlines; d != -1 {
		t.Errorf("a call without deadline reached the handler with one %v away", d)
	}
}

func TestCallStreamPanicFailsOnlyThatCall(t *testing.T) {
	f := newCallFixture(t, 2, false, func(ctx context.Context, req *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error) {
		if req.GetChatId() == "boom" {
			panic("handler exploded")
		}
		return echoTurn(ctx, req)
	})
	ctx := callCtx(t)
	_, err := f.client.HandleMessage(ctx, &pb.HandleMessageRequest{ChatId: "boom"})
	if status.Code(err) != codes.Internal || !strings.Contains(err.Error(), "HandleMessages") {
		t.Fatalf("panicking call: %v; want codes.Internal naming the method", err)
	}
	resp, err := f.client.HandleMessage(ctx, &pb.HandleMessageRequest{ChatId: "after"})
	if err != nil || resp.GetTurnId() != "turn-after" {
		t.Fatalf("call after the panic: %v, %v; want it answered on the same stream", resp, err)
	}
	if s := f.svc.streams.Load(); s != 1 {
		t.Errorf("%d streams; want the stream to survive the panic", s)
	}
	f.logMu.Lock()
	defer f.logMu.Unlock()
	if !strings.Contains(f.logs.String(), "handler exploded") {
		t.Errorf("the panic was not logged; log:\n%s", f.logs.String())
	}
}

func TestCallStreamFallsBackToUnaryWhenTheHostLacksIt(t *testing.T) {
	f := newCallFixture(t, 2, true, echoTurn)
	ctx := callCtx(t)
	for i := range 3 {
		resp, err := f.client.HandleMessage(ctx, &pb.HandleMessageRequest{ChatId: fmt.Sprint(i)})
		if err != nil || resp.GetTurnId() != fmt.Sprintf("turn-%d", i) {
			t.Fatalf("call %d: %v, %v", i, resp, err)
		}
	}
	if u, a := f.svc.unary.Load(), f.svc.attempts.Load(); u != 3 || a != 1 {
		t.Errorf("%d unary calls after %d stream attempts; want all 3 calls unary after a single attempt (for good)", u, a)
	}
}

func TestCallStreamEndedByTheHostFailsTheCallWithoutRetrying(t *testing.T) {
	// A stream the host ended after reading a call: the host may have
	// handled it, so the call must fail as "outcome unknown", never be
	// sent again as a unary RPC.
	for _, mode := range []string{"end", "fail"} {
		t.Run(mode, func(t *testing.T) {
			f := newCallFixture(t, 2, false, echoTurn)
			f.svc.streamMode.Store(mode)
			_, err := f.client.HandleMessage(callCtx(t), &pb.HandleMessageRequest{ChatId: "c"})
			if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "outcome is unknown") {
				t.Fatalf("call on a stream the host ended: %v; want Unavailable, outcome unknown", err)
			}
			if u := f.svc.unary.Load(); u != 0 {
				t.Errorf("the call was repeated as %d unary RPCs", u)
			}
			// The next call opens a new stream.
			f.svc.streamMode.Store("")
			if resp, err := f.client.HandleMessage(callCtx(t), &pb.HandleMessageRequest{ChatId: "next"}); err != nil || resp.GetTurnId() != "turn-next" {
				t.Fatalf("next call: %v, %v", resp, err)
			}
			if s := f.svc.streams.Load(); s != 2 {
				t.Errorf("%d streams; want 2", s)
			}
		})
	}
}

func TestStreamsThatNeverAnswerMakeTheCallerUseUnary(t *testing.T) {
	f := newCallFixture(t, 2, false, echoTurn)
	f.svc.streamMode.Store("failAtOnce")
	ctx := callCtx(t)
	for i := range maxDeadStreams {
		// Each call opens a stream that dies at once. If it died before
		// the writer took the call, the call never left and is made as a
		// unary RPC (and succeeds); otherwise its outcome is unknown.
		resp, err := f.client.HandleMessage(ctx, &pb.HandleMessageRequest{ChatId: "c"})
		if err != nil && status.Code(err) != codes.Unavailable || err == nil && resp.GetTurnId() != "turn-c" {
			t.Fatalf("call %d on a failing stream: %v, %v; want Unavailable or the answer", i, resp, err)
		}
	}
	before := f.svc.unary.Load()
	for i := range 2 {
		resp, err := f.client.HandleMessage(ctx, &pb.HandleMessageRequest{ChatId: "then"})
		if err != nil || resp.GetTurnId() != "turn-then" {
			t.Fatalf("call %d after %d dead streams: %v, %v; want it made as a unary RPC", i, maxDeadStreams, resp, err)
		}
	}
	if u, a := f.svc.unary.Load()-before, f.svc.attempts.Load(); u != 2 || a != maxDeadStreams {
		t.Errorf("%d unary calls after the dead streams, %d stream attempts in all; want 2 and %d", u, a, maxDeadStreams)
	}
}

func TestCallStreamAnswersNilResponseAsInternal(t *testing.T) {
	f := newCallFixture(t, 2, false, func(context.Context, *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error) {
		return nil, nil
	})
	_, err := f.client.HandleMessage(callCtx(t), &pb.HandleMessageRequest{ChatId: "c"})
	if status.Code(err) != codes.Internal {
		t.Fatalf("a handler that returned (nil, nil): %v; want codes.Internal, as a unary RPC fails", err)
	}
}

func TestCallerWaitsForAStuckConnectionNoLongerThanItsDeadline(t *testing.T) {
	// A peer that accepts the connection but never speaks HTTP/2: opening
	// the stream hangs, the callers must not.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	client := newHostClient(conn, 2)
	defer client.Close()
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err := client.HandleMessage(ctx, &pb.HandleMessageRequest{ChatId: "c"})
			if status.Code(err) != codes.DeadlineExceeded {
				t.Errorf("caller %d: %v; want DeadlineExceeded", i, err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("caller %d waited %v past a 200ms deadline", i, d)
			}
		}()
	}
	wg.Wait()
}

func TestCallsOnAStreamThatHasNotAnsweredGoThroughTheWriter(t *testing.T) {
	// Until a stream has answered, gRPC may hold a send on it (waiting for
	// the connection, retrying the stream), so a caller must not send its
	// call itself; once it has answered, an idle stream takes the next
	// call from its caller (sendDirect).
	f := newCallFixture(t, 2, false, echoTurn)
	ctx := callCtx(t)
	direct := func() int64 {
		f.client.messages.mu.Lock()
		cc := f.client.messages.cur
		f.client.messages.mu.Unlock()
		cc.sendMu.Lock()
		defer cc.sendMu.Unlock()
		return cc.direct
	}
	if resp, err := f.client.HandleMessage(ctx, &pb.HandleMessageRequest{ChatId: "first"}); err != nil || resp.GetTurnId() != "turn-first" {
		t.Fatalf("first call: %v, %v", resp, err)
	}
	if n := direct(); n != 0 {
		t.Errorf("%d calls sent by their callers on a stream that had answered nothing; want 0", n)
	}
	if resp, err := f.client.HandleMessage(ctx, &pb.HandleMessageRequest{ChatId: "second"}); err != nil || resp.GetTurnId() != "turn-second" {
		t.Fatalf("second call: %v, %v", resp, err)
	}
	if n := direct(); n != 1 {
		t.Errorf("%d calls sent by their callers after the first answer, on an idle stream; want 1", n)
	}
	if s := f.svc.streams.Load(); s != 1 {
		t.Errorf("calls travelled on %d streams; want 1", s)
	}
}

func TestCallToAFrozenHostGivesUpAtItsDeadline(t *testing.T) {
	// The host stops reading its stream: gRPC's flow control holds the
	// send, and the caller's deadline must still end the call. Eight calls
	// of 255 KiB, one after another: more than the stream's flow-control
	// window (1 MiB, windowBytes) and gRPC's write quota (64 KiB) take, so
	// that the sends after the fifth or sixth wait.
	f := newCallFixture(t, 2, false, echoTurn)
	f.svc.streamMode.Store("noRead")
	big := &pb.HandleMessageRequest{ChatId: "big", Parts: []*pb.Part{{Content: &pb.Part_Raw{Raw: make([]byte, callStreamMaxBytes-1024)}}}}
	const calls = 8
	done := make(chan error, 1)
	go func() {
		for i := range calls {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			_, err := f.client.HandleMessage(ctx, big)
			cancel()
			if c := status.Code(err); c != codes.DeadlineExceeded && c != codes.Unavailable {
				done <- fmt.Errorf("call %d to a frozen host: %v; want DeadlineExceeded or Unavailable", i, err)
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%d calls with 200ms deadlines had not all returned 10s later", calls)
	}
}

func TestCallerThatGivesUpGetsItsContextError(t *testing.T) {
	release := make(chan struct{})
	f := newCallFixture(t, 2, false, func(ctx context.Context, req *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error) {
		if req.GetChatId() == "slow" {
			<-release
		}
		return echoTurn(ctx, req)
	})
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := f.client.HandleMessage(ctx, &pb.HandleMessageRequest{ChatId: "slow"})
	if status.Code(err) != codes.DeadlineExceeded || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("abandoned call: %v; want DeadlineExceeded", err)
	}
	f.client.messages.mu.Lock()
	left := len(f.client.messages.cur.pending)
	f.client.messages.mu.Unlock()
	if left != 0 {
		t.Errorf("%d calls still pending after their caller gave up", left)
	}
	// The stream still serves other calls while the slow one is stuck.
	if resp, err := f.client.HandleMessage(callCtx(t), &pb.HandleMessageRequest{ChatId: "next"}); err != nil || resp.GetTurnId() != "turn-next" {
		t.Fatalf("next call: %v, %v", resp, err)
	}
}

func TestBrokenCallStreamFailsWaitingCallsAndReopens(t *testing.T) {
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	var block atomic.Bool
	block.Store(true)
	f := newCallFixture(t, 2, false, func(ctx context.Context, req *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error) {
		if block.Load() {
			started <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return echoTurn(ctx, req)
	})
	defer close(release)
	ctx := callCtx(t)
	done := make(chan error, 1)
	go func() {
		_, err := f.client.HandleMessage(ctx, &pb.HandleMessageRequest{ChatId: "waiting"})
		done <- err
	}()
	<-started
	// Break the stream under the waiting call, as a host that closes its
	// end would, without closing the connection.
	f.client.messages.mu.Lock()
	cc := f.client.messages.cur
	f.client.messages.mu.Unlock()
	cc.cancel()
	select {
	case err := <-done:
		if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "outcome is unknown") {
			t.Fatalf("call on the broken stream: %v; want Unavailable saying the outcome is unknown", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call on the broken stream did not fail")
	}
	block.Store(false)
	if resp, err := f.client.HandleMessage(ctx, &pb.HandleMessageRequest{ChatId: "later"}); err != nil || resp.GetTurnId() != "turn-later" {
		t.Fatalf("call after the break: %v, %v; want a new stream", resp, err)
	}
	if s := f.svc.streams.Load(); s != 2 {
		t.Errorf("%d streams opened; want 2 (the broken one and its successor)", s)
	}
}

// platformCounter is a Platform whose Send answers with the chat id and
// counts calls; the other methods are never called here.
type platformCounter struct {
	Platform
	sends atomic.Int32
}

func (p *platformCounter) Send(_ context.Context, req *pb.SendRequest) (*pb.SendResponse, error) {
	p.sends.Add(1)
	if req.GetChatId() == "" {
		return nil, fmt.Errorf("send needs a chat_id: %w", ErrInvalidArgument)
	}
	return &pb.SendResponse{MessageId: "m-" + req.GetChatId()}, nil
}

func TestSendTravelsOnTheCallStreamOnlyForPluginsOf12(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	impl := &platformCounter{}
	var streams atomic.Int32
	srv := grpc.NewServer(grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if info.FullMethod == pb.PlatformAdapterService_SendStream_FullMethodName {
			streams.Add(1)
		}
		return handler(srv, ss)
	}))
	if err := (&PlatformGRPCPlugin{Impl: impl}).GRPCServer(nil, srv); err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Stop()
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := callCtx(t)
	for _, minor := range []uint32{1, 2} {
		raw, err := (&PlatformGRPCPlugin{}).GRPCClient(ctx, nil, conn)
		if err != nil {
			t.Fatal(err)
		}
		p := raw.(Platform)
		UseCallStreams(p, minor)
		before := streams.Load()
		resp, err := p.Send(ctx, &pb.SendRequest{ChatId: "c"})
		if err != nil || resp.GetMessageId() != "m-c" {
			t.Fatalf("minor %d: Send: %v, %v", minor, resp, err)
		}
		if _, err := p.Send(ctx, &pb.SendRequest{}); status.Code(err) != codes.InvalidArgument || !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("minor %d: bad Send: %v; want InvalidArgument matching ErrInvalidArgument", minor, err)
		}
		want := int32(0)
		if minor >= 2 {
			want = 1
		}
		if got := streams.Load() - before; got != want {
			t.Errorf("minor %d: %d SendStream streams opened; want %d", minor, got, want)
		}
	}
	if n := impl.sends.Load(); n != 4 {
		t.Errorf("the platform saw %d sends; want 4", n)
	}
}

func TestLargeCallGoesAsUnaryRPC(t *testing.T) {
	f := newCallFixture(t, 2, false, echoTurn)
	ctx := callCtx(t)
	big := &pb.HandleMessageRequest{ChatId: "big", Parts: []*pb.Part{{Content: &pb.Part_Raw{Raw: make([]byte, callStreamMaxBytes+1)}}}}
	if resp, err := f.client.HandleMessage(ctx, big); err != nil || resp.GetTurnId() != "turn-big" {
		t.Fatalf("large call: %v, %v", resp, err)
	}
	if resp, err := f.client.HandleMessage(ctx, &pb.HandleMessageRequest{ChatId: "small"}); err != nil || resp.GetTurnId() != "turn-small" {
		t.Fatalf("small call: %v, %v", resp, err)
	}
	if u, s := f.svc.unary.Load(), f.svc.streams.Load(); u != 1 || s != 1 {
		t.Errorf("%d unary calls on %d streams; want the large call unary and the small one on the stream", u, s)
	}
}

func TestCancelledCallerCancelsTheHandler(t *testing.T) {
	// As with a unary RPC, the handler's context ends when its caller
	// gives up.
	started := make(chan struct{})
	handlerErr := make(chan error, 1)
	f := newCallFixture(t, 2, false, func(ctx context.Context, req *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error) {
		close(started)
		select {
		case <-ctx.Done():
			handlerErr <- ctx.Err()
		case <-time.After(10 * time.Second):
			handlerErr <- errors.New("the handler's context never ended")
		}
		return nil, ctx.Err()
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := f.client.HandleMessage(ctx, &pb.HandleMessageRequest{ChatId: "c"})
		done <- err
	}()
	<-started
	cancel()
	if err := <-done; status.Code(err) != codes.Canceled {
		t.Fatalf("cancelled call: %v; want Canceled", err)
	}
	if err := <-handlerErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("handler: %v; want its context cancelled", err)
	}
}

func TestServedStreamAnswersCallsInFlightAfterTheCallerClosesItsSide(t *testing.T) {
	// A gRPC stream must not be written after its handler returned: the
	// handler waits for its calls, so their answers still arrive.
	release := make(chan struct{})
	f := newCallFixture(t, 2, false, func(ctx context.Context, req *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error) {
		<-release
		return echoTurn(ctx, req)
	})
	st, err := f.client.client.HandleMessages(callCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&pb.HandleMessagesRequest{CallId: 7, Request: &pb.HandleMessageRequest{ChatId: "late"}}); err != nil {
		t.Fatal(err)
	}
	if err := st.CloseSend(); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(200*time.Millisecond, func() { close(release) })
	resp, err := st.Recv()
	if err != nil || resp.GetCallId() != 7 || resp.GetResponse().GetTurnId() != "turn-late" {
		t.Fatalf("answer after CloseSend: %v, %v; want call 7 answered", resp, err)
	}
}

func TestCallersGivingUpDoNotFailOtherCalls(t *testing.T) {
	// Callers with deadlines of a few milliseconds give up all the time
	// while others, with ample time, must all get their answers.
	f := newCallFixture(t, 2, false, echoAfter("%d", 6))
	payload := []*pb.Part{{Content: &pb.Part_Raw{Raw: make([]byte, 2048)}}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; ; j++ {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(1+j%3)*time.Millisecond)
				_, _ = f.client.HandleMessage(ctx, &pb.HandleMessageRequest{ChatId: fmt.Sprint(i*1000 + j), Parts: payload})
				cancel()
			}
		}()
	}
	errs := make(chan error, 400)
	var patient sync.WaitGroup
	for i := range 8 {
		patient.Add(1)
		go func() {
			defer patient.Done()
			for j := range 50 {
				chat := fmt.Sprintf("%d", 100000+i*100+j)
				resp, err := f.client.HandleMessage(callCtx(t), &pb.HandleMessageRequest{ChatId: chat, Parts: payload})
				if err != nil || resp.GetTurnId() != "turn-"+chat {
					errs <- fmt.Errorf("patient call %s: %v, %v", chat, resp, err)
				}
			}
		}()
	}
	patient.Wait()
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if f.svc.unary.Load() != 0 {
		t.Errorf("%d calls went unary: impatient callers made the client give up on streams", f.svc.unary.Load())
	}
}

func TestCancelledCallerReturnsAlthoughTheHostStoppedReading(t *testing.T) {
	f := newCallFixture(t, 2, false, echoTurn)
	f.svc.streamMode.Store("noRead")
	big := &pb.HandleMessageRequest{ChatId: "big", Parts: []*pb.Part{{Content: &pb.Part_Raw{Raw: make([]byte, callStreamMaxBytes-1024)}}}}
	for range 6 {
		// Six calls of 255 KiB fill the stream's flow-control window (1
		// MiB, windowBytes) and gRPC's write quota (64 KiB) and hold the
		// writer.
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, _ = f.client.HandleMessage(ctx, big)
		}()
	}
	time.Sleep(200 * time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	done := make(chan error, 1)
	go func() {
		_, err := f.client.HandleMessage(ctx, big)
		done <- err
	}()
	select {
	case err := <-done:
		if status.Code(err) != codes.Canceled {
			t.Fatalf("cancelled call: %v; want Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled call had not returned 5s later")
	}
}

func TestSmallCallsToAHostThatStoppedReadingGiveUpAtTheirDeadlines(t *testing.T) {
	// Calls small enough for their callers to send them on an idle stream
	// that has answered (directSendBytes), four callers one call after
	// another, more than the stream's flow-control window (1 MiB) and
	// gRPC's write quota hold: once the host stops reading, no caller may
	// be the one left waiting in gRPC's send.
	f := newCallFixture(t, 2, false, echoTurn)
	f.svc.streamMode.Store("stall")
	req := &pb.HandleMessageRequest{ChatId: "small", Parts: []*pb.Part{{Content: &pb.Part_Raw{Raw: make([]byte, 12<<10)}}}}
	if _, err := f.client.HandleMessage(callCtx(t), req); err != nil {
		t.Fatalf("the call the host answers before it stops reading: %v", err)
	}
	const callers = 4
	done := make(chan error, callers)
	for n := range callers {
		go func() {
			for i := range 40 { // 160 calls of 12 KiB: 1.9 MiB
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
				_, err := f.client.HandleMessage(ctx, req)
				cancel()
				if c := status.Code(err); c != codes.DeadlineExceeded && c != codes.Unavailable {
					done <- fmt.Errorf("caller %d, call %d to a host that stopped reading: %v; want DeadlineExceeded or Unavailable", n, i, err)
					return
				}
				// Lets the writer send the cancel of this call, so that
				// the next call finds nothing queued and sends itself.
				time.Sleep(2 * time.Millisecond)
			}
			done <- nil
		}()
	}
	timeout := time.After(10 * time.Second)
	for range callers {
		select {
		case err := <-done:
			if err != nil {
				t.Error(err)
			}
		case <-timeout:
			t.Fatal("calls with 10ms deadlines had not all returned 10s later")
		}
	}
}

// fakeCallStream is the caller's half of a call stream whose other side
// the test plays: Send hands each envelope to sent (and, while hold is set,
// waits for gate), Recv returns what the test puts in answers.
type fakeCallStream struct {
	ctx     context.Context
	sent    chan *pb.HandleMessagesRequest
	answers chan *pb.HandleMessagesResponse
	gate    chan struct{}
	hold    atomic.Bool
}

func (s *fakeCallStream) Send(r *pb.HandleMessagesRequest) error {
	s.sent <- r
	if s.hold.Load() {
		<-s.gate
	}
	return nil
}

func (s *fakeCallStream) Recv() (*pb.HandleMessagesResponse, error) {
	select {
	case a := <-s.answers:
		return a, nil
	case <-s.ctx.Done():
		return nil, s.ctx.Err()
	}
}

func TestAnswerToACallerThatGaveUpDoesNotReachTheNextCall(t *testing.T) {
	// A caller gives up (its context ends) after the receiver has taken
	// its call out of pending and put the answer in its channel: that
	// pendingCall must not serve the next call, which must get its own
	// answer. The caller's select between its answer and its context
	// picks either at random, so this is repeated until it has given up
	// ten times.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := &fakeCallStream{ctx: ctx, sent: make(chan *pb.HandleMessagesRequest, 16),
		answers: make(chan *pb.HandleMessagesResponse), gate: make(chan struct{})}
	c := &callClient[*pb.HandleMessageRequest, *pb.HandleMessageResponse, *pb.HandleMessagesRequest, *pb.HandleMessagesResponse]{
		open: func(context.Context) (callStreamClient[*pb.HandleMessagesRequest, *pb.HandleMessagesResponse], error) {
			return st, nil
		},
		wrap: func(id uint64, timeoutMS uint32, in *pb.HandleMessageRequest) *pb.HandleMessagesRequest {
			return &pb.HandleMessagesRequest{CallId: id, Request: in, TimeoutMs: timeoutMS}
		},
		cancel: func(id uint64) *pb.HandleMessagesRequest {
			return &pb.HandleMessagesRequest{CallId: id, Cancel: true}
		},
		unary: func(context.Context, *pb.HandleMessageRequest) (*pb.HandleMessageResponse, error) {
			return nil, errors.New("unexpected unary call")
		},
	}
	defer c.close()
	type result struct {
		resp *pb.HandleMessageResponse
		err  error
	}
	start := func(ctx context.Context, chat string) chan result {
		res := make(chan result, 1)
		go func() {
			resp, err := c.call(ctx, &pb.HandleMessageRequest{ChatId: chat})
			res <- result{resp, err}
		}()
		return res
	}
	// The waits below are bounded so that a wrong answer fails the test
	// rather than leaving it stuck (a receiver blocked on a full channel).
	stuck := func() <-chan time.Time { return time.After(10 * time.Second) }
	sent := func() *pb.HandleMessagesRequest {
		select {
		case env := <-st.sent:
			return env
		case <-stuck():
			t.Fatal("no call was sent within 10s")
			return nil
		}
	}
	answer := func(env *pb.HandleMessagesRequest) {
		select {
		case st.answers <- &pb.HandleMessagesResponse{CallId: env.GetCallId(),
			Response: &pb.HandleMessageResponse{TurnId: "turn-" + env.GetRequest().GetChatId()}}:
		case <-stuck():
			t.Fatalf("the receiver did not take the answer to call %d within 10s", env.GetCallId())
		}
	}
	returned := func(res chan result, chat string) result {
		select {
		case r := <-res:
			return r
		case <-stuck():
			t.Fatalf("call %s had not returned 10s after its answer", chat)
			return result{}
		}
	}
	// roundTrip makes one call, answered at once, and checks its answer.
	roundTrip := func(chat string) {
		res := start(callCtx(t), chat)
		answer(sent())
		if r := returned(res, chat); r.err != nil || r.resp.GetTurnId() != "turn-"+chat {
			t.Fatalf("call %s: %v, %v; want its own answer", chat, r.resp, r.err)
		}
	}
	roundTrip("first") // the stream has answered: the next calls are sent by their callers
	gaveUp := 0
	for i := 0; gaveUp < 10 && i < 500; i++ {
		st.hold.Store(true)
		actx, acancel := context.WithCancel(context.Background())
		chat := fmt.Sprint("a", i)
		res := start(actx, chat)
		env := sent() // the caller is in its Send, held
		c.mu.Lock()
		p := c.cur.pending[env.GetCallId()]
		c.mu.Unlock()
		if p == nil {
			t.Fatalf("call %s is not pending while its caller sends it", chat)
		}
		acancel()
		answer(env)
		for wait := time.Now(); len(p.ch) == 0; { // the receiver takes the call and answers it
			if time.Since(wait) > 10*time.Second {
				t.Fatalf("the answer to call %s had not reached its channel 10s later", chat)
			}
			time.Sleep(time.Millisecond)
		}
		st.hold.Store(false)
		st.gate <- struct{}{}
		r := returned(res, chat)
		switch {
		case r.err == nil && r.resp.GetTurnId() != "turn-"+chat:
			t.Fatalf("call %s: answer %v; want its own", chat, r.resp)
		case r.err != nil && status.Code(r.err) != codes.Canceled:
			t.Fatalf("call %s: %v; want its answer or Canceled", chat, r.err)
		case r.err != nil:
			gaveUp++
		}
		roundTrip(fmt.Sprint("b", i))
	}
	if gaveUp < 10 {
		t.Fatalf("the caller gave up %d times with its answer waiting; want 10", gaveUp)
	}
}

func TestPutCallDropsACallWithAnAnswerInIt(t *testing.T) {
	var c callClient[*pb.HandleMessageRequest, *pb.HandleMessageResponse, *pb.HandleMessagesRequest, *pb.HandleMessagesResponse]
	for range 20 {
		p := c.getCall()
		p.ch <- callResult[*pb.HandleMessageResponse]{out: &pb.HandleMessageResponse{TurnId: "stale"}}
		c.putCall(p)
		if q := c.getCall(); len(q.ch) != 0 {
			t.Fatalf("getCall returned a pendingCall holding an answer (%v)", (<-q.ch).out)
		}
	}
}
