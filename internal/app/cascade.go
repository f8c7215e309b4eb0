package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
)

// startCascade connects the cancel of delegation trees to the task
// manager: every task that reaches a final state is told to the tracker
// (which knows in a map lookup whether the task delegated anything), the
// delegations the previous run left open are read, and the tracker runs,
// sending its cancels with the tools and writing how they went into the
// tasks' metadata through the manager. The undo entries stop the run
// after the manager closed (its last failures still reach the store) and
// then the watch.
func (p *parts) startCascade(ctx context.Context, mgr *tasks.Manager, undo *undoList) error {
	stopWatch := mgr.Watch(func(c tasks.Change) {
		if c.State.Terminal() {
			p.cascade.Ended(c.TaskID, c.State)
		}
	})
	undo.add(func(context.Context) error { stopWatch(); return nil })
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
