package store

import (
	"context"
	"fmt"
)

// ForAgent returns the view of s one of the host's agents has (contract
// 1.4): the tasks it saves and the outbound conversations it appends
// belong to agent, and a task, its push configs, the tasks it lists or
// recovers and the conversations it reads are only those of agent —
// another agent's task is ErrNotFound exactly like an unknown one, and
// another agent's conversation is not there. agent "" is the one default
// agent of a host without agents; its view is s itself (whose
// conversations are those of agent "").
//
// Deliveries, delegations and pruning are not scoped: the push dispatcher,
// the cascade and the pruner serve every agent, and deliveries and
// delegations hang off tasks that already are. s must be one of this
// package's stores.
func ForAgent(s Store, agent string) Store {
	if agent == "" {
		return s
	}
	return &agentView{Store: s, agent: agent}
}

// AgentOf returns the agent a view made by ForAgent serves ("" for any
// other store).
func AgentOf(s Store) string {
	if v, ok := s.(*agentView); ok {
		return v.agent
	}
	return ""
}

// Unscoped returns the store behind a view made by ForAgent (s itself for
// any other store).
func Unscoped(s Store) Store {
	if v, ok := s.(*agentView); ok {
		return v.Store
	}
	return s
}

type agentView struct {
	Store
	agent string
}

// SaveTask saves rec as agent's. A task id that another agent's task
// already has is refused: ids are the server's (UUIDs), so this is a bug
// or a forged id, and overwriting would move the task between agents.
func (v *agentView) SaveTask(ctx context.Context, rec *TaskRecord, deliveries []Delivery) error {
	if rec == nil {
		return v.Store.SaveTask(ctx, rec, deliveries)
	}
	if old, err := v.Store.GetTask(ctx, rec.Task.ID, ""); err == nil && old.Agent != v.agent {
		return fmt.Errorf("store: save task %s: the id belongs to another agent's task", rec.Task.ID)
	}
	c := *rec
	c.Agent = v.agent
	return v.Store.SaveTask(ctx, &c, deliveries)
}

func (v *agentView) GetTask(ctx context.Context, id, owner string) (*TaskRecord, error) {
	rec, err := v.Store.GetTask(ctx, id, owner)
	if err != nil {
		return nil, err
	}
	if rec.Agent != v.agent {
		return nil, fmt.Errorf("store: task %s: %w", id, ErrNotFound)
	}
	return rec, nil
}

func (v *agentView) ListTasks(ctx context.Context, q TaskQuery) (TaskPage, error) {
	q.Agent = v.agent
	return v.Store.ListTasks(ctx, q)
}

func (v *agentView) ActiveTasks(ctx context.Context) ([]*TaskRecord, error) {
	all, err := v.Store.ActiveTasks(ctx)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, rec := range all {
		if rec.Agent == v.agent {
			out = append(out, rec)
		}
	}
	return out, nil
}

// taskVisible reports whether taskID is agent's task (ErrNotFound if not).
func (v *agentView) taskVisible(ctx context.Context, taskID string) error {
	_, err := v.GetTask(ctx, taskID, "")
	return err
}

func (v *agentView) PutPushConfig(ctx context.Context, pc *PushConfig) error {
	if pc != nil {
		if err := v.taskVisible(ctx, pc.Config.TaskID); err != nil {
			return err
		}
	}
	return v.Store.PutPushConfig(ctx, pc)
}

func (v *agentView) GetPushConfig(ctx context.Context, taskID, id string) (*PushConfig, error) {
	if err := v.taskVisible(ctx, taskID); err != nil {
		return nil, err
	}
	return v.Store.GetPushConfig(ctx, taskID, id)
}

func (v *agentView) ListPushConfigs(ctx context.Context, taskID string) ([]*PushConfig, error) {
	if err := v.taskVisible(ctx, taskID); err != nil {
		return nil, err
	}
	return v.Store.ListPushConfigs(ctx, taskID)
}

func (v *agentView) DeletePushConfig(ctx context.Context, taskID, id string) error {
	if err := v.taskVisible(ctx, taskID); err != nil {
		return err
	}
	return v.Store.DeletePushConfig(ctx, taskID, id)
}

// agentConversations are the conversation reads of one agent, which every
// store of this package has (its Conversation and Conversations are those
// of agent "").
type agentConversations interface {
	agentConversation(ctx context.Context, agent, contextID string, limit int) ([]ConversationEntry, error)
	agentConversations(ctx context.Context, agent string, limit int) ([]ConversationSummary, error)
}

// AppendConversation appends e as agent's.
func (v *agentView) AppendConversation(ctx context.Context, e *ConversationEntry) (int64, error) {
	if e == nil {
		return v.Store.AppendConversation(ctx, e)
	}
	c := *e
	c.Agent = v.agent
	return v.Store.AppendConversation(ctx, &c)
}

func (v *agentView) Conversation(ctx context.Context, contextID string, limit int) ([]ConversationEntry, error) {
	ac, ok := v.Store.(agentConversations)
	if !ok {
		return nil, fmt.Errorf("store: %T keeps no conversations per agent", v.Store)
	}
	return ac.agentConversation(ctx, v.agent, contextID, limit)
}

func (v *agentView) Conversations(ctx context.Context, limit int) ([]ConversationSummary, error) {
	ac, ok := v.Store.(agentConversations)
	if !ok {
		return nil, fmt.Errorf("store: %T keeps no conversations per agent", v.Store)
	}
	return ac.agentConversations(ctx, v.agent, limit)
}
