package bridge

// The one seam between the contract's types (pb) and the plugin's (a2a,
// tasks, security, tracing) on the platform side: every conversion between
// them is here.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	"github.com/a2a-plugin/a2a-plugin/internal/tasks"
	"github.com/a2a-plugin/a2a-plugin/internal/tracing"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
)

// TierToProto maps a security tier to the contract's enum.
func TierToProto(t security.Tier) pb.TrustTier {
	switch t {
	case security.TierLocal:
		return pb.TrustTier_TRUST_TIER_LOCAL
	case security.TierTrusted:
		return pb.TrustTier_TRUST_TIER_TRUSTED
	default:
		return pb.TrustTier_TRUST_TIER_PUBLIC
	}
}

// PartsToProto converts A2A parts to the contract's parts.
func PartsToProto(parts []a2a.Part) ([]*pb.Part, error) {
	if len(parts) == 0 {
		return nil, nil
	}
	out := make([]*pb.Part, 0, len(parts))
	for i := range parts {
		p := &parts[i]
		md, err := toStruct(p.Metadata)
		if err != nil {
			return nil, fmt.Errorf("part %d metadata: %w", i, err)
		}
		q := &pb.Part{MediaType: p.MediaType, Filename: p.Filename, Metadata: md}
		switch p.Kind() {
		case a2a.PartText:
			q.Content = &pb.Part_Text{Text: *p.Text}
		case a2a.PartRaw:
			q.Content = &pb.Part_Raw{Raw: p.Raw}
		case a2a.PartURL:
			q.Content = &pb.Part_Url{Url: *p.URL}
		case a2a.PartData:
			v := &structpb.Value{}
			if err := protojson.Unmarshal(p.Data, v); err != nil {
				return nil, fmt.Errorf("part %d data: %w", i, err)
			}
			q.Content = &pb.Part_Data{Data: v}
		default:
			return nil, fmt.Errorf("part %d has no content", i)
		}
		out = append(out, q)
	}
	return out, nil
}

// PartsFromProto converts the contract's parts to A2A parts, passing text
// through redact (when non-nil).
func PartsFromProto(parts []*pb.Part, redact func(string) string) ([]a2a.Part, error) {
	if len(parts) == 0 {
		return nil, nil
	}
	if redact == nil {
		redact = func(s string) string { return s }
	}
	out := make([]a2a.Part, 0, len(parts))
	for i, q := range parts {
		md, err := fromStruct(q.GetMetadata())
		if err != nil {
			return nil, fmt.Errorf("part %d metadata: %w", i, err)
		}
		var p a2a.Part
		switch c := q.GetContent().(type) {
		case *pb.Part_Text:
			p = a2a.TextPart(redact(c.Text))
		case *pb.Part_Raw:
			p = a2a.Part{Raw: c.Raw}
		case *pb.Part_Url:
			u := redact(c.Url)
			p = a2a.Part{URL: &u}
		case *pb.Part_Data:
			b, err := protojson.Marshal(c.Data)
			if err != nil {
				return nil, fmt.Errorf("part %d data: %w", i, err)
			}
			var v any
			if err := json.Unmarshal(b, &v); err != nil {
				return nil, fmt.Errorf("part %d data: %w", i, err)
			}
			p = a2a.DataPart(redactValue(v, redact))
		default:
			return nil, fmt.Errorf("part %d has no content (set text, raw, url or data)", i)
		}
		if md != nil {
			md = redactValue(md, redact).(map[string]any)
		}
		p.MediaType, p.Filename, p.Metadata = q.GetMediaType(), redact(q.GetFilename()), md
		out = append(out, p)
	}
	return out, nil
}

func toStruct(m map[string]any) (*structpb.Struct, error) {
	if len(m) == 0 {
		return nil, nil
	}
	return structpb.NewStruct(normalizeJSON(m).(map[string]any))
}

func fromStruct(s *structpb.Struct) (map[string]any, error) {
	if s == nil || len(s.GetFields()) == 0 {
		return nil, nil
	}
	return s.AsMap(), nil
}

