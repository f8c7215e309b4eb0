package hostsdk

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// install makes inst the plugin's running instance and starts watching it.
// It reports false (and the caller kills inst) when the plugin is stopping.
func (p *Plugin) install(inst *instance) bool {
	p.mu.Lock()
	if p.stopping {
		p.mu.Unlock()
		return false
	}
	p.inst = inst
	p.desc = inst.desc
	p.name = inst.desc.GetName()
	p.state = StateReady
	p.wg.Add(1)
	p.mu.Unlock()
	go p.watchExit(inst)

	p.logger().Info("plugin ready", "version", inst.desc.GetVersion(), "path", p.path, "pid", inst.pid,
		"capabilities", fmt.Sprint(inst.desc.GetCapabilities()), "endpoints", fmt.Sprint(inst.endpoints))
	p.m.emit(Event{Plugin: p.Name(), Kind: EventReady})
	p.m.forgetRoutes()
	return true
}

// fail marks the plugin failed for good. A failure during Manager.Start is
// returned by Start (and kept as LastError), so it is logged at debug only:
// the host prints it once; a later one (a restart that failed) is logged
// as an error, since nobody else reports it.
func (p *Plugin) fail(err error, atStart bool) {
	p.mu.Lock()
	if p.stopping {
		p.mu.Unlock()
		return
	}
	p.state = StateFailed
	p.lastErr = err
	p.mu.Unlock()
	if atStart {
		p.logger().Debug("plugin failed to start (Start returns the error)", "error", err)
	} else {
		p.logger().Error("plugin failed; it will not be restarted", "error", err)
	}
	p.m.emit(Event{Plugin: p.Name(), Kind: EventFailed, Err: err})
}

func (p *Plugin) watchExit(inst *instance) {
	defer p.wg.Done()
	select {
	case <-inst.done:
		p.handleExit(inst)
	case <-p.stopCh:
	}
}

// handleExit reacts to the death of inst once, whoever noticed it first (the
// exit watcher or a call that failed under it): the plugin becomes
// unavailable at once and, policy permitting, is restarted.
func (p *Plugin) handleExit(inst *instance) {
	p.mu.Lock()
	if p.inst != inst || p.stopping {
		p.mu.Unlock()
		return
	}
	p.inst = nil
	reason := crashSummary(inst.exitStatus(), p.stderr.notableSince(inst.stderrFrom, 5))
	p.crashReason = reason
	crash := fmt.Errorf("plugin %q crashed: %s", p.name, reason)
	p.lastErr = crash

	policy := p.m.opts.Restart
	recent := p.recentRestartsLocked(time.Now())
	if policy.MaxRestarts < 0 || recent >= policy.MaxRestarts {
		p.state = StateFailed
		if policy.MaxRestarts < 0 {
			p.lastErr = fmt.Errorf("%w; restarts are disabled", crash)
		} else {
			p.lastErr = fmt.Errorf("plugin %q crashed after %d restarts within %s; giving up: %s",
				p.name, recent, policy.Window, reason)
		}
		failErr := p.lastErr
		p.mu.Unlock()
		go inst.kill() // release the client's goroutines
		p.logger().Error("plugin crashed too often; it will not be restarted", "error", failErr)
		p.m.emit(Event{Plugin: p.Name(), Kind: EventCrashed, Err: crash})
		p.m.emit(Event{Plugin: p.Name(), Kind: EventFailed, Err: failErr})
		return
	}
	p.state = StateRestarting
	p.wg.Add(1)
	p.mu.Unlock()

	p.logger().Error("plugin crashed; restarting", "reason", reason)
	p.m.emit(Event{Plugin: p.Name(), Kind: EventCrashed, Err: crash})
	go p.restartLoop(inst, recent)
}

// recentRestartsLocked drops restarts older than the window and counts the
// rest.
func (p *Plugin) recentRestartsLocked(now time.Time) int {
	window := p.m.opts.Restart.Window
	kept := p.restarts[:0]
	for _, t := range p.restarts {
		if now.Sub(t) < window {
			kept = append(kept, t)
		}
	}
	p.restarts = kept
	return len(kept)
}

