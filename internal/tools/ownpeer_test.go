package tools

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/server"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
)

// ownPeer is this plugin's own A2A server — task manager, memory store,
// JSON-RPC and SSE, exactly as the binary serves them — with a host agent
// played by a Go function, on httptest. It is the peer whose habits the
// tools must cope with: a streamed task is named only at the agent's first
// output (or after 3s), and a stream stays open at AUTH_REQUIRED.
type ownPeer struct {
	URL  string
	mgr  *tasks.Manager
	play func(ctx context.Context, p *ownPeer, turn *tasks.Turn)

	mu        sync.Mutex
	turns     []*tasks.Turn
	stops     map[string]context.CancelFunc
	cancelled chan string
}

// startOwnPeer serves an agent whose turns run play (in a goroutine each;
// ctx ends when the turn is cancelled). auth nil means no authentication.
func startOwnPeer(t *testing.T, auth *security.Authenticator, play func(ctx context.Context, p *ownPeer, turn *tasks.Turn)) *ownPeer {
	t.Helper()
	return startOwnPeerWrapped(t, auth, nil, play)
}

// startOwnPeerWrapped is startOwnPeer with the server's handler wrapped
// (nil: not wrapped), e.g. to stand for a proxy in front of it.
func startOwnPeerWrapped(t *testing.T, auth *security.Authenticator, wrap func(http.Handler) http.Handler, play func(ctx context.Context, p *ownPeer, turn *tasks.Turn)) *ownPeer {
	t.Helper()
	p := &ownPeer{play: play, stops: map[string]context.CancelFunc{}, cancelled: make(chan string, 16)}
	mgr, err := tasks.NewManager(tasks.Options{Store: store.NewMemory(1000), Executor: p, RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	p.mgr = mgr
	if _, err := mgr.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if auth == nil {
		auth, _ = security.NewAuthenticator(security.AuthConfig{LoopbackIsLocal: true})
	}
	srv, err := server.New(server.Options{Tasks: mgr, Auth: auth, Card: server.CardConfig{Name: "Own", Description: "this plugin's server"}})
	if err != nil {
		t.Fatal(err)
	}
	h := srv.Handler()
	if wrap != nil {
		h = wrap(h)
	}
	ts := httptest.NewServer(h)
	p.URL = ts.URL
	t.Cleanup(func() {
		p.mu.Lock()
		for _, stop := range p.stops {
			stop()
		}
		p.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		ts.CloseClientConnections()
		ts.Close()
		_ = mgr.Close(context.Background())
	})
	return p
}

// StartTurn implements tasks.Executor.
func (p *ownPeer) StartTurn(ctx context.Context, turn *tasks.Turn) error {
	tctx, stop := context.WithCancel(context.Background())
	p.mu.Lock()
	p.turns = append(p.turns, turn)
	p.stops[turn.TaskID] = stop
	p.mu.Unlock()
	go p.play(tctx, p, turn)
	return nil
}

// CancelTurn implements tasks.Executor.
func (p *ownPeer) CancelTurn(ctx context.Context, turn *tasks.Turn, reason string) error {
	p.mu.Lock()
	stop := p.stops[turn.TaskID]
	p.mu.Unlock()
	if stop != nil {
		stop()
	}
	select {
	case p.cancelled <- turn.TaskID:
	default:
	}
	return nil
}

// say applies an update to the turn's task.
func (p *ownPeer) say(turn *tasks.Turn, kind tasks.UpdateKind, text string) {
	m := a2a.NewMessage(a2a.RoleAgent, a2a.TextPart(text))
	_ = p.mgr.Apply(context.Background(), turn.TaskID, tasks.Update{Kind: kind, Message: &m})
}

// allTurns returns the turns the agent was given.
func (p *ownPeer) allTurns() []*tasks.Turn {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*tasks.Turn(nil), p.turns...)
}
