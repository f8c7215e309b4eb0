package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/a2a-plugin/a2a-plugin/internal/config"
	"github.com/a2a-plugin/a2a-plugin/internal/push"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/store/storetest"
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
