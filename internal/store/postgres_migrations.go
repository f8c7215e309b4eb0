package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// pgMigrations are the schema steps of the PostgreSQL store, in order, the
// counterpart of the SQLite migrations: the same tables with the same
// meaning, so both stores behave alike (storetest proves it). Step i
// (counting from 1) brings the schema from version i-1 to i, in one
// transaction with the version bump. Steps are never edited once released.
//
// Differences from SQLite, on purpose:
//   - Text columns use the "C" collation, so ids order byte by byte as in
//     SQLite (and Go), whatever the database's default collation.
//   - Task counts without a hot row (step 5): a counter row per owner and
//     state would serialise every concurrent save on its row lock across
//     replicas, so a trigger appends a delta row per change instead
//     (inserts only, which never wait on each other), and foldTaskCounts
//     sums the deltas into the counter tables now and then. ListTasks
//     adds the counters and the deltas not yet folded.
//   - The columns and tables replicas coordinate through: tasks.replica
//     (which replica last wrote the task), tasks.seq (how many events the
//     task has published), outbox claims, replicas (leases), task_watch and
//     task_events (streams followed on another replica). See
//     docs/architecture.md, "Replicas on PostgreSQL".
var pgMigrations = []string{
	// 1: the initial schema.
	`
CREATE TABLE tasks (
	id         TEXT COLLATE "C" NOT NULL PRIMARY KEY,
	context_id TEXT COLLATE "C" NOT NULL,
	owner      TEXT COLLATE "C" NOT NULL,
	state      TEXT COLLATE "C" NOT NULL,
	terminal   BOOLEAN NOT NULL,
	status_ts  BIGINT  NOT NULL,
	created_at BIGINT  NOT NULL,
	task       BYTEA   NOT NULL,
	-- The replica whose host runs (or last ran) the task's turn: every
	-- save by a replica writes its id. '' for a store without replicas.
	replica    TEXT COLLATE "C" NOT NULL DEFAULT '',
	-- Events published so far: a save with n events adds n, and the
	-- events are rows seq-n+1..seq of task_events while someone follows
	-- the task from another replica.
	seq        BIGINT  NOT NULL DEFAULT 0
);
CREATE INDEX tasks_by_ts          ON tasks (status_ts DESC, id);
CREATE INDEX tasks_by_owner       ON tasks (owner, status_ts DESC, id);
CREATE INDEX tasks_by_owner_ctx   ON tasks (owner, context_id, status_ts DESC, id);
CREATE INDEX tasks_by_owner_state ON tasks (owner, state, status_ts DESC, id);
CREATE INDEX tasks_by_ctx         ON tasks (context_id, status_ts DESC, id);
CREATE INDEX tasks_by_state       ON tasks (state, status_ts DESC, id);
-- ActiveTasks, and the tasks of a replica whose lease expired.
CREATE INDEX tasks_active         ON tasks (replica, status_ts, id) WHERE NOT terminal;
CREATE INDEX tasks_terminal       ON tasks (status_ts) WHERE terminal;

-- Fencing: a finished task written by one replica is never overwritten by
-- another. When a replica's lease expires and another one fails its task,
-- a late write from the first (it was only cut off, not dead) is refused,
-- and so is the second's if the first finished the task in the meantime.
CREATE FUNCTION a2a_task_fence() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'task % is already % (written by replica %); replica % may not change it', OLD.id, OLD.state, OLD.replica, NEW.replica
		USING ERRCODE = 'A2F01';
END
$$;
CREATE TRIGGER tasks_fence BEFORE UPDATE ON tasks FOR EACH ROW
	WHEN (OLD.terminal AND OLD.replica IS DISTINCT FROM NEW.replica)
	EXECUTE FUNCTION a2a_task_fence();

-- Push configs, in creation order (ord breaks ties of created_at and
-- survives an upsert, like SQLite's rowid).
CREATE TABLE push_configs (
	task_id    TEXT COLLATE "C" NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
	id         TEXT COLLATE "C" NOT NULL,
	owner      TEXT COLLATE "C" NOT NULL,
	created_at BIGINT NOT NULL,
	ord        BIGINT GENERATED ALWAYS AS IDENTITY,
	config     BYTEA  NOT NULL,
	PRIMARY KEY (task_id, id)
);

-- The push outbox. A replica claims the first pending delivery of a
-- config (claimed_by, claimed_until in Unix ms) with FOR UPDATE SKIP
-- LOCKED; the claim lapses at claimed_until, so a dead replica's claims
-- are taken over.
CREATE TABLE outbox (
	id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	task_id       TEXT COLLATE "C" NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
	config_id     TEXT COLLATE "C" NOT NULL,
	body          BYTEA  NOT NULL,
	attempts      INTEGER NOT NULL,
	next_try      BIGINT NOT NULL,
	last_error    TEXT   NOT NULL,
	created_at    BIGINT NOT NULL,
	context_id    TEXT COLLATE "C" NOT NULL DEFAULT '',
	traceparent   TEXT   NOT NULL DEFAULT '',
	tracestate    TEXT   NOT NULL DEFAULT '',
	claimed_by    TEXT COLLATE "C" NOT NULL DEFAULT '',
	claimed_until BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX outbox_by_config ON outbox (task_id, config_id, id);

CREATE TABLE deliveries_failed (
	id         BIGINT PRIMARY KEY,
	task_id    TEXT COLLATE "C" NOT NULL,
	config_id  TEXT COLLATE "C" NOT NULL,
	body       BYTEA  NOT NULL,
	attempts   INTEGER NOT NULL,
	last_error TEXT   NOT NULL,
	reason     TEXT   NOT NULL,
	created_at BIGINT NOT NULL,
	failed_at  BIGINT NOT NULL
);
CREATE INDEX deliveries_failed_by_time ON deliveries_failed (failed_at);

CREATE TABLE conversation_entries (
	id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	context_id TEXT COLLATE "C" NOT NULL,
	peer       TEXT   NOT NULL,
	direction  TEXT   NOT NULL,
	task_id    TEXT   NOT NULL,
	message_id TEXT   NOT NULL,
	state      TEXT   NOT NULL,
	text       TEXT   NOT NULL,
	parts      BYTEA,
	at         BIGINT NOT NULL
);
CREATE INDEX conversation_entries_by_context ON conversation_entries (context_id, id);

CREATE TABLE conversations (
	context_id   TEXT COLLATE "C" NOT NULL PRIMARY KEY,
	peer         TEXT   NOT NULL,
	entries      INTEGER NOT NULL,
	last_task_id TEXT   NOT NULL,
	last_state   TEXT   NOT NULL,
	first_at     BIGINT NOT NULL,
	last_at      BIGINT NOT NULL,
	last_entry   BIGINT NOT NULL
);
CREATE INDEX conversations_by_last ON conversations (last_at DESC, last_entry DESC);

-- Replicas and their leases (database clock). A replica renews its lease
-- while it lives; the running tasks of a replica whose lease expired are
-- failed by another.
CREATE TABLE replicas (
	id          TEXT COLLATE "C" NOT NULL PRIMARY KEY,
	started_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
	lease_until TIMESTAMPTZ NOT NULL
);

-- Who follows a task from a replica other than the one running it. While a
-- task has a row here, its saves also write their events to task_events
-- and wake the followers (NOTIFY).
CREATE TABLE task_watch (
	task_id TEXT COLLATE "C" NOT NULL,
	replica TEXT COLLATE "C" NOT NULL,
	since   TIMESTAMPTZ NOT NULL DEFAULT now(),
	PRIMARY KEY (task_id, replica)
);

CREATE TABLE task_events (
	task_id TEXT COLLATE "C" NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
	seq     BIGINT NOT NULL,
	body    BYTEA  NOT NULL,
	at      TIMESTAMPTZ NOT NULL DEFAULT now(),
	PRIMARY KEY (task_id, seq)
);
CREATE INDEX task_events_by_time ON task_events (at);
`,
	// 2: delegations, as in the SQLite schema's step 3 (see Delegation).
	// A cancel in flight is held by moving next_try past a lease
	// (ClaimCancels), so any replica may take a due one.
	`
CREATE TABLE delegations (
	id                BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	parent_task_id    TEXT COLLATE "C" NOT NULL,
	chain_id          TEXT COLLATE "C" NOT NULL,
	peer              TEXT COLLATE "C" NOT NULL,
	remote_task_id    TEXT COLLATE "C" NOT NULL,
	remote_context_id TEXT COLLATE "C" NOT NULL,
	state             TEXT NOT NULL,
	cause             TEXT NOT NULL,
	attempts          INTEGER NOT NULL,
	next_try          BIGINT NOT NULL,
	last_error        TEXT NOT NULL,
	remote_state      TEXT NOT NULL,
	created_at        BIGINT NOT NULL,
	updated_at        BIGINT NOT NULL,
	UNIQUE (parent_task_id, peer, remote_task_id)
);
CREATE INDEX delegations_due     ON delegations (next_try, id) WHERE state = 'cancel';
CREATE INDEX delegations_open    ON delegations (parent_task_id) WHERE state = 'open';
CREATE INDEX delegations_settled ON delegations (updated_at) WHERE state NOT IN ('open', 'cancel');
`,
	// 3: every task belongs to one of the host's agents (contract
	// 1.4); tasks saved before belong to the default agent of a host
	// without agents ('').
	`
ALTER TABLE tasks ADD COLUMN agent TEXT COLLATE "C" NOT NULL DEFAULT '';
CREATE INDEX tasks_by_agent       ON tasks (agent, status_ts DESC, id);
CREATE INDEX tasks_by_agent_owner ON tasks (agent, owner, status_ts DESC, id);
`,
	// 4: every outbound conversation is one agent's, as in the SQLite
	// schema's step 5: a context is keyed by agent and id.
	`
ALTER TABLE conversation_entries ADD COLUMN agent TEXT COLLATE "C" NOT NULL DEFAULT '';
DROP INDEX conversation_entries_by_context;
CREATE INDEX conversation_entries_by_context ON conversation_entries (agent, context_id, id);
ALTER TABLE conversations ADD COLUMN agent TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE conversations DROP CONSTRAINT conversations_pkey;
ALTER TABLE conversations ADD PRIMARY KEY (agent, context_id);
DROP INDEX conversations_by_last;
CREATE INDEX conversations_by_last ON conversations (agent, last_at DESC, last_entry DESC);
CREATE INDEX conversations_stale   ON conversations (last_at);
`,
	// 5: task counts for ListTasks' totalSize, the counterpart of the
	// SQLite schema's task_counts, shaped for replicas. A change of a
	// task's owner, agent or state (or its insert or delete) appends
	// delta rows to task_count_deltas in the same transaction; nothing
	// is updated in place, so concurrent saves never wait on a counter
	// row. foldTaskCounts (one replica at a time) moves the deltas into
	// task_counts (per owner, agent and state) and task_agent_counts
	// (per agent and state, for queries without an owner) in one
	// transaction, so any snapshot sees each change exactly once. The
	// CREATE TRIGGER waits for saves in flight and holds off others
	// until this step commits, so the backfill counts exactly the tasks
	// the trigger will not.
	`
CREATE TABLE task_count_deltas (
	owner TEXT COLLATE "C" NOT NULL,
	agent TEXT COLLATE "C" NOT NULL,
	state TEXT COLLATE "C" NOT NULL,
	n     BIGINT NOT NULL
);
CREATE INDEX task_count_deltas_by_owner ON task_count_deltas (owner, agent, state);
CREATE TABLE task_counts (
	owner TEXT COLLATE "C" NOT NULL,
	agent TEXT COLLATE "C" NOT NULL,
	state TEXT COLLATE "C" NOT NULL,
	n     BIGINT NOT NULL,
	PRIMARY KEY (owner, agent, state)
);
CREATE TABLE task_agent_counts (
	agent TEXT COLLATE "C" NOT NULL,
	state TEXT COLLATE "C" NOT NULL,
	n     BIGINT NOT NULL,
	PRIMARY KEY (agent, state)
);
CREATE FUNCTION a2a_task_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'INSERT' THEN
		INSERT INTO task_count_deltas (owner, agent, state, n) VALUES (NEW.owner, NEW.agent, NEW.state, 1);
	ELSIF TG_OP = 'DELETE' THEN
		INSERT INTO task_count_deltas (owner, agent, state, n) VALUES (OLD.owner, OLD.agent, OLD.state, -1);
	ELSE
		INSERT INTO task_count_deltas (owner, agent, state, n)
			VALUES (OLD.owner, OLD.agent, OLD.state, -1), (NEW.owner, NEW.agent, NEW.state, 1);
	END IF;
	RETURN NULL;
END
$$;
CREATE TRIGGER tasks_count AFTER INSERT OR DELETE ON tasks FOR EACH ROW EXECUTE FUNCTION a2a_task_count();
CREATE TRIGGER tasks_count_update AFTER UPDATE OF owner, agent, state ON tasks FOR EACH ROW
	WHEN (OLD.owner IS DISTINCT FROM NEW.owner OR OLD.agent IS DISTINCT FROM NEW.agent OR OLD.state IS DISTINCT FROM NEW.state)
	EXECUTE FUNCTION a2a_task_count();
INSERT INTO task_counts (owner, agent, state, n) SELECT owner, agent, state, count(*) FROM tasks GROUP BY owner, agent, state;
INSERT INTO task_agent_counts (agent, state, n) SELECT agent, state, count(*) FROM tasks GROUP BY agent, state;
`,
}

