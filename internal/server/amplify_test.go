package server

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/grpcwire"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

// wideShapes are the metadata shapes that cost the most memory per byte
// once decoded: many tiny values (issue 27, finding 1).
var wideShapes = []struct {
	name string
	elem any
}{
	{"nulls", nil},
	{"empty objects", map[string]any{}},
	{"small strings", "a"},
	{"short words", "abcdef"}, // within the JSON budget at any size
	{"words", "abcdefghijkl"}, // within every binding's budget at any size
}

// wideSend is a SendMessage whose message metadata is {"k":[elem, …]}
// with n elements.
func wideSend(elem any, n int) *a2a.SendMessageRequest {
	vals := make([]any, n)
	for i := range vals {
		vals[i] = elem
	}
	return sendParams("hello", func(r *a2a.SendMessageRequest) {
		r.Message.Metadata = map[string]any{"k": vals}
	})
}

// allocated returns the bytes the process allocated while fn ran.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// rawCodec sends and receives gRPC messages as the bytes they already
// are, so that measuring the server leaves out the client's encoding.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }
func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(*v.(*[]byte))}, nil
}
func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*[]byte) = data.Materialize()
	return nil
}

// amplifyCase is one caller of the measurement: its token and whether
// the server lets it send.
type amplifyCase struct {
	name     string
	token    string
	accepted bool
}

var amplifyCallers = []amplifyCase{
	{"trusted", tokAlice, true},
	{"refused by the trust gate", tokCarol, false},
	{"wrong token", "not-a-token-0123456789", false},
}

// The bound on the bytes a request may cost the server, whatever its
// shape: allocFixed plus allocPerByte per byte it sends, for reading it,
// checking it, decoding it, the task it makes and the answer.
const (
	allocFixed   = 512 << 10
	allocPerByte = 32
)

// TestWideMetadataCostIsBoundedByTheRequestSize sends the wide metadata
// shapes over every binding, as a caller that is served and as callers
// that are refused, and bounds the memory each request costs the server
// per request byte. A refused caller costs no more than a small request.
func TestWideMetadataCostIsBoundedByTheRequestSize(t *testing.T) {
	gate, err := security.NewTrustGate([]string{"alice"})
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := newInstantServer(t, func(o *Options) {
		o.Auth = testAuth(t, false)
		o.Gate = gate
		o.Limits.MaxBodyBytes = 2 << 20
	})
	h := srv.Handler()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.grpc.Serve(ln) }()
	defer srv.grpc.Stop()
	cc, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()

	for _, shape := range wideShapes {
		amplifyOnce(t, h, cc, shape.name+", wide", wideSend(shape.elem, 100_000))
		if !fitsTheBudget(shape.elem, 100_000) {
			amplifyOnce(t, h, cc, shape.name+", at the budget", wideSend(shape.elem, atTheBudget(shape.elem)))
		}
	}
}

