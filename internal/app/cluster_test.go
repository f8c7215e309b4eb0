package app

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/a2a-plugin/a2a-plugin/internal/config"
	"github.com/a2a-plugin/a2a-plugin/internal/push"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/store/storetest"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

func TestPostgresStoreThatCannotBeReachedFailsConfigure(t *testing.T) {
	cfg, err := config.Load([]byte(`{"store":"postgres","postgres_dsn":"postgres://a2a:pw-not-shown@127.0.0.1:1/a2a?connect_timeout=2","push_secret":"s"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, err = openStore(cfg, t.TempDir(), hclog.NewNullLogger())
	if err == nil || !strings.Contains(err.Error(), "A2A_POSTGRES_DSN") || !strings.Contains(err.Error(), "127.0.0.1:1") || strings.Contains(err.Error(), "pw-not-shown") {
		t.Fatalf("openStore = %v; want an error naming the setting and the server, without the password", err)
	}
}

func TestPostgresStoreJoinsTheCluster(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	cfg, err := config.Load(nil, func(k string) string {
		return map[string]string{"A2A_STORE": "postgres", "A2A_POSTGRES_DSN": dsn, "A2A_REPLICA_ID": "r-test", "A2A_PUSH_CLAIM_LEASE": "6s", "A2A_PUSH_SECRET": "s"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	st, cl, _, err := openStore(cfg, "", hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if cl == nil {
		t.Fatal("a postgres store comes without its cluster")
	}
	defer func() { _ = leave(cl)(context.Background()) }()
	if _, cl, _, _ := openStore(&config.Config{Store: "memory"}, "", hclog.NewNullLogger()); cl != nil {
		t.Fatal("a memory store comes with a cluster")
	}
	var o push.Options
	sharePush(cfg, cl, &o)
	if o.Replica != "r-test" || o.ClaimLease != 6*time.Second || o.Timeout != 3*time.Second {
		t.Errorf("push options %+v", o)
	}
	var n int
	if err := st.(*store.Postgres).Pool().QueryRow(context.Background(), `SELECT count(*) FROM replicas WHERE id = 'r-test' AND lease_until > now()`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("lease rows = %d, %v", n, err)
	}
}

// A Configure waiting on PostgreSQL (up to its connect timeout) holds no
// lock the host's other calls need: a Send or a tool call that arrives
// meanwhile is answered at once, "not configured", instead of waiting for
// the connect to give up.
func TestConfigureWaitingForPostgresDoesNotBlockOtherCalls(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// A server that accepts and never answers: the connect waits until
	// the test lets go of it.
	release := make(chan struct{})
	accepted := make(chan struct{}, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			select {
			case accepted <- struct{}{}:
			default:
			}
			go func() { <-release; c.Close() }()
		}
	}()
	a := New(nil, "test", func(string) string { return "" })
	cfg := `{"store":"postgres","postgres_dsn":"postgres://a2a:pw@` + ln.Addr().String() + `/a2a?connect_timeout=60","push_secret":"s"}`
	configured := make(chan error, 1)
	go func() {
		_, err := a.Configure(context.Background(), &pb.ConfigureRequest{ConfigJson: []byte(cfg), DataDir: t.TempDir()}, nil)
		configured <- err
	}()
	// Wait until Configure holds the connection, then call while it waits.
	select {
	case <-accepted:
	case err := <-configured:
		t.Fatalf("Configure returned before it reached PostgreSQL: %v", err)
	}
	answered := make(chan error, 2)
	go func() {
		_, err := a.Send(context.Background(), &pb.SendRequest{TaskId: "t1"})
		answered <- err
	}()
	go func() {
		_, err := a.CallTool(context.Background(), &pb.CallToolRequest{Name: "a2a_list"}, nil)
		answered <- err
	}()
	for range 2 {
		select {
		case err := <-answered:
			if err == nil || !strings.Contains(err.Error(), "not configured") {
				t.Errorf("a call during Configure = %v; want the not-configured error", err)
			}
		case err := <-configured:
			t.Fatalf("Configure returned (%v) before the calls made during it were answered", err)
		case <-time.After(30 * time.Second):
			t.Fatal("a call made while Configure waits for PostgreSQL waited with it")
		}
	}
	close(release)
	ln.Close()
	if err := <-configured; err == nil {
		t.Fatal("Configure against a server that never answered succeeded")
	}
}
