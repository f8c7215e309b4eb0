// Package store holds the plugin's state: tasks (status, history, artifacts,
// metadata, owner), push-notification configs, the push delivery outbox and
// the conversations behind a2a_history.
//
// Three implementations satisfy Store: Memory (bounded, for tests and for
// operators who want no disk), SQLite (durable, the default when the host
// gives a data directory) and Postgres (several replicas of the plugin on
// one database; see Postgres). Every write that a caller is told about is durable
// when the call returns: callers write first and tell clients afterwards.
package store

import (
	"context"
	"errors"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/tracing"
)

// ErrNotFound is returned when a task or push config does not exist (or is
// not visible to the caller).
var ErrNotFound = errors.New("not found")

// TaskRecord is a task as stored: the A2A task plus what the plugin needs to
// scope and order it.
type TaskRecord struct {
	// Task is the full task with its whole history and all artifacts.
	Task a2a.Task
	// Owner is the identity that created the task ("peer:alice",
	// "ip:203.0.113.7", "local:127.0.0.1"). Scoped queries only return the
	// owner's tasks.
	Owner string
	// Agent is the id of the host's agent the task belongs to ("" for a
	// host that declares no agents: its one default agent). Tasks of one
	// agent are invisible to every other (see ForAgent).
	Agent     string
	CreatedAt time.Time
	// UpdatedAt is the time of the last status change; it orders ListTasks
	// (newest first) and is the task's status timestamp.
	UpdatedAt time.Time
}

// TaskQuery selects tasks for ListTasks. Zero values mean "no filter".
type TaskQuery struct {
	// Owner restricts the result to one identity's tasks; "" means all
	// (only for callers allowed to see everything, e.g. the local operator).
	Owner string
	// Agent restricts the result to one agent's tasks; "" means every
	// agent's (ForAgent always sets it).
	Agent     string
	ContextID string
	State     a2a.TaskState
	// StatusAfter keeps tasks whose status timestamp is at or after it.
	StatusAfter time.Time
	// PageSize is the maximum number of tasks returned (1–100).
	PageSize int
	// PageToken is an opaque cursor from a previous TaskPage.
	PageToken string
}

// TaskPage is one page of ListTasks, newest status first.
type TaskPage struct {
	Tasks []*TaskRecord
	// NextPageToken is "" on the last page.
	NextPageToken string
	// TotalSize counts all tasks matching the query (across pages).
	TotalSize int
}

// PushConfig is a push-notification config as stored.
type PushConfig struct {
	Config a2a.TaskPushNotificationConfig
	// Owner is the identity that registered it.
	Owner     string
	CreatedAt time.Time
}

// Delivery is one webhook POST waiting in the outbox.
type Delivery struct {
	// ID orders deliveries: for one config, a lower ID is delivered first.
	ID       int64
	TaskID   string
	ConfigID string
	// ContextID is the task's context, for logs.
	ContextID string
	// Body is the JSON StreamResponse to POST.
	Body []byte
	// Trace is the W3C trace context of the turn that produced the
	// notification (empty when it had none); the POST continues that
	// trace.
	Trace tracing.Context
	// Attempts made so far and when the next one is due.
	Attempts  int
	NextTry   time.Time
	LastError string
	CreatedAt time.Time
}

// States of a Delegation.
const (
	// DelegationOpen: the parent task has not ended; nothing was asked.
	DelegationOpen = "open"
	// DelegationCancel: the parent ended so that its delegations are
	// canceled, and this cancel is not done yet (Attempts, NextTry,
	// LastError say how it goes).
	DelegationCancel = "cancel"
	// DelegationCanceled: the peer accepted the cancel (RemoteState is the
	// state it answered).
	DelegationCanceled = "canceled"
	// DelegationFinished: the remote task had ended by itself before the
	// cancel (RemoteState says how).
	DelegationFinished = "finished"
	// DelegationFailed: the cancel was refused or given up (LastError says
	// why).
	DelegationFailed = "failed"
	// DelegationKept: the parent ended in a way that leaves its
	// delegations alone (it completed, or it failed with cancel_on_failure
	// off).
	DelegationKept = "kept"
)

