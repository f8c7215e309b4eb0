package plugin

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

type drainCounter struct {
	drains atomic.Int32
	block  chan struct{} // when set, Drain waits for it
}

func (d *drainCounter) Describe(context.Context, *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	return &pb.DescribeResponse{}, nil
}

func (d *drainCounter) Configure(context.Context, *pb.ConfigureRequest, Host) (*pb.ConfigureResponse, error) {
	return &pb.ConfigureResponse{}, nil
}

func (d *drainCounter) Drain(ctx context.Context, _ *pb.DrainRequest) (*pb.DrainResponse, error) {
	d.drains.Add(1)
	if d.block != nil {
		select {
		case <-d.block:
		case <-ctx.Done():
		}
	}
	return &pb.DrainResponse{}, nil
}

// hostFixture is a HostService on a real gRPC server and the plugin's client
// of it, so a test can break the stream the way a dying host does.
type hostFixture struct {
	hs     *HostServer
	srv    *grpc.Server
	client *hostClient
}

func newHostFixture(t *testing.T, heartbeat time.Duration) *hostFixture {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := NewHostServer(nil, heartbeat)
	srv := grpc.NewServer()
	pb.RegisterHostServiceServer(srv, &hostServiceServer{hs: hs})
	go func() { _ = srv.Serve(ln) }()
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	f := &hostFixture{hs: hs, srv: srv, client: newHostClient(conn, ProtocolMinor)}
	t.Cleanup(func() {
		srv.Stop()
		_ = conn.Close()
	})
	return f
}

func newTestWatchdog(impl Lifecycle) (*watchdog, chan int) {
	exited := make(chan int, 1)
	life := &servedLifecycle{impl: impl, logger: hclog.NewNullLogger(), drained: make(chan struct{})}
	wd := newWatchdog(hclog.NewNullLogger(), life, func(code int) { exited <- code })
	wd.grace = 200 * time.Millisecond
	wd.drainTimeout = 500 * time.Millisecond
	life.wd = wd
	return wd, exited
}

func waitExit(t *testing.T, exited chan int, within time.Duration) {
	t.Helper()
	select {
	case code := <-exited:
		if code != 0 {
			t.Errorf("exit code %d, want 0", code)
		}
	case <-time.After(within):
		t.Fatalf("the plugin did not exit within %s", within)
	}
}

func TestPluginDrainsAndExitsWhenHostStreamBreaks(t *testing.T) {
	impl := &drainCounter{}
	wd, exited := newTestWatchdog(impl)
	defer wd.stop()
	host := newHostFixture(t, 50*time.Millisecond)
	wd.watchHost(host.client)
	time.Sleep(150 * time.Millisecond) // a few heartbeats: no exit
	select {
	case <-exited:
		t.Fatal("the plugin exited while its host was alive")
	default:
	}
	host.srv.Stop() // the host dies
	waitExit(t, exited, 3*time.Second)
	if n := impl.drains.Load(); n != 1 {
		t.Errorf("Drain ran %d times before exit, want 1", n)
	}
}

func TestPluginWaitsForHostAfterShutdownNoticeThenExits(t *testing.T) {
	impl := &drainCounter{}
	wd, exited := newTestWatchdog(impl)
	defer wd.stop()
	host := newHostFixture(t, time.Hour)
	wd.watchHost(host.client)
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	host.hs.Shutdown("host closing")
	waitExit(t, exited, 3*time.Second)
	if waited := time.Since(start); waited < wd.grace {
		t.Errorf("exited %s after the notice, want at least the grace %s", waited, wd.grace)
	}
}

func TestPluginDoesNotDrainTwiceWhenHostAlreadyDrained(t *testing.T) {
	impl := &drainCounter{}
	wd, exited := newTestWatchdog(impl)
	defer wd.stop()
	if _, err := wd.life.Drain(context.Background(), &pb.DrainRequest{}); err != nil {
		t.Fatal(err)
	}
	host := newHostFixture(t, time.Hour)
	wd.watchHost(host.client)
	time.Sleep(50 * time.Millisecond)
	host.srv.Stop()
	waitExit(t, exited, 3*time.Second)
	if n := impl.drains.Load(); n != 1 {
		t.Errorf("Drain ran %d times, want 1 (the host's)", n)
	}
}

func TestPluginExitsWhenParentProcessChanges(t *testing.T) {
	impl := &drainCounter{}
	wd, exited := newTestWatchdog(impl)
	defer wd.stop()
	wd.watchParent(-1, 20*time.Millisecond) // our real parent is never -1
	waitExit(t, exited, 3*time.Second)
	if impl.drains.Load() != 1 {
		t.Error("the plugin exited without draining")
	}
}

func TestStoppedWatchdogNeverExits(t *testing.T) {
	wd, exited := newTestWatchdog(&drainCounter{})
	host := newHostFixture(t, time.Hour)
	wd.watchHost(host.client)
	wd.watchParent(-1, time.Hour)
	time.Sleep(50 * time.Millisecond)
	wd.stop() // Serve returned: the host stopped us on purpose
	host.srv.Stop()
	select {
	case <-exited:
		t.Fatal("the watchdog called exit after Serve ended")
	case <-time.After(300 * time.Millisecond):
	}
}

func TestNewConfigureReplacesTheWatchedHost(t *testing.T) {
	wd, exited := newTestWatchdog(&drainCounter{})
	defer wd.stop()
	first := newHostFixture(t, time.Hour)
	second := newHostFixture(t, time.Hour)
	wd.watchHost(first.client)
	time.Sleep(50 * time.Millisecond)
	wd.watchHost(second.client)
	first.srv.Stop() // the replaced stream ending is not the host dying
	select {
	case <-exited:
		t.Fatal("the end of a replaced Watch stream made the plugin exit")
	case <-time.After(300 * time.Millisecond):
	}
	second.srv.Stop()
	waitExit(t, exited, 3*time.Second)
}
