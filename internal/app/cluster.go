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
)

// connectTimeout bounds reaching PostgreSQL and taking the lease at
// Configure.
const connectTimeout = 30 * time.Second

// leaveTimeout bounds giving up the lease when the replica stops.
const leaveTimeout = 10 * time.Second

// openPostgres connects to the shared database as this replica and joins
// the cluster (takes the replica's lease).
func openPostgres(cfg *config.Config, log hclog.Logger) (*store.Postgres, *cluster.Cluster, error) {
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	replica := cfg.ReplicaID
	if replica == "" {
		replica = cluster.DefaultReplicaID()
	}
	pg, err := store.OpenPostgres(ctx, cfg.PostgresDSN, store.PostgresOptions{Replica: replica})
	if err != nil {
		return nil, nil, fmt.Errorf("a2a plugin: store postgres (postgres_dsn, A2A_POSTGRES_DSN): %w", err)
	}
	cl, err := cluster.New(ctx, cluster.Options{Store: pg, Lease: time.Duration(cfg.ReplicaLease), Logger: log.Named("cluster")})
	if err != nil {
		_ = pg.Close()
		return nil, nil, fmt.Errorf("a2a plugin: store postgres: %w", err)
	}
	log.Info("joined the replicas on PostgreSQL", "replica", replica, "schema", pg.Schema(), "lease", time.Duration(cfg.ReplicaLease))
	return pg, cl, nil
}

// leave gives up this replica's place in the cluster (its lease) with a
// time bound of its own: the task manager is closed first, and the
// database after.
func leave(cl *cluster.Cluster) func(context.Context) error {
	return func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), leaveTimeout)
		defer cancel()
		return cl.Close(ctx)
	}
}

// sharePush makes the push dispatcher of a replica claim what it sends, so
// every notification in the shared outbox is sent by one replica at a
// time; POSTs time out at half the claim lease (at most the default 15 s),
// and the outbox is polled often enough to take over a dead replica's
// claims soon after they lapse. Without a cluster it changes nothing.
func sharePush(cfg *config.Config, cl *cluster.Cluster, o *push.Options) {
	if cl == nil {
		return
	}
	lease := time.Duration(cfg.PushClaimLease)
	o.Replica = cl.Replica()
	o.ClaimLease = lease
	o.Timeout = min(push.DefaultTimeout, lease/2)
	o.PollInterval = min(max(lease/4, 250*time.Millisecond), push.DefaultPollInterval)
}
