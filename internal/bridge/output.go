package bridge

// The output half: the host's Send and ProcessingComplete become updates of
// the task manager (Tasks), with every string redacted on the way.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// Tasks is what the bridge needs of the task manager: somewhere to put the
// agent's output. *tasks.Manager implements it; App hands it to Send and
// ProcessingComplete, so that the bridge and the manager are built in one
// pass (the manager runs turns through the bridge, the bridge gives the
// host's output to the manager).
type Tasks interface {
	// Apply records agent output for a task (tasks.Manager.Apply).
	Apply(ctx context.Context, taskID string, u tasks.Update) error
	// EndTurn ends a task's turn (tasks.Manager.EndTurn).
	EndTurn(ctx context.Context, taskID string, o tasks.Outcome, errText string) error
}

var _ Tasks = (*tasks.Manager)(nil)

// Send turns one piece of host output into a task update, applied to out.
func (b *Bridge) Send(ctx context.Context, out Tasks, req *pb.SendRequest) (*pb.SendResponse, error) {
	if req.GetTaskId() == "" {
		return nil, plugin.Mark(plugin.ErrInvalidArgument, errors.New("send: task_id is required; every A2A reply answers the task named in HandleMessage"))
	}
	u, apply, released, err := b.update(req)
	if err != nil {
		return nil, plugin.Mark(plugin.ErrInvalidArgument, fmt.Errorf("send: %w", err))
	}
	for _, r := range released {
		b.applyReleased(ctx, out, r.task, []tasks.Update{r.u})
	}
	if !apply {
		return &pb.SendResponse{}, nil // held back until the next chunk
	}
	if ends(req.GetKind()) {
		// The turn moves on: what its artifact streams hold goes first.
		b.applyReleased(ctx, out, req.GetTaskId(), b.releaseFor(req.GetTaskId()))
	}
	if err := out.Apply(ctx, req.GetTaskId(), u); err != nil {
		return nil, taskError(err)
	}
	var id string
	if u.Message != nil {
		id = u.Message.MessageID
	}
	return &pb.SendResponse{MessageId: id}, nil
}

// taskError marks the task manager's refusal of the host's output with the
// code the host sees: FailedPrecondition for a task without a running turn
// (unknown, finished, or waiting for its client), Internal otherwise.
func taskError(err error) error {
	if errors.Is(err, tasks.ErrTaskNotRunning) {
		return plugin.Mark(plugin.ErrNotReady, err)
	}
	return plugin.Mark(plugin.ErrInternal, err)
}

// ends reports whether a send of this kind ends (or interrupts) the turn.
func ends(k pb.SendKind) bool {
	return k != pb.SendKind_SEND_KIND_PROGRESS && k != pb.SendKind_SEND_KIND_ARTIFACT
}

// update converts a SendRequest into a tasks.Update, redacting secrets.
// apply is false for an artifact chunk held back entirely (chunks.go);
// released are updates of other tasks' streams given out to make room.
func (b *Bridge) update(req *pb.SendRequest) (u tasks.Update, apply bool, released []taskUpdate, err error) {
	u, err = b.updateFor(req, func(pa *pb.Artifact, art *a2a.Artifact, counted func(int)) (tasks.Update, bool) {
		var up tasks.Update
		up, apply, released = b.streamedArtifact(req.GetTaskId(), pa, art, counted)
		return up, apply
	})
	if err == nil && req.GetKind() != pb.SendKind_SEND_KIND_ARTIFACT {
		apply = true
	}
	return u, apply, released, err
}

// updateFor is update with the artifact step given: it gets the artifact
// with every string redacted but its text parts' text, which it redacts
// across chunks.
func (b *Bridge) updateFor(req *pb.SendRequest, artifact func(pa *pb.Artifact, art *a2a.Artifact, counted func(int)) (tasks.Update, bool)) (tasks.Update, error) {
	kind := req.GetKind()
	text := req.GetText()
	if kind == pb.SendKind_SEND_KIND_FINAL && strings.HasPrefix(strings.TrimSpace(text), InputRequiredPrefix) {
		kind = pb.SendKind_SEND_KIND_INPUT_REQUIRED
		text = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), InputRequiredPrefix))
	}
	redactions := 0
	redact := func(s string) string {
		out, n := security.Redact(s)
		redactions += n
		return out
	}
	defer func() {
		if redactions > 0 {
			b.log.Info("redacted credential-shaped strings from a reply", "task_id", req.GetTaskId(), "context_id", req.GetChatId(),
				"peer", b.peerOf(req.GetChatId()), "count", redactions)
			if b.obs != nil {
				b.obs.Redactions(redactions)
			}
		}
	}()
	parts, err := PartsFromProto(req.GetParts(), redact)
	if err != nil {
		return tasks.Update{}, err
	}
	if kind == pb.SendKind_SEND_KIND_ARTIFACT {
		pa := req.GetArtifact()
		if pa == nil {
			return tasks.Update{}, errors.New("an ARTIFACT send needs an artifact")
		}
		aparts, err := PartsFromProto(pa.GetParts(), redact)
		if err != nil {
			return tasks.Update{}, err
		}
		if len(aparts) == 0 {
			return tasks.Update{}, errors.New("the artifact has no parts")
		}
		md, err := fromStruct(pa.GetMetadata())
		if err != nil {
			return tasks.Update{}, err
		}
		if md != nil {
			md = redactValue(md, redact).(map[string]any)
		}
		// Text parts are redacted across chunks, from their raw text.
		for i, q := range pa.GetParts() {
			if t, ok := q.GetContent().(*pb.Part_Text); ok {
				raw := t.Text
				aparts[i].Text = &raw
			}
		}
		art := &a2a.Artifact{ArtifactID: pa.GetArtifactId(), Name: redact(pa.GetName()), Description: redact(pa.GetDescription()), Parts: aparts, Metadata: md}
		u, _ := artifact(pa, art, func(n int) { redactions += n })
		return u, nil
	}
	if text != "" {
		parts = append([]a2a.Part{a2a.TextPart(redact(text))}, parts...)
	}
	if len(parts) == 0 {
		return tasks.Update{}, fmt.Errorf("a %s send needs text or parts", kind)
	}
	md, err := fromStruct(req.GetMetadata())
	if err != nil {
		return tasks.Update{}, err
	}
	if md != nil {
		md = redactValue(md, redact).(map[string]any)
	}
	msg := a2a.NewMessage(a2a.RoleAgent, parts...)
	msg.Metadata = md
	u := tasks.Update{Message: &msg}
	if u.Kind, err = updateKindOf(kind); err != nil {
		return tasks.Update{}, err
	}
	return u, nil
}

// ProcessingComplete ends a turn in out.
func (b *Bridge) ProcessingComplete(ctx context.Context, out Tasks, req *pb.ProcessingCompleteRequest) (*pb.ProcessingCompleteResponse, error) {
	if req.GetTaskId() == "" {
		return nil, plugin.Mark(plugin.ErrInvalidArgument, errors.New("processing complete: task_id is required"))
	}
	o, err := outcomeOf(req.GetOutcome())
	if err != nil {
		return nil, plugin.Mark(plugin.ErrInvalidArgument, fmt.Errorf("processing complete: %w", err))
	}
	errText, _ := security.Redact(req.GetError())
	b.applyReleased(ctx, out, req.GetTaskId(), b.releaseFor(req.GetTaskId()))
	err = out.EndTurn(ctx, req.GetTaskId(), o, errText)
	b.turnEnded(req.GetChatId())
	if err != nil {
		return nil, taskError(err)
	}
	return &pb.ProcessingCompleteResponse{}, nil
}