// restartLoop replaces a dead instance with a fresh process (a fresh
// go-plugin client: one is never reused), after a backoff that grows with
// the number of recent restarts.
func (p *Plugin) restartLoop(dead *instance, attempt int) {
	defer p.wg.Done()
	dead.kill()
	for {
		select {
		case <-time.After(p.m.backoff(attempt)):
		case <-p.stopCh:
			return
		}
		p.mu.Lock()
		if p.stopping {
			p.mu.Unlock()
			return
		}
		p.restarts = append(p.restarts, time.Now())
		p.mu.Unlock()

		inst, err := p.m.relaunch(p.m.ctx, p)
		if err == nil {
			if err = p.m.bringUp(p.m.ctx, p, inst); err != nil {
				inst.kill()
			}
		}
		if err == nil {
			if !p.install(inst) {
				inst.kill()
			}
			return
		}

		p.mu.Lock()
		if p.stopping {
			p.mu.Unlock()
			return
		}
		p.lastErr = fmt.Errorf("restart of plugin %q failed: %w", p.name, err)
		policy := p.m.opts.Restart
		recent := p.recentRestartsLocked(time.Now())
		p.mu.Unlock()
		if recent >= policy.MaxRestarts {
			p.fail(fmt.Errorf("plugin %q could not be restarted (%d attempts within %s): %w", p.Name(), recent, policy.Window, err), false)
			return
		}
		p.logger().Warn("plugin restart failed; trying again", "error", err)
		attempt++
	}
}

// backoff is the delay before restart number attempt+1: exponential from
// BaseBackoff, capped at MaxBackoff, the upper half of it random.
func (m *Manager) backoff(attempt int) time.Duration {
	r := m.opts.Restart
	d := r.BaseBackoff
	for range attempt {
		d *= 2
		if d >= r.MaxBackoff {
			d = r.MaxBackoff
			break
		}
	}
	half := d / 2
	return half + rand.N(half+1)
}

// stop drains and kills the plugin: Disconnect, Drain (each bounded by
// DrainTimeout and ctx), a ShutdownNotice on its Watch stream, then Kill.
func (p *Plugin) stop(ctx context.Context) error {
	p.mu.Lock()
	if p.stopping {
		p.mu.Unlock()
		return nil
	}
	p.stopping = true
	close(p.stopCh)
	inst := p.inst
	p.inst = nil
	p.state = StateStopped
	p.mu.Unlock()

	var errs []error
	if inst != nil {
		timeout := p.m.opts.DrainTimeout
		if inst.platform != nil {
			dctx, cancel := context.WithTimeout(ctx, timeout)
			if _, err := inst.platform.Disconnect(dctx, &pb.DisconnectRequest{}); err != nil {
				errs = append(errs, fmt.Errorf("plugin %q: Disconnect: %w", p.Name(), err))
			}
			cancel()
		}
		dctx, cancel := context.WithTimeout(ctx, timeout)
		resp, err := inst.lifecycle.Drain(dctx, drainRequest(timeout))
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("plugin %q: Drain: %w", p.Name(), err))
		} else if n := resp.GetAbandoned(); n > 0 {
			p.logger().Warn("plugin abandoned in-flight work while draining", "abandoned", n)
		}
		if inst.host != nil {
			inst.host.Shutdown("the host is closing")
		}
		killWithin(ctx, inst)
	}
	p.wg.Wait()
	for _, err := range errs {
		p.logger().Warn("plugin did not stop cleanly", "error", err)
	}
	p.m.emit(Event{Plugin: p.Name(), Kind: EventStopped})
	return errors.Join(errs...)
}

// killWithin kills inst, giving up on go-plugin's graceful wait when ctx
// ends first (then the process is killed outright).
func killWithin(ctx context.Context, inst *instance) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		inst.kill()
	}()
	select {
	case <-done:
	case <-ctx.Done():
		if inst.cmd != nil && inst.cmd.Process != nil {
			_ = inst.cmd.Process.Kill()
		}
		<-done
	}
}

func drainRequest(timeout time.Duration) *pb.DrainRequest {
	return &pb.DrainRequest{TimeoutMs: uint32(timeout / time.Millisecond)}
}
