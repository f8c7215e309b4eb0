package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// rpcClient makes one JSON-RPC call at a time over one keep-alive
// connection: the cost measurements time single requests in sequence
// (turn after turn of one context), which a2a-load does not do.
type rpcClient struct {
	url string
	hc  *http.Client
	seq atomic.Int64
}

func newRPCClient(url string) *rpcClient {
	return &rpcClient{url: url, hc: &http.Client{Timeout: 60 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}}}
}

func (c *rpcClient) close() { c.hc.CloseIdleConnections() }

// rpcTask is what the measurements read of a task.
type rpcTask struct {
	ID        string `json:"id"`
	ContextID string `json:"contextId"`
	Status    struct {
		State string `json:"state"`
	} `json:"status"`
	History   []json.RawMessage `json:"history"`
	Artifacts []struct {
		Parts []struct {
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"artifacts"`
}

// call posts one request and decodes its result into out (when not nil);
// it returns the round trip's duration and the response's size.
func (c *rpcClient) call(method string, params any, out any) (time.Duration, int, error) {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.seq.Add(1), "method": method, "params": params})
	if err != nil {
		return 0, 0, err
	}
	req, _ := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	t0 := time.Now()
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", method, err)
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(t0)
	if err != nil {
		return d, len(raw), fmt.Errorf("%s: %w", method, err)
	}
	if resp.StatusCode != http.StatusOK {
		return d, len(raw), fmt.Errorf("%s: HTTP %d: %.200s", method, resp.StatusCode, raw)
	}
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return d, len(raw), fmt.Errorf("%s: %w", method, err)
	}
	if env.Error != nil {
		return d, len(raw), fmt.Errorf("%s: error %d: %s", method, env.Error.Code, env.Error.Message)
	}
	if out != nil {
		if err := json.Unmarshal(env.Result, out); err != nil {
			return d, len(raw), fmt.Errorf("%s: result: %w", method, err)
		}
	}
	return d, len(raw), nil
}

// send is a blocking SendMessage; see sendConf.
func (c *rpcClient) send(text, contextID, taskID string, historyLength int) (rpcTask, time.Duration, error) {
	return c.sendConf(text, contextID, taskID, historyLength, false)
}

// sendConf is a SendMessage of text, in the given context and task
// when set, asking for at most historyLength messages back (0: the
// server's default).
func (c *rpcClient) sendConf(text, contextID, taskID string, historyLength int, async bool) (rpcTask, time.Duration, error) {
	msg := map[string]any{"messageId": fmt.Sprintf("bench-%d-%d", time.Now().UnixNano(), c.seq.Load()),
		"role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}
	if contextID != "" {
		msg["contextId"] = contextID
	}
	if taskID != "" {
		msg["taskId"] = taskID
	}
	params := map[string]any{"message": msg}
	conf := map[string]any{}
	if historyLength > 0 {
		conf["historyLength"] = historyLength
	}
	if async {
		conf["returnImmediately"] = true
	}
	if len(conf) > 0 {
		params["configuration"] = conf
	}
	var out struct {
		Task *rpcTask `json:"task"`
	}
	d, _, err := c.call("SendMessage", params, &out)
	if err == nil && out.Task == nil {
		err = errors.New("SendMessage: the answer is no task")
	}
	if err != nil {
		return rpcTask{}, d, err
	}
	return *out.Task, d, nil
}

// cancel is CancelTask.
func (c *rpcClient) cancel(id string) error {
	_, _, err := c.call("CancelTask", map[string]any{"id": id}, nil)
	return err
}

// getTask is GetTask with historyLength (0: not set, the whole history);
// it returns the task, the call's duration and the response's size.
func (c *rpcClient) getTask(id string, historyLength int) (rpcTask, time.Duration, int, error) {
	params := map[string]any{"id": id}
	if historyLength > 0 {
		params["historyLength"] = historyLength
	}
	var t rpcTask
	d, n, err := c.call("GetTask", params, &t)
	return t, d, n, err
}

// openConn opens a raw keep-alive connection to addr and makes one GET of
// path on it, reading the whole response; the connection stays open (idle)
// for the caller to close. It returns the response's status.
func openConn(ctx context.Context, addr, path string) (net.Conn, int, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, 0, err
	}
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: keep-alive\r\n\r\n", path, addr)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		conn.Close()
		return nil, 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	conn.SetDeadline(time.Time{})
	return conn, resp.StatusCode, nil
}

// openStream opens a SendStreamingMessage of text on a connection of its
// own and returns once its first SSE event arrived; the stream stays open
// for the caller to close (closing the connection ends it).
func openStream(ctx context.Context, addr, path, text string) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": map[string]any{
		"message": map[string]any{"messageId": fmt.Sprintf("hold-%d", time.Now().UnixNano()), "role": "ROLE_USER",
			"parts": []any{map[string]any{"text": text}}}}})
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nAccept: text/event-stream\r\nContent-Length: %d\r\n\r\n%s",
		path, addr, len(body), body)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		conn.Close()
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		conn.Close()
		return nil, fmt.Errorf("SendStreamingMessage: HTTP %d: %s", resp.StatusCode, b)
	}
	// The first event: a "data:" line.
	rd := bufio.NewReader(resp.Body)
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			conn.Close()
			return nil, fmt.Errorf("SendStreamingMessage: before the first event: %w", err)
		}
		if strings.HasPrefix(line, "data:") {
			if strings.Contains(line, `"error"`) {
				conn.Close()
				return nil, fmt.Errorf("SendStreamingMessage: %.200s", line)
			}
			break
		}
	}
	conn.SetDeadline(time.Time{})
	return conn, nil
}
