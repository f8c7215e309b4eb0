package tasks

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
)

// CreatePushConfig handles CreateTaskPushNotificationConfig: it attaches a
// validated webhook config to a task the caller may see. A client-supplied
// config id is kept (and replaces an earlier config with that id); otherwise
// one is generated. Later updates of a running task are delivered to it.
func (m *Manager) CreatePushConfig(ctx context.Context, scope, owner string, cfg a2a.TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error) {
	if _, err := m.lookup(ctx, cfg.TaskID, scope); err != nil {
		return nil, err
	}
	if cfg.ID == "" {
		cfg.ID = a2a.NewID()
	}
	if err := m.putPushConfig(ctx, &store.PushConfig{Config: cfg, Owner: owner, CreatedAt: m.now()}, "id"); err != nil {
		return nil, err
	}
	if lt := m.visibleLive(cfg.TaskID, scope); lt != nil {
		lt.mu.Lock()
		replaced := false
		for i := range lt.push {
			if lt.push[i].ID == cfg.ID {
				lt.push[i], replaced = cfg, true
			}
		}
		if !replaced {
			lt.push = append(lt.push, cfg)
		}
		lt.mu.Unlock()
	} else {
		m.forwardPushConfigs(ctx, cfg.TaskID)
	}
	return &cfg, nil
}

// putPushConfig stores a push config of a stored task unless the task has
// Options.MaxPushConfigsPerTask configs already and this one would be
// another (a config with the id of an existing one replaces it, and
// does not count). field names the request field the refusal points at.
func (m *Manager) putPushConfig(ctx context.Context, pc *store.PushConfig, field string) error {
	m.pushMu.Lock()
	defer m.pushMu.Unlock()
	existing, err := m.store.ListPushConfigs(ctx, pc.Config.TaskID)
	if err != nil {
		return a2a.ErrInternal("reading the task's push notification configs: " + err.Error())
	}
	if max := m.opts.MaxPushConfigsPerTask; len(existing) >= max && !slices.ContainsFunc(existing, func(e *store.PushConfig) bool {
		return e.Config.ID == pc.Config.ID
	}) {
		return a2a.ErrInvalidParams(field, fmt.Sprintf(
			"task %s already has %d push notification configs, the most one task may have (max_push_configs_per_task); "+
				"delete one (DeleteTaskPushNotificationConfig) or replace one by giving its id", pc.Config.TaskID, max))
	}
	if err := m.store.PutPushConfig(ctx, pc); err != nil {
		return a2a.ErrInternal("storing the push notification config: " + err.Error())
	}
	return nil
}

// GetPushConfig handles GetTaskPushNotificationConfig.
func (m *Manager) GetPushConfig(ctx context.Context, scope string, req *a2a.GetTaskPushNotificationConfigRequest) (*a2a.TaskPushNotificationConfig, error) {
	if _, err := m.lookup(ctx, req.TaskID, scope); err != nil {
		return nil, err
	}
	pc, err := m.store.GetPushConfig(ctx, req.TaskID, req.ID)
	if errors.Is(err, store.ErrNotFound) {
		e := a2a.ErrTaskNotFound(req.TaskID)
		e.Message = "push notification config " + req.ID + " not found for task " + req.TaskID + "; list the task's configs to see their ids"
		return nil, e.WithMetadata("configId", req.ID)
	}
	if err != nil {
		return nil, a2a.ErrInternal(err.Error())
	}
	c := pc.Config
	return &c, nil
}

// ListPushConfigs handles ListTaskPushNotificationConfigs.
func (m *Manager) ListPushConfigs(ctx context.Context, scope string, req *a2a.ListTaskPushNotificationConfigsRequest) (*a2a.ListTaskPushNotificationConfigsResponse, error) {
	if _, err := m.lookup(ctx, req.TaskID, scope); err != nil {
		return nil, err
	}
	pcs, err := m.store.ListPushConfigs(ctx, req.TaskID)
	if err != nil {
		return nil, a2a.ErrInternal(err.Error())
	}
	out := &a2a.ListTaskPushNotificationConfigsResponse{Configs: make([]a2a.TaskPushNotificationConfig, 0, len(pcs))}
	for _, pc := range pcs {
		out.Configs = append(out.Configs, pc.Config)
	}
	return out, nil
}

// DeletePushConfig handles DeleteTaskPushNotificationConfig; deleting a
// config that does not exist succeeds.
func (m *Manager) DeletePushConfig(ctx context.Context, scope string, req *a2a.DeleteTaskPushNotificationConfigRequest) error {
	if _, err := m.lookup(ctx, req.TaskID, scope); err != nil {
		return err
	}
	if err := m.store.DeletePushConfig(ctx, req.TaskID, req.ID); err != nil {
		return a2a.ErrInternal(err.Error())
	}
	if lt := m.visibleLive(req.TaskID, scope); lt != nil {
		lt.mu.Lock()
		for i := range lt.push {
			if lt.push[i].ID == req.ID {
				lt.push = append(lt.push[:i], lt.push[i+1:]...)
				break
			}
		}
		lt.mu.Unlock()
	} else {
		m.forwardPushConfigs(ctx, req.TaskID)
	}
	return nil
}

// forwardPushConfigs tells the replica running a task (with a Cluster) that
// its push configs changed, and waits until it has reloaded them, so the
// task's next update reaches the new set. When that replica cannot be
// reached, the task's next owner reads the configs from the store.
func (m *Manager) forwardPushConfigs(ctx context.Context, taskID string) {
	if _, err := m.rep.forward(ctx, ForwardPushConfigs, taskID); err != nil {
		m.log.Warn("could not tell the replica running the task about its new push configs", "task_id", taskID, "error", err)
	}
}