// PostgresSchemaVersion is the schema version this code writes.
var PostgresSchemaVersion = len(pgMigrations)

// pgMigrate brings the schema (in the connection's search_path) up to
// PostgresSchemaVersion. Replicas starting together take turns on an
// advisory lock, so each step runs once.
func pgMigrate(ctx context.Context, pool *pgxpool.Pool) error {
	for {
		done, err := pgMigrateStep(ctx, pool)
		if err != nil || done {
			return err
		}
	}
}

// pgMigrateStep applies the next missing step, if any, and reports whether
// the schema is up to date.
func pgMigrateStep(ctx context.Context, pool *pgxpool.Pool) (done bool, err error) {
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{})
	if err != nil {
		return false, err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback(context.Background())
		}
	}()
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext(current_schema() || '/a2a-plugin/migrate'))`); err != nil {
		return false, err
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS a2a_schema (version INTEGER NOT NULL)`); err != nil {
		return false, err
	}
	var v int
	err = tx.QueryRow(ctx, `SELECT version FROM a2a_schema`).Scan(&v)
	switch {
	case err == pgx.ErrNoRows:
		if _, err := tx.Exec(ctx, `INSERT INTO a2a_schema (version) VALUES (0)`); err != nil {
			return false, err
		}
	case err != nil:
		return false, err
	}
	if v > len(pgMigrations) {
		return false, fmt.Errorf("the database schema has version %d but this plugin knows only up to %d: run a newer plugin on every replica, or use another database", v, len(pgMigrations))
	}
	if v == len(pgMigrations) {
		return true, tx.Commit(ctx)
	}
	if _, err := tx.Exec(ctx, pgMigrations[v]); err != nil {
		return false, fmt.Errorf("migrate to schema version %d: %w", v+1, err)
	}
	if _, err := tx.Exec(ctx, `UPDATE a2a_schema SET version = $1`, v+1); err != nil {
		return false, err
	}
	return false, tx.Commit(ctx)
}
