package store

import (
	"context"
	"fmt"
)

// AgentView is the view of a store one of the host's agents has
// (contract 1.4): the tasks it saves and the outbound conversations it
// appends belong to its agent, and a task, its push configs, the tasks it
// lists or recovers and the conversations it reads are only those of its
// agent — another agent's task is ErrNotFound exactly like an unknown one,
// and another agent's conversation is not there. The view of agent "",
// the one default agent of a host without agents, is the store itself
// (whose conversations are those of agent "").
//
// Deliveries, delegations and pruning are not scoped: the push dispatcher,
// the cascade and the pruner serve every agent, and deliveries and
// delegations hang off tasks that already are. They pass through to the
// embedded Store, which is the whole store behind the view.
type AgentView struct {
	Store
	agent string
}

// ForAgent returns agent's view of s. s must be one of this package's
// stores (its conversations are kept per agent).
func ForAgent(s Store, agent string) *AgentView {
	return &AgentView{Store: s, agent: agent}
}

// Agent returns the agent the view serves ("" for the default agent of a
// host without agents).
func (v *AgentView) Agent() string { return v.agent }

// SaveTask saves rec as agent's. A task id that another agent's task
// already has is refused: ids are the server's (UUIDs), so this is a bug
// or a forged id, and overwriting would move the task between agents.
func (v *AgentView) SaveTask(ctx context.Context, rec *TaskRecord, deliveries []Delivery) error {
	if rec == nil || v.agent == "" {
		return v.Store.SaveTask(ctx, rec, deliveries)
	}
	if old, err := v.Store.GetTask(ctx, rec.Task.ID, ""); err == nil && old.Agent != v.agent {
		return fmt.Errorf("store: save task %s: the id belongs to another agent's task", rec.Task.ID)
	}
	c := *rec
	c.Agent = v.agent
	return v.Store.SaveTask(ctx, &c, deliveries)
}

// GetTask returns the agent's task id (another agent's is ErrNotFound).
func (v *AgentView) GetTask(ctx context.Context, id, owner string) (*TaskRecord, error) {
	rec, err := v.Store.GetTask(ctx, id, owner)
	if err != nil {
		return nil, err
	}
	if v.agent != "" && rec.Agent != v.agent {
		return nil, fmt.Errorf("store: task %s: %w", id, ErrNotFound)
	}
	return rec, nil
}

// ListTasks lists the agent's tasks only.
func (v *AgentView) ListTasks(ctx context.Context, q TaskQuery) (TaskPage, error) {
	if v.agent != "" {
		q.Agent = v.agent
	}
	return v.Store.ListTasks(ctx, q)
}

// ActiveTasks returns the agent's tasks not in a terminal state.
func (v *AgentView) ActiveTasks(ctx context.Context) ([]*TaskRecord, error) {
	all, err := v.Store.ActiveTasks(ctx)
	if err != nil || v.agent == "" {
		return all, err
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
func (v *AgentView) taskVisible(ctx context.Context, taskID string) error {
	if v.agent == "" {
		return nil
	}
	_, err := v.GetTask(ctx, taskID, "")
	return err
}

// PutPushConfig stores a config of one of the agent's tasks.
func (v *AgentView) PutPushConfig(ctx context.Context, pc *PushConfig) error {
	if pc != nil {
		if err := v.taskVisible(ctx, pc.Config.TaskID); err != nil {
			return err
		}
	}
	return v.Store.PutPushConfig(ctx, pc)
}

// GetPushConfig returns a config of one of the agent's tasks.
func (v *AgentView) GetPushConfig(ctx context.Context, taskID, id string) (*PushConfig, error) {
	if err := v.taskVisible(ctx, taskID); err != nil {
		return nil, err
	}
	return v.Store.GetPushConfig(ctx, taskID, id)
}

// ListPushConfigs returns the configs of one of the agent's tasks.
func (v *AgentView) ListPushConfigs(ctx context.Context, taskID string) ([]*PushConfig, error) {
	if err := v.taskVisible(ctx, taskID); err != nil {
		return nil, err
	}
	return v.Store.ListPushConfigs(ctx, taskID)
}

// DeletePushConfig removes a config of one of the agent's tasks.
func (v *AgentView) DeletePushConfig(ctx context.Context, taskID, id string) error {
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

// ConversationsOf returns agent's view of the conversations c holds: the
// entries it appends are agent's, and it reads only agent's (see
// AgentView). agent "" is c itself. c must be one of this package's stores
// (or a view of one).
func ConversationsOf(c Conversations, agent string) Conversations {
	if agent == "" {
		return c
	}
	if v, ok := c.(*AgentView); ok {
		c = v.Store
	}
	return agentConversationView{c: c, agent: agent}
}

// agentConversationView is ConversationsOf's view.
type agentConversationView struct {
	c     Conversations
	agent string
}

// AppendConversation appends e as agent's.
func (v agentConversationView) AppendConversation(ctx context.Context, e *ConversationEntry) (int64, error) {
	if e == nil {
		return v.c.AppendConversation(ctx, e)
	}
	cp := *e
	cp.Agent = v.agent
	return v.c.AppendConversation(ctx, &cp)
}

func (v agentConversationView) Conversation(ctx context.Context, contextID string, limit int) ([]ConversationEntry, error) {
	ac, ok := v.c.(agentConversations)
	if !ok {
		return nil, fmt.Errorf("store: %T keeps no conversations per agent", v.c)
	}
	return ac.agentConversation(ctx, v.agent, contextID, limit)
}

func (v agentConversationView) Conversations(ctx context.Context, limit int) ([]ConversationSummary, error) {
	ac, ok := v.c.(agentConversations)
	if !ok {
		return nil, fmt.Errorf("store: %T keeps no conversations per agent", v.c)
	}
	return ac.agentConversations(ctx, v.agent, limit)
}

// AppendConversation appends e as the view's agent's.
func (v *AgentView) AppendConversation(ctx context.Context, e *ConversationEntry) (int64, error) {
	return ConversationsOf(v.Store, v.agent).AppendConversation(ctx, e)
}

// Conversation returns the last limit entries of one of the agent's
// conversations.
func (v *AgentView) Conversation(ctx context.Context, contextID string, limit int) ([]ConversationEntry, error) {
	return ConversationsOf(v.Store, v.agent).Conversation(ctx, contextID, limit)
}

// Conversations lists the agent's conversations, most recent first.
func (v *AgentView) Conversations(ctx context.Context, limit int) ([]ConversationSummary, error) {
	return ConversationsOf(v.Store, v.agent).Conversations(ctx, limit)
}
