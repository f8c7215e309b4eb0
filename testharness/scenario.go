package testharness

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// Scenario is a scripted agent: the host's tool registry, ordered rules that
// match inbound messages and the actions each plays, a default rule for
// messages no rule matches, and optional answers to the host's one-shot
// model call (Complete).
//
// A Scenario is a Behavior; pass it to NewAgent. Build one in Go or parse a
// file with ParseScenario / LoadScenario. The file format is described in
// README.md.
type Scenario struct {
	// Name labels the scenario in logs and errors.
	Name string
	// Tools is the host's tool registry, returned by Host.ListTools.
	Tools []ToolSpec
	// Rules are tried in order; the first whose conditions all hold plays.
	Rules []Rule
	// Default plays when no rule matches. Without it such a turn fails.
	Default *Rule
	// Completions answer Host.Complete, first match wins. When nil the host
	// has no model and Complete answers Unimplemented.
	Completions []CompletionRule
}

// ToolSpec is one tool of the host's registry.
type ToolSpec struct {
	// Name is the tool's unique name.
	Name string
	// Description says what the tool does, written for a model.
	Description string
	// Toolset names the toolset that provides the tool.
	Toolset string
	// Tags are free-form labels.
	Tags []string
	// Parameters is the JSON Schema of the arguments; empty means an object
	// with no declared properties.
	Parameters json.RawMessage
}

// Rule is a set of conditions and the actions played when all hold.
type Rule struct {
	// Name labels the rule in logs; optional.
	Name string
	// Match holds conditions that must all hold. Empty matches everything.
	Match []Condition
	// Actions play in order. Unless one of them ends the turn (fail,
	// reject, drop), the turn ends with ProcessingComplete SUCCESS.
	Actions []Action
}

// MatchOp is how a Condition compares a field with its value.
type MatchOp string

// Comparison operators of a Condition.
const (
	// OpEquals holds when the field equals the value.
	OpEquals MatchOp = "equals"
	// OpPrefix holds when the field starts with the value.
	OpPrefix MatchOp = "prefix"
	// OpContains holds when the field contains the value.
	OpContains MatchOp = "contains"
	// OpRegexp holds when the regular expression (RE2) matches the field.
	OpRegexp MatchOp = "regexp"
)

// Fields a Rule condition can test. "metadata.<key>" (a dotted path into
// the message metadata) is accepted too.
var messageFields = []string{
	"text", "framed_text", "parts_text", "message_id", "sender", "sender_name", "trust_tier",
	"continuation", "unattended", "chat_id", "task_id", "platform",
}

// Fields a CompletionRule condition can test.
var completionFields = []string{"prompt", "system"}

// Condition tests one field of an inbound message (or of a completion
// request). Build one with Match or as a struct literal.
type Condition struct {
	// Field names what is tested: one of text (the sender's own words,
	// SenderText), framed_text (HandleMessageRequest.text as the platform
	// sent it: the A2A plugin frames an untrusted sender's words for a
	// model), parts_text (the text parts of the original message, joined
	// by newlines), message_id, sender (the
	// sender id), sender_name, trust_tier (public, trusted, local,
	// unspecified), continuation and unattended ("true"/"false"), chat_id,
	// task_id, platform, or metadata.<key>[.<key>…]. A metadata value that
	// is not a string is compared as JSON.
	Field string
	// Op is how the field is compared.
	Op MatchOp
	// Value is what the field is compared with.
	Value string

	re *regexp.Regexp
}

// Match builds a Condition.
func Match(field string, op MatchOp, value string) Condition {
	return Condition{Field: field, Op: op, Value: value}
}

// CompletionRule answers a Host.Complete call whose request matches.
type CompletionRule struct {
	// Match holds conditions on "prompt" and "system"; empty matches all.
	Match []Condition
	// Reply is the model's answer; {{prompt}} and {{system}} are replaced.
	Reply string
}

// ActionKind names what an Action does.
type ActionKind string

