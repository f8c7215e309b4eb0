package testharness

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// Play plays the rule that matches the turn's message (Scenario is a
// Behavior).
func (s *Scenario) Play(ctx context.Context, t *Turn) error {
	rule := s.Select(t.Request)
	if rule == nil {
		return Failed(fmt.Sprintf("scenario %q: no rule matches message %q and there is no default rule",
			s.Name, truncate(SenderText(t.Request), 80)))
	}
	if rule.Name != "" {
		t.Logf("rule %q", rule.Name)
	}
	st := &playState{t: t}
	for i, a := range rule.Actions {
		// The rule's last output ends the turn (Turn.EndWith).
		st.last = i == len(rule.Actions)-1
		if err := st.do(ctx, a); err != nil {
			return err
		}
	}
	return nil
}

// HostTools returns the scenario's tool registry (Scenario is a
// ToolLister).
func (s *Scenario) HostTools() []*pb.ToolDefinition { return s.toolDefinitions() }

// Complete answers a model call with the first matching completion rule.
// A scenario without completion rules answers Unimplemented; one where no
// rule matches answers FailedPrecondition.
func (s *Scenario) Complete(_ context.Context, req *pb.CompleteRequest) (*pb.CompleteResponse, error) {
	if s.Completions == nil {
		return nil, status.Error(codes.Unimplemented, "Complete: this host has no model")
	}
	for i := range s.Completions {
		c := &s.Completions[i]
		if c.matches(req) {
			text := expandTemplate(c.Reply, func(name string) (string, bool) {
				switch name {
				case "prompt":
					return req.GetPrompt(), true
				case "system":
					return req.GetSystem(), true
				}
				return "", false
			})
			return &pb.CompleteResponse{Text: text}, nil
		}
	}
	return nil, status.Errorf(codes.FailedPrecondition,
		"Complete: scenario %q has no completion rule matching prompt %q", s.Name, truncate(req.GetPrompt(), 80))
}

// playState is what one rule's actions share while they play.
type playState struct {
	t         *Turn
	result    string
	artifacts int
	last      bool // the action being played is the rule's last
}

func (st *playState) lookup(name string) (string, bool) {
	req := st.t.Request
	switch name {
	case "text":
		return SenderText(req), true
	case "framed_text":
		return req.GetText(), true
	case "parts_text":
		return PartsText(req), true
	case "task_id":
		return req.GetTaskId(), true
	case "chat_id":
		return req.GetChatId(), true
	case "sender":
		return req.GetSender().GetId(), true
	case "turn":
		return strconv.Itoa(st.t.N), true
	case "turn_id":
		return st.t.ID, true
	case "message_id":
		return req.GetMessageId(), true
	case "platform":
		return req.GetPlatform(), true
	case "result":
		return st.result, true
	}
	if len(name) > len("metadata.") && name[:len("metadata.")] == "metadata." {
		return metadataLookup(req.GetMetadata(), name[len("metadata."):])
	}
	return "", false
}

func (st *playState) expand(s string) string { return expandTemplate(s, st.lookup) }

func (st *playState) parts(specs []PartSpec) ([]*pb.Part, error) {
	out := make([]*pb.Part, 0, len(specs))
	for _, p := range specs {
		pp, err := p.toProto(st.expand)
		if err != nil {
			return nil, err
		}
		out = append(out, pp)
	}
	return out, nil
}

var sendKinds = map[ActionKind]pb.SendKind{
	ActReply:    pb.SendKind_SEND_KIND_FINAL,
	ActEcho:     pb.SendKind_SEND_KIND_FINAL,
	ActProgress: pb.SendKind_SEND_KIND_PROGRESS,
	ActAsk:      pb.SendKind_SEND_KIND_INPUT_REQUIRED,
	ActAuth:     pb.SendKind_SEND_KIND_AUTH_REQUIRED,
	ActDirect:   pb.SendKind_SEND_KIND_DIRECT_REPLY,
}

