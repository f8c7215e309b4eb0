package plugin

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// watchdog ends the plugin when its host is gone (see Serve). It owns the
// goroutines it starts; stop ends them.
type watchdog struct {
	logger hclog.Logger
	life   *servedLifecycle
	exit   func(int)

	stopped  chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup

	mu          sync.Mutex
	cancelWatch context.CancelFunc

	goneOnce sync.Once

	// Timings, from the constants in serve.go; tests shorten them.
	grace        time.Duration
	drainTimeout time.Duration
}

func newWatchdog(logger hclog.Logger, life *servedLifecycle, exit func(int)) *watchdog {
	return &watchdog{
		logger: logger, life: life, exit: exit, stopped: make(chan struct{}),
		grace: shutdownGrace, drainTimeout: hostLossDrainTimeout,
	}
}

// watchHost follows the Watch stream of h, replacing any earlier one.
func (w *watchdog) watchHost(h *hostClient) {
	ctx, cancel := context.WithCancel(context.Background())
	w.mu.Lock()
	select {
	case <-w.stopped:
		w.mu.Unlock()
		cancel()
		return
	default:
	}
	old := w.cancelWatch
	w.cancelWatch = cancel
	w.wg.Add(1)
	w.mu.Unlock()
	if old != nil {
		old()
	}
	go func() {
		defer w.wg.Done()
		w.followWatch(ctx, h)
	}()
}

func (w *watchdog) followWatch(ctx context.Context, h *hostClient) {
	stream, err := h.watch(ctx)
	if err == nil {
		// The stream is established by the first message (a heartbeat).
		var notice string
		for {
			msg, rerr := stream.Recv()
			if ctx.Err() != nil {
				return // replaced by a newer Configure, or Serve ended
			}
			if rerr != nil {
				err = rerr
				break
			}
			if sd := msg.GetShutdown(); sd != nil {
				notice = sd.GetReason()
				if notice == "" {
					notice = "no reason given"
				}
				w.logger.Info("host announced shutdown", "reason", notice)
			}
		}
		if notice != "" {
			select {
			case <-time.After(w.grace):
				w.hostGone(fmt.Sprintf("the host announced shutdown (%s) but did not stop the plugin within %s", notice, w.grace))
			case <-ctx.Done():
			case <-w.stopped:
			}
			return
		}
	}
	if ctx.Err() != nil {
		return
	}
	if status.Code(err) == codes.Unimplemented {
		w.logger.Warn("the host does not implement Watch; relying on the parent-process check alone")
		return
	}
	w.hostGone(fmt.Sprintf("the host Watch stream broke: %v", err))
}

// watchParent checks every interval that the parent is still ppid; a
// different parent means ours died and we were re-parented.
func (w *watchdog) watchParent(ppid int, interval time.Duration) {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-w.stopped:
				return
			case <-t.C:
				if now := os.Getppid(); now != ppid {
					w.hostGone(fmt.Sprintf("the parent process %d exited (the parent is now %d)", ppid, now))
					return
				}
			}
		}
	}()
}

// hostGone drains and exits, once, unless Serve is already ending.
func (w *watchdog) hostGone(reason string) {
	w.goneOnce.Do(func() {
		select {
		case <-w.stopped:
			return
		default:
		}
		w.logger.Warn("the host is gone; draining and exiting", "reason", reason)
		w.life.drainSelf(w.drainTimeout)
		w.logger.Info("exiting after losing the host")
		w.exit(0)
	})
}

// stop ends the watchdog's goroutines; Serve calls it when serving ended.
func (w *watchdog) stop() {
	w.stopOnce.Do(func() {
		w.mu.Lock()
		close(w.stopped)
		if w.cancelWatch != nil {
			w.cancelWatch()
		}
		w.mu.Unlock()
	})
	w.wg.Wait()
}