// Action kinds. See Action for the fields each uses.
const (
	// ActReply sends FINAL with Text (and Parts).
	ActReply ActionKind = "reply"
	// ActProgress sends PROGRESS with Text.
	ActProgress ActionKind = "progress"
	// ActArtifact sends ARTIFACT, whole or in chunks.
	ActArtifact ActionKind = "artifact"
	// ActAsk sends INPUT_REQUIRED with Text (the question).
	ActAsk ActionKind = "ask"
	// ActAuth sends AUTH_REQUIRED with Text.
	ActAuth ActionKind = "auth"
	// ActDirect sends DIRECT_REPLY with Text.
	ActDirect ActionKind = "direct"
	// ActFail ends the turn with ProcessingComplete FAILURE, error Text.
	ActFail ActionKind = "fail"
	// ActReject ends the turn with ProcessingComplete REJECTED, error Text.
	ActReject ActionKind = "reject"
	// ActWait sleeps for Wait; CancelTurn interrupts it.
	ActWait ActionKind = "wait"
	// ActEcho sends FINAL with Text (a prefix) followed by the inbound text.
	ActEcho ActionKind = "echo"
	// ActCallTool calls a tool on the host's toolsets and replies with the
	// result.
	ActCallTool ActionKind = "call_tool"
	// ActHang waits until the turn is cancelled (then CANCELLED), like a
	// model that never answers.
	ActHang ActionKind = "hang"
	// ActDrop ends the turn without any ProcessingComplete, like a host
	// that went silent (for watchdog tests).
	ActDrop ActionKind = "drop"
)

var actionKinds = []ActionKind{
	ActReply, ActProgress, ActArtifact, ActAsk, ActAuth, ActDirect, ActFail,
	ActReject, ActWait, ActEcho, ActCallTool, ActHang, ActDrop,
}

// Action is one step of a rule. Texts may contain template variables:
// {{text}} (the sender's words), {{framed_text}}, {{parts_text}},
// {{task_id}}, {{chat_id}}, {{sender}}, {{turn}} (the n-th message of this
// chat, from 1), {{turn_id}}, {{message_id}}, {{platform}},
// {{result}} (the content of the last call_tool) and {{metadata.<key>}}.
type Action struct {
	// Kind says what the action does.
	Kind ActionKind
	// Text is the message of reply, progress, ask, auth, direct, the error
	// of fail and reject, and the prefix of echo.
	Text string
	// Parts are extra parts sent with reply, progress, ask, auth, direct
	// and echo.
	Parts []PartSpec
	// Metadata is attached to the Send (reply, progress, ask, auth,
	// direct, echo); a JSON object.
	Metadata map[string]any
	// Artifact is the artifact of an artifact action.
	Artifact *ArtifactSpec
	// Wait is how long a wait action sleeps.
	Wait time.Duration
	// Tool is the call of a call_tool action.
	Tool *ToolCallSpec
}

// PartKind says which content a PartSpec carries.
type PartKind string

// Part content kinds.
const (
	// PartText is plain text (templated).
	PartText PartKind = "text"
	// PartRaw is inline file bytes.
	PartRaw PartKind = "raw"
	// PartURL is a file by reference (templated).
	PartURL PartKind = "url"
	// PartData is structured data: any JSON value.
	PartData PartKind = "data"
)

// PartSpec is one part of a reply or an artifact.
type PartSpec struct {
	// Kind says which of Text, Raw, URL and Data is the content.
	Kind PartKind
	// Text is the content of a text part.
	Text string
	// Raw is the content of a file part given inline.
	Raw []byte
	// URL is the content of a file part given by reference.
	URL string
	// Data is the content of a data part; any value encoding/json accepts.
	Data any
	// MediaType is the MIME type, e.g. "image/png".
	MediaType string
	// Filename is the file name of a file part.
	Filename string
}

// TextPart builds a text part.
func TextPart(text string) PartSpec { return PartSpec{Kind: PartText, Text: text} }

// FilePart builds a part with inline file bytes.
func FilePart(raw []byte, mediaType, filename string) PartSpec {
	return PartSpec{Kind: PartRaw, Raw: raw, MediaType: mediaType, Filename: filename}
}

// URLPart builds a part with a file by reference.
func URLPart(url, mediaType, filename string) PartSpec {
	return PartSpec{Kind: PartURL, URL: url, MediaType: mediaType, Filename: filename}
}

// DataPart builds a structured-data part.
func DataPart(v any) PartSpec { return PartSpec{Kind: PartData, Data: v} }

