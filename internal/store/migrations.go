package store

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations are the schema steps of the SQLite store, in order: step i
// (counting from 1) brings the database from PRAGMA user_version i-1 to i.
// Each step runs in its own transaction together with the version bump, so
// a crash mid-migration leaves the previous version intact. Steps are never
// edited once released: a change is a new step appended here.
var migrations = []string{
	// 1: the initial schema.
	`
-- One row per task. The task itself (status, history, artifacts,
-- metadata) is the ProtoJSON blob in "task"; the other columns are the
-- fields queries filter and order on. status_ts is the status timestamp
-- (TaskRecord.UpdatedAt) in Unix milliseconds; created_at likewise.
-- terminal is 1 for completed/failed/canceled/rejected tasks; it lets two
-- small partial indexes serve ActiveTasks and Prune.
CREATE TABLE tasks (
	id         TEXT    NOT NULL PRIMARY KEY,
	context_id TEXT    NOT NULL,
	owner      TEXT    NOT NULL,
	state      TEXT    NOT NULL,
	terminal   INTEGER NOT NULL,
	status_ts  INTEGER NOT NULL,
	created_at INTEGER NOT NULL,
	task       BLOB    NOT NULL
);

-- ListTasks orders by (status_ts DESC, id ASC) under equality filters on
-- owner, context_id and state. Every filter combination has an index whose
-- equality columns come first and whose remaining columns are exactly that
-- order, so a page is a range scan that stops after pageSize+1 rows (no
-- sort), the cursor and statusTimestampAfter are bounds on status_ts, and
-- COUNT(*) for totalSize is a covering-index range count. When both a
-- context and a state are given the context index is used and the state is
-- a residual filter (contexts are small).
CREATE INDEX tasks_by_ts           ON tasks (status_ts DESC, id);
CREATE INDEX tasks_by_owner        ON tasks (owner, status_ts DESC, id);
CREATE INDEX tasks_by_owner_ctx    ON tasks (owner, context_id, status_ts DESC, id);
CREATE INDEX tasks_by_owner_state  ON tasks (owner, state, status_ts DESC, id);
CREATE INDEX tasks_by_ctx          ON tasks (context_id, status_ts DESC, id);
CREATE INDEX tasks_by_state        ON tasks (state, status_ts DESC, id);
CREATE INDEX tasks_active          ON tasks (status_ts, id) WHERE terminal = 0;
CREATE INDEX tasks_terminal        ON tasks (status_ts)     WHERE terminal = 1;

-- Task counts for ListTasks' totalSize, per owner and state and per
-- state, kept exact by triggers in the same transaction as every change:
-- counting a large result set row by row through an index costs about
-- 55 ns per task (5 ms for 100k), reading these at most nine rows. Counts
-- filtered by context or StatusAfter still count index entries (contexts
-- are small; StatusAfter windows are usually recent). Rows that drop to
-- zero are deleted, so owners that come and go leave nothing behind.
CREATE TABLE task_counts (
	owner TEXT    NOT NULL,
	state TEXT    NOT NULL,
	n     INTEGER NOT NULL,
	PRIMARY KEY (owner, state)
) WITHOUT ROWID;
CREATE TABLE task_state_counts (
	state TEXT    NOT NULL PRIMARY KEY,
	n     INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TRIGGER tasks_count_insert AFTER INSERT ON tasks BEGIN
	INSERT INTO task_counts (owner, state, n) VALUES (NEW.owner, NEW.state, 1)
		ON CONFLICT (owner, state) DO UPDATE SET n = n + 1;
	INSERT INTO task_state_counts (state, n) VALUES (NEW.state, 1)
		ON CONFLICT (state) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER tasks_count_delete AFTER DELETE ON tasks BEGIN
	UPDATE task_counts SET n = n - 1 WHERE owner = OLD.owner AND state = OLD.state;
	DELETE FROM task_counts WHERE owner = OLD.owner AND state = OLD.state AND n = 0;
	UPDATE task_state_counts SET n = n - 1 WHERE state = OLD.state;
END;
CREATE TRIGGER tasks_count_update AFTER UPDATE OF owner, state ON tasks
	WHEN OLD.owner IS NOT NEW.owner OR OLD.state IS NOT NEW.state BEGIN
	UPDATE task_counts SET n = n - 1 WHERE owner = OLD.owner AND state = OLD.state;
	DELETE FROM task_counts WHERE owner = OLD.owner AND state = OLD.state AND n = 0;
	INSERT INTO task_counts (owner, state, n) VALUES (NEW.owner, NEW.state, 1)
		ON CONFLICT (owner, state) DO UPDATE SET n = n + 1;
	UPDATE task_state_counts SET n = n - 1 WHERE state = OLD.state;
	INSERT INTO task_state_counts (state, n) VALUES (NEW.state, 1)
		ON CONFLICT (state) DO UPDATE SET n = n + 1;
END;

-- Push-notification configs belong to a task and go with it. The config
-- is its ProtoJSON blob; rowid breaks ties of created_at so that configs
-- list in insertion order (an upsert keeps the rowid).
CREATE TABLE push_configs (
	task_id    TEXT    NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
	id         TEXT    NOT NULL,
	owner      TEXT    NOT NULL,
	created_at INTEGER NOT NULL,
	config     BLOB    NOT NULL,
	PRIMARY KEY (task_id, id)
);

-- The push outbox: one row per webhook POST still to make. AUTOINCREMENT
-- keeps ids increasing even after the newest rows were deleted, since ids
-- order deliveries per config. The config is deliberately not a foreign
-- key: a delivery queued while its config is being deleted must not fail
-- the task's save; the deliverer drops deliveries whose config is gone.
CREATE TABLE outbox (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	task_id    TEXT    NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
	config_id  TEXT    NOT NULL,
	body       BLOB    NOT NULL,
	attempts   INTEGER NOT NULL,
	next_try   INTEGER NOT NULL,
	last_error TEXT    NOT NULL,
	created_at INTEGER NOT NULL
);
CREATE INDEX outbox_by_config ON outbox (task_id, config_id, id);

-- Deliveries given up on, kept for the operator (and pruned by age).
CREATE TABLE deliveries_failed (
	id         INTEGER PRIMARY KEY,
	task_id    TEXT    NOT NULL,
	config_id  TEXT    NOT NULL,
	body       BLOB    NOT NULL,
	attempts   INTEGER NOT NULL,
	last_error TEXT    NOT NULL,
	reason     TEXT    NOT NULL,
	created_at INTEGER NOT NULL,
	failed_at  INTEGER NOT NULL
);
CREATE INDEX deliveries_failed_by_time ON deliveries_failed (failed_at);

-- Outbound conversations for a2a_history: the entries, and one summary row
-- per context kept up to date on every append so that listing
-- conversations never aggregates the entries.
CREATE TABLE conversation_entries (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	context_id TEXT    NOT NULL,
	peer       TEXT    NOT NULL,
	direction  TEXT    NOT NULL,
	task_id    TEXT    NOT NULL,
	message_id TEXT    NOT NULL,
	state      TEXT    NOT NULL,
	text       TEXT    NOT NULL,
	parts      BLOB,
	at         INTEGER NOT NULL
);
CREATE INDEX conversation_entries_by_context ON conversation_entries (context_id, id);

CREATE TABLE conversations (
	context_id   TEXT    NOT NULL PRIMARY KEY,
	peer         TEXT    NOT NULL,
	entries      INTEGER NOT NULL,
	last_task_id TEXT    NOT NULL,
	last_state   TEXT    NOT NULL,
	first_at     INTEGER NOT NULL,
	last_at      INTEGER NOT NULL,
	last_entry   INTEGER NOT NULL
);
CREATE INDEX conversations_by_last ON conversations (last_at DESC, last_entry DESC);
`,
	// 2: the outbox keeps each notification's context and the W3C trace
	// context of the turn behind it, so a webhook POST continues the
	// task's trace. Rows queued before have none.
	`
ALTER TABLE outbox ADD COLUMN context_id  TEXT NOT NULL DEFAULT '';
ALTER TABLE outbox ADD COLUMN traceparent TEXT NOT NULL DEFAULT '';
ALTER TABLE outbox ADD COLUMN tracestate  TEXT NOT NULL DEFAULT '';
`,
	// 3: delegations — the remote tasks the agent's turns started on
	// behalf of inbound tasks, and the cancels that follow a parent's end
	// (see Delegation). Not a foreign key to tasks: a turn may delegate
	// before its task is first saved. next_try orders the cancels due.
	`
CREATE TABLE delegations (
	id                INTEGER PRIMARY KEY AUTOINCREMENT,
	parent_task_id    TEXT    NOT NULL,
	chain_id          TEXT    NOT NULL,
	peer              TEXT    NOT NULL,
	remote_task_id    TEXT    NOT NULL,
	remote_context_id TEXT    NOT NULL,
	state             TEXT    NOT NULL,
	cause             TEXT    NOT NULL,
	attempts          INTEGER NOT NULL,
	next_try          INTEGER NOT NULL,
	last_error        TEXT    NOT NULL,
	remote_state      TEXT    NOT NULL,
	created_at        INTEGER NOT NULL,
	updated_at        INTEGER NOT NULL,
	UNIQUE (parent_task_id, peer, remote_task_id)
);
CREATE INDEX delegations_due  ON delegations (next_try, id) WHERE state = 'cancel';
CREATE INDEX delegations_open ON delegations (parent_task_id) WHERE state = 'open';
CREATE INDEX delegations_settled ON delegations (updated_at) WHERE state NOT IN ('open', 'cancel');
`,
	// 4: every task belongs to one of the host's agents (contract 1.4);
	// tasks saved before belong to the default agent of a host without
	// agents (''). ListTasks of one agent (ForAgent) scans these indexes.
	`
ALTER TABLE tasks ADD COLUMN agent TEXT NOT NULL DEFAULT '';
CREATE INDEX tasks_by_agent       ON tasks (agent, status_ts DESC, id);
CREATE INDEX tasks_by_agent_owner ON tasks (agent, owner, status_ts DESC, id);
`,
	// 5: every outbound conversation is one agent's (the agent whose turn
	// called the peer): a context is keyed by agent and id. Conversations
	// kept before are the default agent's of a host without agents ('').
	`
ALTER TABLE conversation_entries ADD COLUMN agent TEXT NOT NULL DEFAULT '';
DROP INDEX conversation_entries_by_context;
CREATE INDEX conversation_entries_by_context ON conversation_entries (agent, context_id, id);

CREATE TABLE conversations_by_agent (
	agent        TEXT    NOT NULL,
	context_id   TEXT    NOT NULL,
	peer         TEXT    NOT NULL,
	entries      INTEGER NOT NULL,
	last_task_id TEXT    NOT NULL,
	last_state   TEXT    NOT NULL,
	first_at     INTEGER NOT NULL,
	last_at      INTEGER NOT NULL,
	last_entry   INTEGER NOT NULL,
	PRIMARY KEY (agent, context_id)
);
INSERT INTO conversations_by_agent (agent, context_id, peer, entries, last_task_id, last_state, first_at, last_at, last_entry)
	SELECT '', context_id, peer, entries, last_task_id, last_state, first_at, last_at, last_entry FROM conversations;
DROP TABLE conversations;
ALTER TABLE conversations_by_agent RENAME TO conversations;
CREATE INDEX conversations_by_last ON conversations (agent, last_at DESC, last_entry DESC);
CREATE INDEX conversations_stale   ON conversations (last_at);
`,
	// 6: the writer keeps the task counts of saves itself (writer.
	// saveTaskRow): the insert and update triggers made SQLite keep a
	// statement journal for every save. Deletes (Prune) still count by
	// trigger.
	`
DROP TRIGGER tasks_count_insert;
DROP TRIGGER tasks_count_update;
`,
	// 7: the state indexes leave out COMPLETED tasks, most of the stored
	// ones: a blocking send saves its task once, completed, and now
	// inserts it into two indexes fewer. ListTasks of COMPLETED tasks
	// walks the status-time index of its other filters instead (owner or
	// none) and reads the state from the row: most rows it meets are
	// completed, and it reads the rows of its page anyway.
	`
DROP INDEX tasks_by_state;
DROP INDEX tasks_by_owner_state;
CREATE INDEX tasks_by_state       ON tasks (state, status_ts DESC, id)        WHERE state <> 'TASK_STATE_COMPLETED';
CREATE INDEX tasks_by_owner_state ON tasks (owner, state, status_ts DESC, id) WHERE state <> 'TASK_STATE_COMPLETED';
`,
	// 8: the agent indexes hold only the tasks of named agents. A host
	// without agents saves every task as agent '', whose lists never
	// filter by agent; its saves no longer insert into two indexes that
	// repeated tasks_by_ts and tasks_by_owner entry for entry.
	`
DROP INDEX tasks_by_agent;
DROP INDEX tasks_by_agent_owner;
CREATE INDEX tasks_by_agent       ON tasks (agent, status_ts DESC, id)        WHERE agent <> '';
CREATE INDEX tasks_by_agent_owner ON tasks (agent, owner, status_ts DESC, id) WHERE agent <> '';
`,
	// 9: the task journal (sqlite_journal.go): per journal (one per open
	// store), the highest sequence number whose save is applied to
	// tasks, written in the transaction that applies it, so that a
	// replay after a crash skips what is applied already.
	`
CREATE TABLE journal_state (
	instance TEXT    NOT NULL PRIMARY KEY,
	applied  INTEGER NOT NULL
) WITHOUT ROWID;
`,
}