func (st *playState) do(ctx context.Context, a Action) error {
	switch a.Kind {
	case ActReply, ActProgress, ActAsk, ActAuth, ActDirect, ActEcho:
		text := st.expand(a.Text)
		if a.Kind == ActEcho {
			// The sender's own words: a platform may have framed the
			// flattened text (the A2A plugin does).
			text += SenderText(st.t.Request)
		}
		parts, err := st.parts(a.Parts)
		if err != nil {
			return err
		}
		req := &pb.SendRequest{Kind: sendKinds[a.Kind], Text: text, Parts: parts}
		if a.Metadata != nil {
			md, err := structpb.NewStruct(expandAny(a.Metadata, st.expand).(map[string]any))
			if err != nil {
				return fmt.Errorf("metadata: %w", err)
			}
			req.Metadata = md
		}
		if st.last && req.Kind != pb.SendKind_SEND_KIND_PROGRESS {
			_, err = st.t.EndWith(ctx, req)
		} else {
			_, err = st.t.Send(ctx, req)
		}
		return err
	case ActFail:
		return Failed(st.expand(a.Text))
	case ActReject:
		return Rejected(st.expand(a.Text))
	case ActWait:
		return sleep(ctx, a.Wait)
	case ActHang:
		<-ctx.Done()
		return ctx.Err()
	case ActDrop:
		return ErrNoComplete
	case ActArtifact:
		return st.artifact(ctx, a.Artifact)
	case ActCallTool:
		return st.callTool(ctx, a.Tool)
	}
	return fmt.Errorf("unknown action %q", a.Kind)
}

func (st *playState) artifact(ctx context.Context, spec *ArtifactSpec) error {
	st.artifacts++
	id := st.expand(spec.ID)
	if id == "" {
		id = fmt.Sprintf("artifact-%d", st.artifacts)
	}
	base := func() *pb.Artifact {
		return &pb.Artifact{ArtifactId: id, Name: st.expand(spec.Name), Description: st.expand(spec.Description)}
	}
	if spec.Chunks <= 1 {
		parts, err := st.parts(spec.Parts)
		if err != nil {
			return err
		}
		a := base()
		a.Parts, a.LastChunk = parts, true
		_, err = st.t.Send(ctx, &pb.SendRequest{Kind: pb.SendKind_SEND_KIND_ARTIFACT, Artifact: a})
		return err
	}
	p := spec.Parts[0]
	for i, chunk := range splitRunes(st.expand(p.Text), spec.Chunks) {
		if i > 0 {
			if err := sleep(ctx, spec.ChunkWait); err != nil {
				return err
			}
		}
		a := base()
		a.Parts = []*pb.Part{{Content: &pb.Part_Text{Text: chunk}, MediaType: p.MediaType, Filename: p.Filename}}
		a.Append = i > 0
		a.LastChunk = i == spec.Chunks-1
		if _, err := st.t.Send(ctx, &pb.SendRequest{Kind: pb.SendKind_SEND_KIND_ARTIFACT, Artifact: a}); err != nil {
			return err
		}
	}
	return nil
}

// splitRunes splits s into n pieces of nearly equal rune counts (the first
// ones one longer); pieces are empty when s has fewer than n runes.
func splitRunes(s string, n int) []string {
	r := []rune(s)
	out := make([]string, n)
	size, rem := len(r)/n, len(r)%n
	at := 0
	for i := range out {
		l := size
		if i < rem {
			l++
		}
		out[i] = string(r[at : at+l])
		at += l
	}
	return out
}

func (st *playState) callTool(ctx context.Context, spec *ToolCallSpec) error {
	args := "{}"
	if spec.Args != nil {
		b, err := json.Marshal(expandAny(spec.Args, st.expand))
		if err != nil {
			return fmt.Errorf("call_tool %s: args: %w", spec.Name, err)
		}
		args = string(b)
	}
	var progress func(*pb.ToolProgress) error
	if spec.ForwardProgress {
		progress = func(p *pb.ToolProgress) error {
			_, err := st.t.Send(ctx, &pb.SendRequest{Kind: pb.SendKind_SEND_KIND_PROGRESS, Text: p.GetMessage()})
			return err
		}
	}
	res, err := st.t.CallTool(ctx, &pb.CallToolRequest{Name: spec.Name, ArgumentsJson: args}, progress)
	if err != nil {
		return fmt.Errorf("call_tool %s: %w", spec.Name, err)
	}
	st.result = res.GetContent()
	if res.GetIsError() && !spec.IgnoreError {
		return Failed(fmt.Sprintf("tool %s failed: %s", spec.Name, res.GetContent()))
	}
	if spec.NoReply {
		return nil
	}
	reply := spec.Reply
	if reply == "" {
		reply = "{{result}}"
	}
	_, err = st.t.Send(ctx, &pb.SendRequest{Kind: pb.SendKind_SEND_KIND_FINAL, Text: st.expand(reply)})
	return err
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