// ArtifactSpec is the artifact an artifact action sends.
type ArtifactSpec struct {
	// ID is the artifact id (templated); empty means
	// "artifact-<n>" with n counting artifacts in the turn.
	ID string
	// Name and Description label the artifact (templated).
	Name, Description string
	// Parts are the content.
	Parts []PartSpec
	// Chunks > 1 splits a single text part into that many chunks, sent as
	// separate ARTIFACT sends sharing the id: the first with append=false,
	// the rest with append=true, the last with last_chunk=true.
	Chunks int
	// ChunkWait is slept between chunks (cancellable).
	ChunkWait time.Duration
}

// ToolCallSpec is the tool call of a call_tool action.
type ToolCallSpec struct {
	// Name is the tool to call.
	Name string
	// Args are the arguments: a JSON-able value (normally a map); every
	// string inside is templated. nil means {}.
	Args any
	// Reply is the FINAL text sent with the result; "" means "{{result}}".
	Reply string
	// NoReply calls the tool without replying; later actions can use
	// {{result}}.
	NoReply bool
	// ForwardProgress sends each progress event of the tool as PROGRESS.
	ForwardProgress bool
	// IgnoreError goes on when the result is an error; otherwise the turn
	// fails with the result's content.
	IgnoreError bool
}

// Action constructors for scenarios built in Go.

// Reply sends FINAL text.
func Reply(text string, parts ...PartSpec) Action {
	return Action{Kind: ActReply, Text: text, Parts: parts}
}

// Progress sends PROGRESS text.
func Progress(text string) Action { return Action{Kind: ActProgress, Text: text} }

// Ask sends INPUT_REQUIRED with a question.
func Ask(question string) Action { return Action{Kind: ActAsk, Text: question} }

// Auth sends AUTH_REQUIRED with a message.
func Auth(text string) Action { return Action{Kind: ActAuth, Text: text} }

// Direct sends DIRECT_REPLY text.
func Direct(text string) Action { return Action{Kind: ActDirect, Text: text} }

// Fail ends the turn with FAILURE and the given error.
func Fail(message string) Action { return Action{Kind: ActFail, Text: message} }

// Reject ends the turn with REJECTED and the given reason.
func Reject(reason string) Action { return Action{Kind: ActReject, Text: reason} }

// Wait sleeps for d, or until the turn is cancelled.
func Wait(d time.Duration) Action { return Action{Kind: ActWait, Wait: d} }

// Echo replies FINAL with prefix followed by the inbound text.
func Echo(prefix string) Action { return Action{Kind: ActEcho, Text: prefix} }

// Hang waits until the turn is cancelled.
func Hang() Action { return Action{Kind: ActHang} }

// Drop ends the turn without ProcessingComplete.
func Drop() Action { return Action{Kind: ActDrop} }

// ArtifactAction sends an artifact.
func ArtifactAction(a ArtifactSpec) Action { return Action{Kind: ActArtifact, Artifact: &a} }

// CallTool calls a tool on the host's toolsets and replies with its result.
func CallTool(spec ToolCallSpec) Action { return Action{Kind: ActCallTool, Tool: &spec} }

// EchoScenario is a scenario whose default rule echoes the inbound text as
// the FINAL reply.
func EchoScenario() *Scenario {
	return &Scenario{Name: "echo", Default: &Rule{Name: "echo", Actions: []Action{Echo("")}}}
}

// Validate checks the scenario and prepares it for playing (compiles
// regular expressions). NewAgent calls it; call it yourself to check a
// scenario built in Go early.
func (s *Scenario) Validate() error {
	ferrs := s.validate()
	if len(ferrs) == 0 {
		return nil
	}
	errs := make([]error, len(ferrs))
	for i, fe := range ferrs {
		errs[i] = fe
	}
	name := s.Name
	if name == "" {
		name = "scenario"
	}
	return fmt.Errorf("%s: %w", name, errors.Join(errs...))
}

// fieldError is a validation error at a field path such as
// "rules[0].actions[1].reply".
type fieldError struct {
	Path string
	Err  error
}

func (e fieldError) Error() string { return e.Path + ": " + e.Err.Error() }

func (e fieldError) Unwrap() error { return e.Err }