// atTheBudget is the largest number of elem values a request may hold
// over both JSON bindings and gRPC (valueBudget).
func atTheBudget(elem any) int {
	fits := func(n int) bool { return fitsTheBudget(elem, n) }
	lo, hi := 1, 2
	for fits(hi) && hi < 1<<20 {
		lo, hi = hi, 2*hi
	}
	for lo+1 < hi {
		if mid := (lo + hi) / 2; fits(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// fitsTheBudget reports whether n elem values fit the value budget over
// every binding.
func fitsTheBudget(elem any, n int) bool {
	{
		req := wideSend(elem, n)
		body, _ := a2a.MarshalRequest(1, "SendMessage", req)
		rest, _ := a2a.Marshal(req)
		if _, tooMany := scanJSON(body, 64); tooMany > 0 {
			return false
		}
		if _, tooMany := scanJSON(rest, 64); tooMany > 0 {
			return false
		}
		pr, _ := grpcwire.SendMessageRequestToProto(req)
		b, _ := proto.Marshal(pr)
		count := 0
		tooMany, _ := protoValues(b, pr.ProtoReflect().Descriptor(), &count, valueBudget(len(b)), 0)
		return !tooMany
	}
}

// amplifyOnce sends req over every binding as every caller of
// amplifyCallers and bounds what each costs the server; over the value
// budget even a trusted caller is refused.
func amplifyOnce(t *testing.T, h http.Handler, cc *grpc.ClientConn, shape string, req *a2a.SendMessageRequest) {
	{
		rpcBody, err := a2a.MarshalRequest(1, "SendMessage", req)
		if err != nil {
			t.Fatal(err)
		}
		restBody, err := a2a.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := grpcwire.SendMessageRequestToProto(req)
		if err != nil {
			t.Fatal(err)
		}
		grpcBody, err := proto.Marshal(pr)
		if err != nil {
			t.Fatal(err)
		}
		for _, caller := range amplifyCallers {
			_, rpcOver := scanJSON(rpcBody, 64)
			_, restOver := scanJSON(restBody, 64)
			count := 0
			grpcOver, _ := protoValues(grpcBody, pr.ProtoReflect().Descriptor(), &count, valueBudget(len(grpcBody)), 0)
			bindings := []struct {
				name string
				size int
				wide bool
				send func() (int, string)
			}{
				{"JSON-RPC", len(rpcBody), rpcOver > 0, func() (int, string) { return serveOnce(h, "/", caller.token, rpcBody) }},
				{"HTTP+JSON", len(restBody), restOver > 0, func() (int, string) { return serveOnce(h, "/message:send", caller.token, restBody) }},
				{"gRPC", len(grpcBody), grpcOver, func() (int, string) { return grpcOnce(cc, caller.token, grpcBody) }},
			}
			for _, b := range bindings {
				wide := b.wide
				var code int
				var answer string
				cost := allocated(func() { code, answer = b.send() })
				perByte := float64(cost) / float64(b.size)
				t.Logf("%-9s %-28s %-26s %8d request bytes: %10d allocated, %6.1f per request byte (answer %d)",
					b.name, shape, caller.name, b.size, cost, perByte, code)
				ok := code == 200 || code == 0
				switch {
				case caller.accepted && wide && !strings.Contains(answer, "JSON values"):
					t.Errorf("%s, %s, %s: answered %d %s, want the value budget's refusal", b.name, shape, caller.name, code, answer)
				case caller.accepted && !wide && !ok:
					t.Errorf("%s, %s, %s: answered %d %s", b.name, shape, caller.name, code, answer)
				case !caller.accepted && ok:
					t.Errorf("%s, %s, %s: served a caller that must be refused", b.name, shape, caller.name)
				}
				if limit := allocFixed + allocPerByte*uint64(b.size); cost > limit {
					t.Errorf("%s, %s, %s: %d bytes allocated for %d request bytes, over %d + %d per byte", b.name, shape, caller.name, cost, b.size, allocFixed, allocPerByte)
				}
			}
		}
	}
}

// serveOnce serves one POST of body through h and returns the status and
// the answer.
func serveOnce(h http.Handler, path, token string, body []byte) (int, string) {
	r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	r.RemoteAddr = "127.0.0.1:4242"
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("A2A-Version", "1.0")
	r.Header.Set("Authorization", "Bearer "+token)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	out := w.Body.String()
	if len(out) > 300 {
		out = out[:300]
	}
	if w.Code == 200 && strings.Contains(out, `"error"`) {
		return 400, out
	}
	return w.Code, out
}

// grpcOnce sends one SendMessage of the encoded request msg; the status
// code 0 is success.
func grpcOnce(cc *grpc.ClientConn, token string, msg []byte) (int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ctx = metadata.NewOutgoingContext(ctx, metadata.Pairs("authorization", "Bearer "+token, "a2a-version", "1.0"))
	var out []byte
	err := cc.Invoke(ctx, a2apb.A2AService_SendMessage_FullMethodName, &msg, &out, grpc.ForceCodecV2(rawCodec{}))
	if err != nil {
		st := status.Convert(err)
		return int(st.Code()), fmt.Sprint(st.Code(), ": ", st.Message())
	}
	return 0, ""
}