// normalizeJSON converts values structpb cannot take (json.Number, typed
// slices) by a JSON round trip when needed.
func normalizeJSON(v any) any {
	if _, err := structpb.NewValue(v); err == nil {
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

// traceToProto is a trace context as the contract carries it (nil for
// none).
func traceToProto(tc tracing.Context) *pb.TraceContext {
	if tc.Traceparent == "" {
		return nil
	}
	return &pb.TraceContext{Traceparent: tc.Traceparent, Tracestate: tc.Tracestate}
}

// TraceFromProto is the contract's trace context as the plugin keeps it:
// tracing.Received drops a malformed one.
func TraceFromProto(tc *pb.TraceContext) tracing.Context {
	return tracing.Received(tc.GetTraceparent(), tc.GetTracestate())
}

// updateKindOf maps a Send kind (but ARTIFACT, which is an artifact update)
// to the kind of task update it makes.
func updateKindOf(kind pb.SendKind) (tasks.UpdateKind, error) {
	var k tasks.UpdateKind
	switch kind {
	case pb.SendKind_SEND_KIND_PROGRESS:
		k = tasks.UpdateProgress
	case pb.SendKind_SEND_KIND_FINAL:
		k = tasks.UpdateFinal
	case pb.SendKind_SEND_KIND_INPUT_REQUIRED:
		k = tasks.UpdateInputRequired
	case pb.SendKind_SEND_KIND_AUTH_REQUIRED:
		k = tasks.UpdateAuthRequired
	case pb.SendKind_SEND_KIND_DIRECT_REPLY:
		k = tasks.UpdateDirectReply
	default:
		return 0, fmt.Errorf("kind %s is not one of PROGRESS, FINAL, INPUT_REQUIRED, ARTIFACT, DIRECT_REPLY, AUTH_REQUIRED", kind)
	}
	return k, nil
}

// outcomeOf maps the outcome of ProcessingComplete.
func outcomeOf(o pb.Outcome) (tasks.Outcome, error) {
	switch o {
	case pb.Outcome_OUTCOME_SUCCESS:
		return tasks.OutcomeSuccess, nil
	case pb.Outcome_OUTCOME_FAILURE:
		return tasks.OutcomeFailure, nil
	case pb.Outcome_OUTCOME_CANCELLED:
		return tasks.OutcomeCancelled, nil
	case pb.Outcome_OUTCOME_REJECTED:
		return tasks.OutcomeRejected, nil
	}
	return 0, fmt.Errorf("outcome %s is not SUCCESS, FAILURE, CANCELLED or REJECTED", o)
}

// OwnToolset is the toolset of the plugin's own tools (internal/tools),
// which the card does not advertise as skills by default: they are how the
// agent calls others, not what it offers.
const OwnToolset = "a2a"

// AllToolsets in advertised_toolsets stands for every host toolset but
// the plugin's own (OwnToolset).
const AllToolsets = "*"

// SkillsOf builds Agent Card skills from the host's live tool registry,
// for the toolsets the operator advertises (advertised_toolsets): one skill
// per tool of those toolsets (first of a name wins; AllToolsets: every tool
// but the plugin's own), with the tool's description (or a generic one)
// and its toolset and tags as tags. No toolsets: no skills — the host's
// tools are private unless the operator opts in.
func SkillsOf(defs []*pb.ToolDefinition, toolsets []string) []a2a.AgentSkill {
	out := make([]a2a.AgentSkill, 0, len(defs))
	seen := make(map[string]bool, len(defs))
	all := slices.Contains(toolsets, AllToolsets)
	for _, d := range defs {
		if d == nil || d.GetName() == "" || seen[d.GetName()] {
			continue
		}
		if all {
			if d.GetToolset() == OwnToolset && !slices.Contains(toolsets, OwnToolset) {
				continue
			}
		} else if !slices.Contains(toolsets, d.GetToolset()) {
			continue
		}
		seen[d.GetName()] = true
		desc := strings.TrimSpace(d.GetDescription())
		if desc == "" {
			desc = "Uses the " + d.GetName() + " tool."
		}
		tags := make([]string, 0, 1+len(d.GetTags()))
		for _, t := range append([]string{d.GetToolset()}, d.GetTags()...) {
			if t = strings.TrimSpace(t); t != "" && !slices.Contains(tags, t) {
				tags = append(tags, t)
			}
		}
		if len(tags) == 0 {
			tags = append(tags, "tool")
		}
		out = append(out, a2a.AgentSkill{ID: d.GetName(), Name: d.GetName(), Description: desc, Tags: tags})
	}
	return out
}