func (s *Scenario) validate() []fieldError {
	var errs []fieldError
	add := func(path string, err error) { errs = append(errs, fieldError{path, err}) }
	seen := map[string]bool{}
	for i, t := range s.Tools {
		p := fmt.Sprintf("tools[%d]", i)
		if t.Name == "" {
			add(p+".name", errors.New("required"))
		} else if seen[t.Name] {
			add(p+".name", fmt.Errorf("duplicate tool %q", t.Name))
		}
		seen[t.Name] = true
		if len(t.Parameters) > 0 && !json.Valid(t.Parameters) {
			add(p+".parameters", errors.New("not valid JSON"))
		}
	}
	for i := range s.Rules {
		errs = append(errs, s.Rules[i].validate(fmt.Sprintf("rules[%d]", i))...)
	}
	if s.Default != nil {
		if len(s.Default.Match) > 0 {
			add("default.match", errors.New("the default rule cannot have conditions"))
		}
		errs = append(errs, s.Default.validate("default")...)
	}
	for i := range s.Completions {
		c := &s.Completions[i]
		p := fmt.Sprintf("complete[%d]", i)
		for j := range c.Match {
			if err := c.Match[j].compile(completionFields, false); err != nil {
				add(p+".match."+c.Match[j].Field, err)
			}
		}
		if err := checkTemplate(c.Reply, completionVars); err != nil {
			add(p+".reply", err)
		}
	}
	return errs
}

func (r *Rule) validate(path string) []fieldError {
	var errs []fieldError
	for j := range r.Match {
		if err := r.Match[j].compile(messageFields, true); err != nil {
			errs = append(errs, fieldError{path + ".match." + r.Match[j].Field, err})
		}
	}
	for j, a := range r.Actions {
		if err := a.validate(); err != nil {
			errs = append(errs, fieldError{fmt.Sprintf("%s.actions[%d].%s", path, j, a.Kind), err})
		}
	}
	return errs
}

func (c *Condition) compile(fields []string, allowMetadata bool) error {
	known := false
	for _, f := range fields {
		if f == c.Field {
			known = true
		}
	}
	if allowMetadata && strings.HasPrefix(c.Field, "metadata.") && len(c.Field) > len("metadata.") {
		known = true
	}
	if !known {
		extra := ""
		if allowMetadata {
			extra = ", metadata.<key>"
		}
		return fmt.Errorf("unknown field %q (want one of %s%s)", c.Field, strings.Join(fields, ", "), extra)
	}
	switch c.Op {
	case OpEquals, OpPrefix, OpContains:
	case OpRegexp:
		re, err := regexp.Compile(c.Value)
		if err != nil {
			return fmt.Errorf("bad regexp %q: %w", c.Value, err)
		}
		c.re = re
	default:
		return fmt.Errorf("unknown operator %q (want equals, prefix, contains or regexp)", c.Op)
	}
	if c.Field == "trust_tier" && c.Op == OpEquals {
		if _, ok := trustTierByName(c.Value); !ok {
			return fmt.Errorf("unknown trust tier %q (want public, trusted, local or unspecified)", c.Value)
		}
	}
	if (c.Field == "continuation" || c.Field == "unattended") && c.Op == OpEquals &&
		c.Value != "true" && c.Value != "false" {
		return fmt.Errorf("want true or false, got %q", c.Value)
	}
	return nil
}

func (a Action) validate() error {
	var texts []string
	switch a.Kind {
	case ActReply, ActProgress, ActAsk, ActAuth, ActDirect, ActEcho:
		texts = append(texts, a.Text)
		for i, p := range a.Parts {
			if err := p.validate(); err != nil {
				return fmt.Errorf("parts[%d]: %w", i, err)
			}
			texts = append(texts, p.Text, p.URL)
		}
		if _, err := structpb.NewStruct(a.Metadata); a.Metadata != nil && err != nil {
			return fmt.Errorf("metadata: %w", err)
		}
	case ActFail, ActReject:
		texts = append(texts, a.Text)
	case ActWait:
		if a.Wait < 0 {
			return fmt.Errorf("negative duration %s", a.Wait)
		}
	case ActHang, ActDrop:
	case ActArtifact:
		if a.Artifact == nil {
			return errors.New("missing artifact")
		}
		ar := a.Artifact
		if len(ar.Parts) == 0 {
			return errors.New("parts: at least one part is required")
		}
		for i, p := range ar.Parts {
			if err := p.validate(); err != nil {
				return fmt.Errorf("parts[%d]: %w", i, err)
			}
			texts = append(texts, p.Text, p.URL)
		}
		if ar.Chunks < 0 {
			return fmt.Errorf("chunks: must not be negative, got %d", ar.Chunks)
		}
		if ar.Chunks > 1 && (len(ar.Parts) != 1 || ar.Parts[0].Kind != PartText) {
			return errors.New("chunks: only an artifact with exactly one text part can be split into chunks")
		}
		texts = append(texts, ar.ID, ar.Name, ar.Description)
	case ActCallTool:
		if a.Tool == nil || a.Tool.Name == "" {
			return errors.New("name: required")
		}
		if _, err := json.Marshal(a.Tool.Args); err != nil {
			return fmt.Errorf("args: %w", err)
		}
		texts = append(texts, a.Tool.Reply)
		texts = append(texts, stringLeaves(a.Tool.Args)...)
	case "":
		return errors.New("action kind is missing")
	default:
		return fmt.Errorf("unknown action %q (want one of %s)", a.Kind, joinKinds(actionKinds))
	}
	for _, t := range texts {
		if err := checkTemplate(t, nil); err != nil {
			return err
		}
	}
	return nil
}

