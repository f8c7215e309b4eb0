package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
)

// startCascade connects the cancel of delegation trees to the task
// manager: every task that reaches a final state is told to the tracker
// (which knows in a map lookup whether the task delegated anything), the
// delegations the previous run left open are read, and the tracker runs,
// sending its cancels with the tools and writing how they went into the
// tasks' metadata through the manager. The undo entries stop the run
// after the manager closed (its last failures still reach the store) and
// then the watch. With several host agents every agent's manager is
// watched, and a task's metadata is written by the manager of its agent.
func (p *parts) startCascade(ctx context.Context, agents []*agentRun, undo *undoList) error {
	for _, ar := range agents {
		stopWatch := ar.tasks.Watch(func(c tasks.Change) {
			if c.State.Terminal() {
				p.cascade.Ended(c.TaskID, c.State)
			}
		})
		undo.add(func(context.Context) error { stopWatch(); return nil })
	}
	var mgr interface {
		Annotate(ctx context.Context, taskID, key string, value any) error
	} = agents[0].tasks
	if len(agents) > 1 {
		mgr = agentAnnotator{agents: agents, store: p.store}
	}
	if err := p.cascade.Load(ctx); err != nil {
		return fmt.Errorf("a2a plugin: %w", err)
	}
	run, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- p.cascade.Run(run, p.tools, mgr) }()
	undo.add(func(context.Context) error {
		stop()
		if err := <-ran; err != nil && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("a2a plugin: canceling delegations: %w", err)
		}
		return nil
	})
	return nil
}

// agentAnnotator writes a task's metadata through the task manager of the
// host agent the task belongs to.
type agentAnnotator struct {
	agents []*agentRun
	// store is the whole store (never an agent's view): it finds any
	// agent's task.
	store store.Tasks
}

func (a agentAnnotator) Annotate(ctx context.Context, taskID, key string, value any) error {
	rec, err := a.store.GetTask(ctx, taskID, "")
	if err != nil {
		return err
	}
	for _, ar := range a.agents {
		if ar.id == rec.Agent {
			return ar.tasks.Annotate(ctx, taskID, key, value)
		}
	}
	return fmt.Errorf("task %s belongs to agent %q, which is not served", taskID, rec.Agent)
}