// SchemaVersion is the schema version this code writes (PRAGMA
// user_version of an up-to-date database).
var SchemaVersion = len(migrations)

// migrate brings the database on conn up to SchemaVersion. A database
// newer than this code is refused: its schema may mean things this code
// would get wrong.
func migrate(ctx context.Context, conn *sql.Conn, path string) error {
	var v int
	if err := conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("store: read schema version of %s: %w", path, err)
	}
	if v > len(migrations) {
		return fmt.Errorf("store: database %s has schema version %d but this plugin knows only up to %d: run a newer plugin, or point it at another data directory", path, v, len(migrations))
	}
	for ; v < len(migrations); v++ {
		if err := migrateStep(ctx, conn, v+1); err != nil {
			return fmt.Errorf("store: migrate %s to schema version %d: %w", path, v+1, err)
		}
	}
	return nil
}

// migrateStep applies migration n (1-based) and sets user_version to n in
// one transaction. It re-reads the version under the write lock, so two
// processes opening the same new database do not both apply a step.
func migrateStep(ctx context.Context, conn *sql.Conn, n int) (err error) {
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
		}
	}()
	var v int
	if err := conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return err
	}
	if v >= n {
		_, err := conn.ExecContext(ctx, "COMMIT")
		return err
	}
	if _, err := conn.ExecContext(ctx, migrations[n-1]); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", n)); err != nil {
		return err
	}
	_, err = conn.ExecContext(ctx, "COMMIT")
	return err
}