func (p PartSpec) validate() error {
	switch p.Kind {
	case PartText, PartRaw, PartURL:
	case PartData:
		if _, err := json.Marshal(p.Data); err != nil {
			return fmt.Errorf("data: %w", err)
		}
		if _, err := dataValue(p.Data); err != nil {
			return fmt.Errorf("data: %w", err)
		}
	default:
		return fmt.Errorf("unknown part kind %q (want text, raw, url or data)", p.Kind)
	}
	return nil
}

func joinKinds(kinds []ActionKind) string {
	s := make([]string, len(kinds))
	for i, k := range kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// stringLeaves returns every string inside a JSON-able value.
func stringLeaves(v any) []string {
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case map[string]any:
			for k, e := range x {
				out = append(out, k)
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// dataValue converts any JSON-able value to a structpb.Value, through JSON
// so that Go structs and typed slices work too.
func dataValue(v any) (*structpb.Value, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var generic any
	if err := json.Unmarshal(b, &generic); err != nil {
		return nil, err
	}
	return structpb.NewValue(generic)
}

// trustTierByName maps "public", "TRUST_TIER_PUBLIC", … to the enum.
func trustTierByName(name string) (pb.TrustTier, bool) {
	n := strings.ToUpper(strings.TrimSpace(name))
	if !strings.HasPrefix(n, "TRUST_TIER_") {
		n = "TRUST_TIER_" + n
	}
	v, ok := pb.TrustTier_value[n]
	return pb.TrustTier(v), ok
}

// trustTierName is the short lower-case name conditions compare with.
func trustTierName(t pb.TrustTier) string {
	return strings.ToLower(strings.TrimPrefix(t.String(), "TRUST_TIER_"))
}

// toolDefinitions converts the registry to the contract's type.
func (s *Scenario) toolDefinitions() []*pb.ToolDefinition {
	out := make([]*pb.ToolDefinition, 0, len(s.Tools))
	for _, t := range s.Tools {
		params := string(t.Parameters)
		if params == "" {
			params = `{"type":"object","properties":{}}`
		}
		out = append(out, &pb.ToolDefinition{
			Name: t.Name, Description: t.Description, Toolset: t.Toolset,
			Tags: append([]string(nil), t.Tags...), ParametersJsonSchema: params,
		})
	}
	return out
}

// toProto converts a part, templating its text and URL.
func (p PartSpec) toProto(expand func(string) string) (*pb.Part, error) {
	out := &pb.Part{MediaType: p.MediaType, Filename: p.Filename}
	switch p.Kind {
	case PartText:
		out.Content = &pb.Part_Text{Text: expand(p.Text)}
	case PartRaw:
		out.Content = &pb.Part_Raw{Raw: append([]byte(nil), p.Raw...)}
	case PartURL:
		out.Content = &pb.Part_Url{Url: expand(p.URL)}
	case PartData:
		v, err := dataValue(p.Data)
		if err != nil {
			return nil, fmt.Errorf("data part: %w", err)
		}
		out.Content = &pb.Part_Data{Data: v}
	default:
		return nil, fmt.Errorf("unknown part kind %q", p.Kind)
	}
	return out, nil
}

// decodeBase64 accepts standard and URL-safe base64, padded or not.
func decodeBase64(s string) ([]byte, error) {
	s = strings.Join(strings.Fields(s), "")
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("not valid base64")
}
