package main

// The control socket lets "agenthost tool" call a tool on a running
// "agenthost run" instead of starting a second host beside it, whose
// plugins would try to bind the same port and open the same state.
//
// "agenthost run" listens on <data dir>/agenthost.sock (a Unix socket, mode
// 0600, in the data directory it holds the lock of). A call is one
// connection: the client writes one JSON line (controlRequest), the host
// answers with JSON lines (controlReply), progress first, then the result
// or an error, and closes.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// controlSocket is the socket's name inside the data directory.
const controlSocket = "agenthost.sock"

// maxSocketPath is the longest path a Unix socket address takes on Linux
// and the BSDs (sun_path, with its terminating NUL).
const maxSocketPath = 103

type controlRequest struct {
	Tool      string `json:"tool"`
	Arguments string `json:"arguments"`
	ChatID    string `json:"chat_id,omitempty"`
	TimeoutMS int64  `json:"timeout_ms,omitempty"`
}

type controlReply struct {
	Progress *controlProgress `json:"progress,omitempty"`
	Result   *controlResult   `json:"result,omitempty"`
	Error    string           `json:"error,omitempty"`
}

type controlProgress struct {
	Message  string  `json:"message"`
	Fraction float64 `json:"fraction"`
}

type controlResult struct {
	Content string `json:"content"`
	IsError bool   `json:"is_error"`
}

// controlPath is the socket of the host whose data directory is dataDir.
func controlPath(dataDir string) string { return filepath.Join(dataDir, controlSocket) }

// serveControl serves tool calls on the host h at dataDir's socket until
// the returned stop is called. A path too long for a socket address is
// reported and nothing is served: tool calls then start their own host.
func serveControl(dataDir string, h *testharness.Host, logf func(string, ...any)) (stop func(), err error) {
	path := controlPath(dataDir)
	if len(path) > maxSocketPath {
		return func() {}, fmt.Errorf("the control socket %s is longer than a socket address may be (%d bytes); `agenthost tool` will start its own host instead of calling this one", path, maxSocketPath)
	}
	// The data directory is locked by this process, so a socket left there
	// is a dead host's.
	_ = os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return func() {}, fmt.Errorf("control socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return func() {}, fmt.Errorf("control socket: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { handleControl(ctx, conn, h, logf) })
		}
	})
	return func() {
		cancel()
		ln.Close()
		wg.Wait()
		_ = os.Remove(path)
	}, nil
}

func handleControl(ctx context.Context, conn net.Conn, h *testharness.Host, logf func(string, ...any)) {
	defer conn.Close()
	var mu sync.Mutex
	enc := json.NewEncoder(conn)
	reply := func(r controlReply) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(r)
	}
	var req controlRequest
	if err := json.NewDecoder(io.LimitReader(conn, 64<<20)).Decode(&req); err != nil {
		reply(controlReply{Error: "agenthost: unreadable tool request: " + err.Error()})
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if req.TimeoutMS > 0 {
		ctx, cancel = context.WithTimeout(ctx, time.Duration(req.TimeoutMS)*time.Millisecond)
		defer cancel()
	}
	// A client that goes away (Ctrl-C) cancels its call.
	go func() {
		_, _ = io.Copy(io.Discard, conn)
		cancel()
	}()
	logf("tool %s called through the control socket", req.Tool)
	res, err := h.CallToolProgress(ctx, &pb.CallToolRequest{Name: req.Tool, ArgumentsJson: req.Arguments, ChatId: req.ChatID, Platform: "agenthost"},
		func(p *pb.ToolProgress) error {
			reply(controlReply{Progress: &controlProgress{Message: p.GetMessage(), Fraction: p.GetFraction()}})
			return nil
		})
	if err != nil {
		reply(controlReply{Error: err.Error()})
		return
	}
	reply(controlReply{Result: &controlResult{Content: res.GetContent(), IsError: res.GetIsError()}})
}

// errNoHost is returned by callRunning when no host serves the socket.
var errNoHost = errors.New("no agenthost is running on this data directory")

// callRunning calls a tool on the host running on dataDir, if any.
func callRunning(ctx context.Context, dataDir string, req controlRequest, progress func(controlProgress)) (*controlResult, error) {
	path := controlPath(dataDir)
	if len(path) > maxSocketPath {
		return nil, errNoHost
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, errNoHost
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return nil, fmt.Errorf("send the call to the running agenthost: %w", err)
	}
	sc := bufio.NewScanner(conn)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var r controlReply
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("unreadable answer from the running agenthost: %w", err)
		}
		switch {
		case r.Progress != nil:
			progress(*r.Progress)
		case r.Result != nil:
			return r.Result, nil
		case r.Error != "":
			return nil, errors.New(r.Error)
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, errors.New("the running agenthost closed the call without an answer (did it stop?)")
}
