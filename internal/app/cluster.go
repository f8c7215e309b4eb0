package app

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/a2a-plugin/a2a-plugin/internal/cluster"
	"github.com/a2a-plugin/a2a-plugin/internal/config"
	"github.com/a2a-plugin/a2a-plugin/internal/push"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
)

// connectTimeout bounds reaching PostgreSQL and taking the lease at
// Configure.
const connectTimeout = 30 * time.Second

// clusteredStore is the PostgreSQL store of a replica together with its
// part of the cluster: closing it gives up the lease, then closes the
// database (after the task manager, which Drain closes first).
type clusteredStore struct {
	*store.Postgres
	cluster *cluster.Cluster
}

// Close implements store.Store.
func (s *clusteredStore) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := s.cluster.Close(ctx)
	if cerr := s.Postgres.Close(); err == nil {
		err = cerr
	}
	return err
}

// openPostgres connects to the shared database as this replica and joins
// the cluster (takes the replica's lease).
func openPostgres(cfg *config.Config, log hclog.Logger) (store.Store, error) {
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	replica := cfg.ReplicaID
	if replica == "" {
		replica = cluster.DefaultReplicaID()
	}
	pg, err := store.OpenPostgres(ctx, cfg.PostgresDSN, store.PostgresOptions{Replica: replica})
	if err != nil {
		return nil, fmt.Errorf("a2a plugin: store postgres (postgres_dsn, A2A_POSTGRES_DSN): %w", err)
	}
	cl, err := cluster.New(ctx, cluster.Options{Store: pg, Lease: time.Duration(cfg.ReplicaLease), Logger: log.Named("cluster")})
	if err != nil {
		_ = pg.Close()
		return nil, fmt.Errorf("a2a plugin: store postgres: %w", err)
	}
	log.Info("joined the replicas on PostgreSQL", "replica", replica, "schema", pg.Schema(), "lease", time.Duration(cfg.ReplicaLease))
	return &clusteredStore{Postgres: pg, cluster: cl}, nil
}

// clusterOf is the task manager's Cluster hook: nil unless st is shared
// by replicas.
func clusterOf(st store.Store) tasks.Cluster {
	if cs, ok := st.(*clusteredStore); ok {
		return cs.cluster
	}
	return nil
}

// runCluster starts the cluster's background work once the task manager
// has recovered this replica's tasks.
func runCluster(st store.Store, mgr *tasks.Manager) {
	if cs, ok := st.(*clusteredStore); ok {
		cs.cluster.Run(mgr)
	}
}

// sharePush makes the push dispatcher of a replica claim what it sends, so
// every notification in the shared outbox is sent by one replica at a
// time; POSTs time out at half the claim lease (at most the default 15 s),
// and the outbox is polled often enough to take over a dead replica's
// claims soon after they lapse.
func sharePush(cfg *config.Config, st store.Store, o *push.Options) {
	cs, ok := st.(*clusteredStore)
	if !ok {
		return
	}
	lease := time.Duration(cfg.PushClaimLease)
	o.Replica = cs.Replica()
	o.ClaimLease = lease
	o.Timeout = min(push.DefaultTimeout, lease/2)
	o.PollInterval = min(max(lease/4, 250*time.Millisecond), push.DefaultPollInterval)
}
