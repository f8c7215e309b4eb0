package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// The second floor, floor-hop, is the cheapest possible version of our
// process layout: the floor's HTTP process answers each request only after
// one gRPC round trip, over a long-lived bidirectional stream, to a child
// process it started (as the plugin answers only after its host did). The
// child echoes the message's parts back; the answer is built from what
// came back. No turn bookkeeping, no second call (our host also calls
// back with Send), no store: what ours spends above this floor is the
// price of its features, not of the process boundary itself.

// hopService is the child's one RPC: a bidirectional stream of framed
// calls, each an 8-byte call id and the payload, answered in any order.
const hopService = "bench.Hop"

var hopStream = grpc.StreamDesc{StreamName: "Call", ServerStreams: true, ClientStreams: true}

// hopChildMain is "a2a-bench floor-child": serve the echo stream on a
// loopback port, print it, stop when stdin closes (the parent is gone).
func hopChildMain(args []string) int {
	fs := flag.NewFlagSet("a2a-bench floor-child", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintf(os.Stderr, "floor-child: %v\n", err)
		return exitError
	}
	s := grpc.NewServer()
	s.RegisterService(&grpc.ServiceDesc{ServiceName: hopService, HandlerType: (*any)(nil), Streams: []grpc.StreamDesc{{
		StreamName: hopStream.StreamName, ServerStreams: true, ClientStreams: true, Handler: hopEcho,
	}}}, nil)
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		s.Stop()
	}()
	fmt.Printf("LISTENING %s\n", ln.Addr())
	if err := s.Serve(ln); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		fmt.Fprintf(os.Stderr, "floor-child: %v\n", err)
		return exitError
	}
	return exitOK
}

// hopEcho answers every call on the stream with its own payload, in the
// reading goroutine: the echo costs nothing, so nothing is gained by
// handing it elsewhere.
func hopEcho(_ any, ss grpc.ServerStream) error {
	in := new(wrapperspb.BytesValue)
	for {
		if err := ss.RecvMsg(in); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err := ss.SendMsg(in); err != nil {
			return err
		}
	}
}

// hopClient is the parent's end: one stream, calls matched to their
// answers by id.
type hopClient struct {
	cmd    *exec.Cmd
	cc     *grpc.ClientConn
	stream grpc.ClientStream
	seq    atomic.Uint64

	wmu     sync.Mutex // one SendMsg at a time
	mu      sync.Mutex
	pending map[uint64]chan []byte
	err     error
}

// startHop starts the child (this executable, floor-child) and opens the
// stream.
func startHop(self string) (*hopClient, error) {
	cmd := exec.Command(self, "floor-child")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	_ = stdin // kept open for the child's lifetime: it stops when we exit
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "LISTENING ")
	if err != nil || !ok {
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("floor-child did not start: %q %v", line, err)
	}
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	st, err := cc.NewStream(context.Background(), &hopStream, "/"+hopService+"/"+hopStream.StreamName)
	if err != nil {
		return nil, err
	}
	h := &hopClient{cmd: cmd, cc: cc, stream: st, pending: map[uint64]chan []byte{}}
	go h.read()
	return h, nil
}

// read hands each answer to its caller.
func (h *hopClient) read() {
	for {
		in := new(wrapperspb.BytesValue)
		if err := h.stream.RecvMsg(in); err != nil {
			h.mu.Lock()
			h.err = err
			for id, ch := range h.pending {
				close(ch)
				delete(h.pending, id)
			}
			h.mu.Unlock()
			return
		}
		b := in.GetValue()
		if len(b) < 8 {
			continue
		}
		id := binary.BigEndian.Uint64(b)
		h.mu.Lock()
		ch := h.pending[id]
		delete(h.pending, id)
		h.mu.Unlock()
		if ch != nil {
			ch <- b[8:]
		}
	}
}

// call makes one round trip with payload and returns what came back.
func (h *hopClient) call(ctx context.Context, payload []byte) ([]byte, error) {
	id := h.seq.Add(1)
	ch := make(chan []byte, 1)
	h.mu.Lock()
	if h.err != nil {
		h.mu.Unlock()
		return nil, h.err
	}
	h.pending[id] = ch
	h.mu.Unlock()
	msg := make([]byte, 8+len(payload))
	binary.BigEndian.PutUint64(msg, id)
	copy(msg[8:], payload)
	h.wmu.Lock()
	err := h.stream.SendMsg(&wrapperspb.BytesValue{Value: msg})
	h.wmu.Unlock()
	if err != nil {
		return nil, err
	}
	select {
	case b, ok := <-ch:
		if !ok {
			return nil, fmt.Errorf("the hop stream broke: %v", h.err)
		}
		return b, nil
	case <-ctx.Done():
		h.mu.Lock()
		delete(h.pending, id)
		h.mu.Unlock()
		return nil, ctx.Err()
	}
}

// close ends the stream and the child.
func (h *hopClient) close() {
	_ = h.stream.CloseSend()
	_ = h.cc.Close()
	_ = h.cmd.Process.Signal(syscall.SIGTERM)
	_ = h.cmd.Wait()
}

// signalContext is the floor processes' lifetime.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}
