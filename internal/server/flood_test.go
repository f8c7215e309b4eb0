package server

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
)

// TestNewcomersAreServedWhileSilentConnectionsFlood: one source opens
// connections that send nothing, or only the first 16 bytes of the
// HTTP/2 preface, faster than the header timeout ends them, past the
// connection cap; newcomers that speak at once — HTTP and gRPC — are
// served all the same, because the oldest connection that has not made a
// request gives way (minFreshToEvict, the real one). Bounded:
// loopback, at most 300 flood connections, a few seconds.
func TestNewcomersAreServedWhileSilentConnectionsFlood(t *testing.T) {
	const maxConns, maxFlood = 40, 300
	e := startedEnv(t, func(o *Options) { o.Limits.MaxConnections = maxConns })
	addr := strings.TrimPrefix(e.url, "http://")

	var (
		opened, cut atomic.Int64
		stop        = make(chan struct{})
		wg          sync.WaitGroup
		mu          sync.Mutex
		held        []net.Conn
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(10 * time.Millisecond) // 100 connections a second
		defer tick.Stop()
		for i := 0; i < maxFlood; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			c, err := net.Dial("tcp", addr)
			if err != nil {
				continue
			}
			opened.Add(1)
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
			if i%2 == 1 {
				_, _ = c.Write(h2Preface[:16])
			}
			wg.Add(1)
			go func() { // holds the connection until the server cuts it
				defer wg.Done()
				defer c.Close()
				_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
				var b [512]byte
				for {
					if _, err := c.Read(b[:]); err != nil {
						select {
						case <-stop:
						default:
							cut.Add(1)
						}
						return
					}
				}
			}()
		}
	}()
	defer func() {
		close(stop)
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	}()

	waitFor(t, "the flood to fill every place", func() bool { return opened.Load() > maxConns+20 })

	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	api := a2apb.NewA2AServiceClient(cc)
	const newcomers = 10
	served := 0
	for i := range newcomers {
		if i%2 == 0 {
			c := rawRequest(t, addr, listRequest(addr, tokBob))
			resp, body := readAnswer(t, c, bufio.NewReader(c))
			c.Close()
			if resp.StatusCode == http.StatusOK {
				served++
			} else {
				t.Errorf("HTTP newcomer %d during the flood: HTTP %d %s", i, resp.StatusCode, body)
			}
			continue
		}
		ctx, cancel := context.WithTimeout(callCtx(tokBob), 10*time.Second)
		_, err := api.ListTasks(ctx, &a2apb.ListTasksRequest{})
		cancel()
		if err != nil {
			t.Errorf("gRPC newcomer %d during the flood: %v", i, err)
		} else {
			served++
		}
		cc.Close() // the next one dials anew
		if cc, err = grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
			t.Fatal(err)
		}
		api = a2apb.NewA2AServiceClient(cc)
	}
	t.Logf("flood: %d connections opened (%d cut by the server) past a cap of %d; %d of %d newcomers served",
		opened.Load(), cut.Load(), maxConns, served, newcomers)
	if open := e.srv.conns.open(); open > maxConns {
		t.Errorf("%d connections open, over the cap of %d", open, maxConns)
	}
}

// TestARefusedGRPCClientGetsUnavailable: past the cap, with no connection
// that may give way, a gRPC client is refused with the status
// UNAVAILABLE saying what to do, not an HTTP/1.1 answer its HTTP/2
// transport cannot read.
func TestARefusedGRPCClientGetsUnavailable(t *testing.T) {
	e := startedEnv(t, func(o *Options) { o.Limits.MaxConnections = 1 })
	e.srv.conns.minIdle, e.srv.conns.minFresh = time.Hour, time.Hour
	addr := strings.TrimPrefix(e.url, "http://")
	rawRequest(t, addr, "POST / HTTP/1.1\r\nHost: "+addr+"\r\nContent-Ty") // holds the one place
	waitFor(t, "the one place taken", func() bool { return e.srv.conns.open() == 1 })
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	_, err = a2apb.NewA2AServiceClient(cc).ListTasks(callCtx(tokBob), &a2apb.ListTasksRequest{})
	st, _ := status.FromError(err)
	if st.Code() != codes.Unavailable || !strings.Contains(st.Message(), "max_connections") || !strings.Contains(st.Message(), "retry") {
		t.Fatalf("refused gRPC call: %v, want UNAVAILABLE naming max_connections", err)
	}
}
