package tasks

import (
	"context"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
)

// echoExec answers every turn from a goroutine of its own, as the bridge
// does when the host's Send arrives: the final answer, then the turn's end.
type echoExec struct {
	m       *Manager
	started chan *Turn
}

func (e *echoExec) StartTurn(ctx context.Context, t *Turn) error {
	e.started <- t
	return nil
}

func (e *echoExec) CancelTurn(context.Context, *Turn, string) error { return nil }

func (e *echoExec) run() {
	answer := a2a.NewMessage(a2a.RoleAgent, a2a.TextPart("echo"))
	for t := range e.started {
		ctx := context.Background()
		_ = e.m.Apply(ctx, t.TaskID, Update{Kind: UpdateFinal, Message: &answer})
		_ = e.m.EndTurn(ctx, t.TaskID, OutcomeSuccess, "")
	}
}

// benchManager is a Manager on the memory store whose turns echoExec
// answers; it is closed when b ends.
func benchManager(b *testing.B) *Manager {
	ex := &echoExec{started: make(chan *Turn, 1024)}
	m, err := NewManager(Options{Store: store.NewMemory(10_000), Executor: ex, RequestTimeout: 5 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	ex.m = m
	if _, err := m.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = m.Close(context.Background()); close(ex.started) })
	for range 2 {
		go ex.run()
	}
	return m
}

// BenchmarkStream is the task manager's share of a SendStreamingMessage
// on the memory store: the stream's events (the task, WORKING, the
// answer's artifact, COMPLETED) read to its end.
func BenchmarkStream(b *testing.B) {
	m := benchManager(b)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		sub, err := m.Stream(context.Background(), sendParams(alice, "hello", nil))
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for range sub.Events() {
			n++
		}
		if n != 4 || sub.Err() != nil {
			b.Fatalf("%d events, %v", n, sub.Err())
		}
		sub.Close()
	}
}

// BenchmarkSendBlocking is the task manager's share of a blocking
// SendMessage on the memory store: prepare, queue, start the turn, the
// host's answer (Apply, EndTurn), the answer. No host, no HTTP.
func BenchmarkSendBlocking(b *testing.B) {
	// parallel: 8 senders per CPU, 16 on the 2-CPU machines we measure on.
	for _, par := range []int{0, 8} {
		b.Run(map[int]string{0: "serial", 8: "parallel"}[par], func(b *testing.B) {
			m := benchManager(b)
			b.ReportAllocs()
			send := func() {
				resp, err := m.Send(context.Background(), sendParams(alice, "hello", nil))
				if err != nil || resp.Task == nil || resp.Task.Status.State != a2a.TaskStateCompleted {
					b.Fatalf("Send = %+v, %v", resp, err)
				}
			}
			b.ResetTimer()
			if par == 0 {
				for range b.N {
					send()
				}
				return
			}
			b.SetParallelism(par)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					send()
				}
			})
		})
	}
}