// Delegation is one edge of a delegation tree: a remote task that a turn
// of this agent started (or continued) while it answered an inbound task.
// When that task is canceled (or fails, as configured) the remote task is
// canceled too, and the peer — one of these plugins — does the same with
// its own delegations.
type Delegation struct {
	ID int64
	// ParentTaskID is the inbound task the turn answered.
	ParentTaskID string
	// ChainID is the delegation chain the call carried; the cancel
	// carries it too, so it reaches only tasks of that tree.
	ChainID string
	// Peer is the configured peer name, or the URL called.
	Peer                          string
	RemoteTaskID, RemoteContextID string
	// State is one of the Delegation* states.
	State string
	// Cause is why a cancel was asked: the parent's final state.
	Cause string
	// Attempts made to cancel so far, when the next one is due and why
	// the last one failed.
	Attempts  int
	NextTry   time.Time
	LastError string
	// RemoteState is the remote task's state as the last answer gave it.
	RemoteState string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Direction of a conversation entry, seen from this plugin.
const (
	DirectionSent     = "sent"
	DirectionReceived = "received"
)

// ConversationEntry is one message of an outbound conversation with a peer
// (what we sent, what came back), kept for a2a_history.
type ConversationEntry struct {
	ID        int64
	ContextID string
	// Agent is the host's agent whose turn called the peer ("" for a host
	// without agents). A conversation is one agent's: its context, read
	// through another agent's view, is unknown (see ForAgent).
	Agent string
	// Peer is the configured peer name or the URL called.
	Peer      string
	Direction string
	TaskID    string
	MessageID string
	// State is the remote task state after this entry, if known.
	State string
	// Text is the message flattened to text (redacted as sent).
	Text  string
	Parts []a2a.Part
	Time  time.Time
}

// ConversationSummary describes one known conversation.
type ConversationSummary struct {
	ContextID  string
	Peer       string
	Entries    int
	LastTaskID string
	LastState  string
	FirstAt    time.Time
	LastAt     time.Time
}

// Store is everything the plugin persists: each of its roles below.
// Implementations are safe for concurrent use. Only the code that opens
// the store (internal/app) names Store; every other package takes the
// role or roles it uses.
type Store interface {
	Tasks
	PushConfigs
	Outbox
	Conversations
	Delegations
	Maintenance
}

// Tasks holds the tasks: what the task manager saves and what it, the
// inspector and the cascade read.
type Tasks interface {
	// SaveTask inserts or replaces a task and, in the same transaction,
	// appends deliveries to the push outbox. When it returns nil both are
	// durable.
	SaveTask(ctx context.Context, rec *TaskRecord, deliveries []Delivery) error
	// GetTask returns a task by id, or ErrNotFound. A non-empty owner must
	// match the task's owner, else ErrNotFound.
	GetTask(ctx context.Context, id, owner string) (*TaskRecord, error)
	// ListTasks returns one page of tasks matching q.
	ListTasks(ctx context.Context, q TaskQuery) (TaskPage, error)
	// ActiveTasks returns every task not in a terminal state (used at
	// start-up to fail tasks whose turn died with the previous process).
	ActiveTasks(ctx context.Context) ([]*TaskRecord, error)
}

// PushConfigs holds each task's push-notification configs: the task
// manager registers them, the push dispatcher reads the one a delivery
// names.
type PushConfigs interface {
	// PutPushConfig inserts or replaces a config (by task id and config id).
	PutPushConfig(ctx context.Context, pc *PushConfig) error
	// GetPushConfig returns one config or ErrNotFound.
	GetPushConfig(ctx context.Context, taskID, id string) (*PushConfig, error)
	// ListPushConfigs returns a task's configs in creation order.
	ListPushConfigs(ctx context.Context, taskID string) ([]*PushConfig, error)
	// DeletePushConfig removes a config; deleting a missing one is not an
	// error.
	DeletePushConfig(ctx context.Context, taskID, id string) error
}

// Outbox holds the webhook deliveries waiting to be sent (SaveTask appends
// them with the task): the push dispatcher's queue.
type Outbox interface {
	// DueDeliveries returns up to limit deliveries whose NextTry is not
	// after now, oldest first, at most the first pending one per config so
	// that each webhook receives its notifications in order.
	DueDeliveries(ctx context.Context, now time.Time, limit int) ([]Delivery, error)
	// ClaimDeliveries is DueDeliveries for dispatchers that share one
	// outbox (several replicas on one database): it returns the due
	// deliveries no other replica holds and holds them for replica until
	// now+lease, or until RetryDelivery or CompleteDelivery releases them,
	// so that each is sent by one replica at a time while per-config
	// order is kept. A store only one process uses may implement it as
	// DueDeliveries (Memory and SQLite do): its one dispatcher never asks
	// again for a config it is delivering to.
	ClaimDeliveries(ctx context.Context, replica string, now time.Time, lease time.Duration, limit int) ([]Delivery, error)
	// CompleteDelivery removes a delivered (or given-up) delivery; a
	// give-up is recorded with its reason.
	CompleteDelivery(ctx context.Context, id int64, gaveUp bool, reason string) error
	// RetryDelivery records a failed attempt and when to try again.
	RetryDelivery(ctx context.Context, id int64, attempts int, next time.Time, lastErr string) error
}

// Conversations holds the outbound conversations with peers that
// a2a_history reads (see ConversationsOf for one agent's).
type Conversations interface {
	// AppendConversation records one conversation entry and returns its id.
	AppendConversation(ctx context.Context, e *ConversationEntry) (int64, error)
	// Conversation returns the last limit entries of a context, oldest
	// first (limit <= 0: all).
	Conversation(ctx context.Context, contextID string, limit int) ([]ConversationEntry, error)
	// Conversations lists known conversations, most recent first.
	Conversations(ctx context.Context, limit int) ([]ConversationSummary, error)
}

// Delegations holds the delegation trees: the remote tasks each inbound
// task's turns started, and the cancels the cascade owes them.
type Delegations interface {
	// AddDelegation records a remote task that a turn started or
	// continued while it answered the inbound task d.ParentTaskID (d.State
	// is usually DelegationOpen). A delegation already recorded (the same
	// parent, peer and remote task) is left as it is: adding it again is
	// not an error.
	AddDelegation(ctx context.Context, d *Delegation) error
	// EndDelegations settles the open delegations of a parent task that
	// ended: with cancel, each becomes DelegationCancel, due at now, with
	// cause; without, DelegationKept. It reports how many changed.
	EndDelegations(ctx context.Context, parentTaskID string, cancel bool, cause string, now time.Time) (int, error)
	// ClaimCancels returns up to limit delegations in DelegationCancel due
	// at now (NextTry not after it), oldest first, and moves their NextTry
	// to now+lease: while a cancel is in flight no other call (and no
	// other replica sharing the store) takes it, and if the one that took
	// it dies, it is due again once the lease has passed.
	ClaimCancels(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]Delegation, error)
	// UpdateDelegation writes d's State, Attempts, NextTry, LastError,
	// RemoteState and UpdatedAt (by d.ID); a missing one is ErrNotFound.
	UpdateDelegation(ctx context.Context, d *Delegation) error
	// Delegations returns a parent task's delegations in the order they
	// were recorded.
	Delegations(ctx context.Context, parentTaskID string) ([]Delegation, error)
	// OpenDelegationParents returns the parent tasks that have open
	// delegations (at start-up: whose end may not have been seen).
	OpenDelegationParents(ctx context.Context) ([]string, error)
}

// Maintenance is what the process that owns the store does to it as a
// whole: hand unowned tasks to an agent, prune, close.
type Maintenance interface {
	// AdoptTasks gives the tasks and conversations that belong to no agent
	// (Agent "": saved while the host declared none) to agent, and reports
	// how many tasks. A host that comes to declare its agents keeps them
	// with the agent at the root, its default agent. (A context agent
	// already has stays apart.)
	AdoptTasks(ctx context.Context, agent string) (int, error)
	// Prune deletes terminal tasks (with their push configs and pending
	// deliveries), settled delegations and conversation entries last
	// updated before cutoff, and reports how many tasks and entries it
	// removed.
	Prune(ctx context.Context, cutoff time.Time) (tasks, entries int, err error)
	// Close flushes and closes the store.
	Close() error
}
