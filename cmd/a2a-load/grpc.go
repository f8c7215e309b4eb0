package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
)

// The gRPC transport (-transport grpc): blocking SendMessage on
// lf.a2a.v1.A2AService with the official generated types. Each worker
// dials its own connection (as each HTTP worker keeps its own), so the
// server's per-connection reader is not one shared bottleneck.

// grpcTarget is the address to dial: -url as host:port, or the host:port
// of an http:// URL.
func grpcTarget(raw string) (string, error) {
	if u, err := url.Parse(raw); err == nil && (u.Scheme == "http" || u.Scheme == "grpc") && u.Host != "" {
		return u.Host, nil
	}
	if _, _, err := net.SplitHostPort(raw); err != nil {
		return "", fmt.Errorf("-url %q is not a gRPC address (host:port)", raw)
	}
	return raw, nil
}

// dialGRPC opens the worker's connection and the call metadata.
func (w *worker) dialGRPC(target string) error {
	cc, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	w.grpcConn = cc
	w.grpcAPI = a2apb.NewA2AServiceClient(cc)
	md := metadata.Pairs("a2a-version", "1.0")
	if t := w.r.cfg.Token; t != "" {
		md.Set("authorization", "Bearer "+t)
	}
	w.grpcMD = md
	return nil
}

// sendGRPC is one blocking SendMessage over gRPC: the answer must be a
// completed task carrying the marker twice (the request in the history
// and the echo), as over JSON-RPC.
func (w *worker) sendGRPC() outcome {
	r := w.r
	seq := r.seq.Add(1)
	id := r.prefix + "-" + strconv.FormatInt(seq, 10)
	marker := "#" + id
	req := &a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: id, Role: a2apb.Role_ROLE_USER,
		Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: r.cfg.Text + " " + marker}}}}}
	ctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(r.ctx, w.grpcMD), r.cfg.Timeout)
	defer cancel()
	w.httpReq++
	resp, err := w.grpcAPI.SendMessage(ctx, req)
	if err != nil {
		st := status.Convert(err)
		if ctx.Err() == context.DeadlineExceeded {
			return outcome{kind: "timeout", detail: st.Message()}
		}
		return outcome{kind: "grpc_" + st.Code().String(), detail: st.Message()}
	}
	task := resp.GetTask()
	if task == nil {
		return outcome{kind: "not_a_task", detail: resp.String()}
	}
	if s := task.GetStatus().GetState(); s != a2apb.TaskState_TASK_STATE_COMPLETED {
		return outcome{kind: "state_" + strings.TrimPrefix(s.String(), "TASK_STATE_"), detail: snippet([]byte(resp.String()))}
	}
	n := 0
	for _, m := range task.GetHistory() {
		for _, p := range m.GetParts() {
			n += strings.Count(p.GetText(), marker)
		}
	}
	for _, a := range task.GetArtifacts() {
		for _, p := range a.GetParts() {
			n += strings.Count(p.GetText(), marker)
		}
	}
	if n < 2 {
		return outcome{kind: "no_echo", detail: snippet([]byte(resp.String()))}
	}
	return outcome{}
}
