package testharness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// LoadScenario reads and parses a scenario file (YAML, or JSON when the
// name ends in .json or the content starts with '{').
func LoadScenario(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read scenario: %w", err)
	}
	return ParseScenario(data, path)
}

// ParseScenario parses and validates a scenario. name is used in errors
// and decides the format: a name ending in .json is JSON, .yaml/.yml is
// YAML, anything else is JSON when the content starts with '{' and YAML
// otherwise. Errors name the line and the field, e.g.
// "demo.yaml:12: rules[0].actions[1]: unknown action "replay" (…)".
func ParseScenario(data []byte, name string) (*Scenario, error) {
	if name == "" {
		name = "scenario"
	}
	var root yaml.Node
	isJSON := false
	switch strings.ToLower(filepath.Ext(name)) {
	case ".json":
		isJSON = true
	case ".yaml", ".yml":
	default:
		isJSON = bytes.HasPrefix(bytes.TrimSpace(data), []byte("{"))
	}
	if isJSON {
		n, err := jsonToNode(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		root = *n
	} else if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &parser{src: name, lines: map[string]int{}}
	s := p.scenario(&root)
	if err := p.err(); err != nil {
		return nil, err
	}
	if s.Name == "" {
		s.Name = strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	}
	if ferrs := s.validate(); len(ferrs) > 0 {
		errs := make([]error, len(ferrs))
		for i, fe := range ferrs {
			errs[i] = fmt.Errorf("%s:%d: %w", name, p.lineOf(fe.Path), fe)
		}
		return nil, errors.Join(errs...)
	}
	return s, nil
}

// parser walks a yaml.Node tree strictly: unknown fields, wrong types and
// ambiguous shapes are errors naming the line and the field path.
type parser struct {
	src   string
	errs  []error
	lines map[string]int
}

func (p *parser) errf(n *yaml.Node, path, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	msg := fmt.Sprintf(format, args...)
	if path != "" {
		msg = path + ": " + msg
	}
	p.errs = append(p.errs, fmt.Errorf("%s:%d: %s", p.src, line, msg))
}

func (p *parser) err() error { return errors.Join(p.errs...) }

func (p *parser) mark(n *yaml.Node, path string) {
	if n != nil {
		if _, ok := p.lines[path]; !ok {
			p.lines[path] = n.Line
		}
	}
}

// lineOf finds the line of path or of its nearest recorded ancestor.
func (p *parser) lineOf(path string) int {
	for path != "" {
		if l, ok := p.lines[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return 0
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && (n.Kind == yaml.AliasNode || n.Kind == yaml.DocumentNode) {
		if n.Kind == yaml.AliasNode {
			n = n.Alias
		} else if len(n.Content) > 0 {
			n = n.Content[0]
		} else {
			return nil
		}
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// fields returns the entries of a mapping, reporting unknown and duplicate
// keys. It returns nil (after reporting) when n is not a mapping.
func (p *parser) fields(n *yaml.Node, path string, allowed ...string) map[string]*yaml.Node {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		if len(allowed) == 0 {
			p.errf(n, path, "want a mapping, got %s", describe(n))
		} else {
			p.errf(n, path, "want a mapping with fields %s, got %s", strings.Join(allowed, ", "), describe(n))
		}
		return nil
	}
	p.mark(n, path)
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], deref(n.Content[i+1])
		known := len(allowed) == 0
		for _, a := range allowed {
			if a == k.Value {
				known = true
			}
		}
		switch {
		case !known:
			p.errf(k, path, "unknown field %q (want one of %s)", k.Value, strings.Join(allowed, ", "))
		case out[k.Value] != nil:
			p.errf(k, path, "field %q given twice", k.Value)
		default:
			out[k.Value] = v
			p.mark(k, joinPath(path, k.Value))
		}
	}
	return out
}

func joinPath(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

func describe(n *yaml.Node) string {
	switch {
	case n == nil:
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case isNull(n):
		return "null"
	default:
		return fmt.Sprintf("%q", n.Value)
	}
}

func (p *parser) str(n *yaml.Node, path string) string {
	if n == nil || n.Kind != yaml.ScalarNode || isNull(n) {
		p.errf(n, path, "want a string, got %s", describe(n))
		return ""
	}
	return n.Value
}

func (p *parser) integer(n *yaml.Node, path string) int {
	if n == nil || n.Kind != yaml.ScalarNode {
		p.errf(n, path, "want an integer, got %s", describe(n))
		return 0
	}
	v, err := strconv.Atoi(n.Value)
	if err != nil {
		p.errf(n, path, "want an integer, got %q", n.Value)
	}
	return v
}

func (p *parser) boolean(n *yaml.Node, path string) bool {
	if n == nil || n.Kind != yaml.ScalarNode {
		p.errf(n, path, "want true or false, got %s", describe(n))
		return false
	}
	var v bool
	if err := n.Decode(&v); err != nil {
		p.errf(n, path, "want true or false, got %q", n.Value)
	}
	return v
}

// duration reads milliseconds (a number) or a Go duration ("1.5s").
func (p *parser) duration(n *yaml.Node, path string) time.Duration {
	if n == nil || n.Kind != yaml.ScalarNode || isNull(n) {
		p.errf(n, path, "want milliseconds or a duration like \"1.5s\", got %s", describe(n))
		return 0
	}
	if ms, err := strconv.ParseFloat(n.Value, 64); err == nil {
		return time.Duration(ms * float64(time.Millisecond))
	}
	d, err := time.ParseDuration(n.Value)
	if err != nil {
		p.errf(n, path, "want milliseconds or a duration like \"1.5s\", got %q", n.Value)
	}
	return d
}

func (p *parser) strings(n *yaml.Node, path string) []string {
	if n == nil || n.Kind != yaml.SequenceNode {
		p.errf(n, path, "want a list of strings, got %s", describe(n))
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for i, e := range n.Content {
		out = append(out, p.str(deref(e), fmt.Sprintf("%s[%d]", path, i)))
	}
	return out
}

func (p *parser) list(n *yaml.Node, path string) []*yaml.Node {
	if n == nil || n.Kind != yaml.SequenceNode {
		p.errf(n, path, "want a list, got %s", describe(n))
		return nil
	}
	p.mark(n, path)
	out := make([]*yaml.Node, len(n.Content))
	for i, e := range n.Content {
		out[i] = deref(e)
		p.mark(out[i], fmt.Sprintf("%s[%d]", path, i))
	}
	return out
}

// anyValue decodes a node into a JSON-compatible value.
func (p *parser) anyValue(n *yaml.Node, path string) any {
	v, err := JSONValue(n)
	if err != nil {
		p.errf(n, path, "%v", err)
	}
	return v
}

func (p *parser) scenario(root *yaml.Node) *Scenario {
	s := &Scenario{}
	n := deref(root)
	if n == nil {
		p.errf(root, "", "empty scenario")
		return s
	}
	f := p.fields(n, "", "name", "tools", "rules", "default", "complete")
	if f == nil {
		return s
	}
	if v := f["name"]; v != nil {
		s.Name = p.str(v, "name")
	}
	if v := f["tools"]; v != nil {
		for i, t := range p.list(v, "tools") {
			s.Tools = append(s.Tools, p.tool(t, fmt.Sprintf("tools[%d]", i)))
		}
	}
	if v := f["rules"]; v != nil {
		for i, r := range p.list(v, "rules") {
			s.Rules = append(s.Rules, p.rule(r, fmt.Sprintf("rules[%d]", i), true))
		}
	}
	if v := f["default"]; v != nil {
		r := p.rule(v, "default", false)
		s.Default = &r
	}
	if v := f["complete"]; v != nil {
		s.Completions = []CompletionRule{}
		for i, c := range p.list(v, "complete") {
			s.Completions = append(s.Completions, p.completion(c, fmt.Sprintf("complete[%d]", i)))
		}
	}
	return s
}

func (p *parser) tool(n *yaml.Node, path string) ToolSpec {
	var t ToolSpec
	f := p.fields(n, path, "name", "description", "toolset", "tags", "parameters")
	if f == nil {
		return t
	}
	if v := f["name"]; v != nil {
		t.Name = p.str(v, path+".name")
	} else {
		p.errf(n, path, "field \"name\" is required")
	}
	if v := f["description"]; v != nil {
		t.Description = p.str(v, path+".description")
	}
	if v := f["toolset"]; v != nil {
		t.Toolset = p.str(v, path+".toolset")
	}
	if v := f["tags"]; v != nil {
		t.Tags = p.strings(v, path+".tags")
	}
	if v := f["parameters"]; v != nil {
		if v.Kind != yaml.MappingNode {
			p.errf(v, path+".parameters", "want a JSON Schema object, got %s", describe(v))
		} else if b, err := json.Marshal(p.anyValue(v, path+".parameters")); err == nil {
			t.Parameters = b
		}
	}
	return t
}

// rule reads a rule; the default rule (withMatch false) may also be given
// as just a list of actions.
func (p *parser) rule(n *yaml.Node, path string, withMatch bool) Rule {
	var r Rule
	if !withMatch && n != nil && n.Kind == yaml.SequenceNode {
		r.Actions = p.actions(n, path+".actions")
		return r
	}
	allowed := []string{"name", "actions"}
	if withMatch {
		allowed = append(allowed, "match")
	}
	f := p.fields(n, path, allowed...)
	if f == nil {
		return r
	}
	if v := f["name"]; v != nil {
		r.Name = p.str(v, path+".name")
	}
	if v := f["match"]; v != nil {
		r.Match = p.conditions(v, path+".match")
	}
	if v := f["actions"]; v != nil {
		r.Actions = p.actions(v, path+".actions")
	} else {
		p.errf(n, path, "field \"actions\" is required")
	}
	return r
}

// conditions reads a match mapping: field → matcher. A matcher is a scalar
// (equals) or a mapping of operators; several operators on one field must
// all hold.
func (p *parser) conditions(n *yaml.Node, path string) []Condition {
	f := p.fields(n, path)
	if f == nil {
		return nil
	}
	// In the order written (fields returns a map).
	var keys []string
	for i := 0; i < len(n.Content); i += 2 {
		if k := n.Content[i].Value; f[k] != nil && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	var out []Condition
	for _, field := range keys {
		v := f[field]
		fp := path + "." + field
		switch {
		case v.Kind == yaml.ScalarNode && !isNull(v):
			out = append(out, Condition{Field: field, Op: OpEquals, Value: v.Value})
		case v.Kind == yaml.MappingNode:
			ops := p.fields(v, fp, string(OpEquals), string(OpPrefix), string(OpContains), string(OpRegexp))
			if len(ops) == 0 {
				p.errf(v, fp, "want one of equals, prefix, contains, regexp")
			}
			for _, op := range []MatchOp{OpEquals, OpPrefix, OpContains, OpRegexp} {
				if o := ops[string(op)]; o != nil {
					out = append(out, Condition{Field: field, Op: op, Value: p.str(o, fp+"."+string(op))})
				}
			}
		default:
			p.errf(v, fp, "want a value or a mapping of equals/prefix/contains/regexp, got %s", describe(v))
		}
	}
	return out
}

func (p *parser) actions(n *yaml.Node, path string) []Action {
	var out []Action
	for i, a := range p.list(n, path) {
		out = append(out, p.action(a, fmt.Sprintf("%s[%d]", path, i)))
	}
	return out
}

func (p *parser) action(n *yaml.Node, path string) Action {
	kinds := make([]string, len(actionKinds))
	for i, k := range actionKinds {
		kinds[i] = string(k)
	}
	if n != nil && n.Kind == yaml.ScalarNode && slices.Contains([]string{string(ActEcho), string(ActHang), string(ActDrop)}, n.Value) {
		// Actions without a value may be written bare: "- echo".
		p.mark(n, path+"."+n.Value)
		return Action{Kind: ActionKind(n.Value)}
	}
	if n == nil || n.Kind != yaml.MappingNode || len(n.Content) != 2 {
		p.errf(n, path, "want a mapping with exactly one action (one of %s), got %s", strings.Join(kinds, ", "), describe(n))
		return Action{}
	}
	kind, v := n.Content[0].Value, deref(n.Content[1])
	known := false
	for _, k := range kinds {
		known = known || k == kind
	}
	if !known {
		p.errf(n.Content[0], path, "unknown action %q (want one of %s)", kind, strings.Join(kinds, ", "))
		return Action{}
	}
	p.mark(n, path)
	a := Action{Kind: ActionKind(kind)}
	ap := path + "." + kind
	p.mark(n.Content[0], ap)
	switch a.Kind {
	case ActReply, ActProgress, ActAsk, ActAuth, ActDirect:
		if v.Kind == yaml.ScalarNode {
			a.Text = p.str(v, ap)
			break
		}
		mf := p.fields(v, ap, "text", "parts", "metadata")
		if mf == nil {
			break
		}
		if t := mf["text"]; t != nil {
			a.Text = p.str(t, ap+".text")
		}
		if t := mf["parts"]; t != nil {
			a.Parts = p.parts(t, ap+".parts")
		}
		if t := mf["metadata"]; t != nil {
			a.Metadata = p.object(t, ap+".metadata")
		}
	case ActFail, ActReject:
		key := "error"
		if a.Kind == ActReject {
			key = "reason"
		}
		if v.Kind == yaml.ScalarNode {
			a.Text = p.str(v, ap)
		} else if mf := p.fields(v, ap, key); mf != nil && mf[key] != nil {
			a.Text = p.str(mf[key], ap+"."+key)
		}
	case ActWait:
		if v.Kind == yaml.MappingNode {
			if mf := p.fields(v, ap, "ms"); mf != nil && mf["ms"] != nil {
				a.Wait = p.duration(mf["ms"], ap+".ms")
			}
		} else {
			a.Wait = p.duration(v, ap)
		}
	case ActEcho:
		switch {
		case isNull(v):
		case v.Kind == yaml.ScalarNode && (v.Tag == "!!bool"):
			if !p.boolean(v, ap) {
				p.errf(v, ap, "echo: false makes no sense; remove the action")
			}
		case v.Kind == yaml.ScalarNode:
			a.Text = v.Value
		default:
			if mf := p.fields(v, ap, "prefix", "parts", "metadata"); mf != nil {
				if t := mf["prefix"]; t != nil {
					a.Text = p.str(t, ap+".prefix")
				}
				if t := mf["parts"]; t != nil {
					a.Parts = p.parts(t, ap+".parts")
				}
				if t := mf["metadata"]; t != nil {
					a.Metadata = p.object(t, ap+".metadata")
				}
			}
		}
	case ActHang, ActDrop:
		if !isNull(v) && !(v.Kind == yaml.ScalarNode && v.Tag == "!!bool" && p.boolean(v, ap)) {
			p.errf(v, ap, "takes no value (write %q or \"%s: true\")", kind+":", kind)
		}
	case ActArtifact:
		a.Artifact = p.artifact(v, ap)
	case ActCallTool:
		a.Tool = p.toolCall(v, ap)
	}
	return a
}

func (p *parser) object(n *yaml.Node, path string) map[string]any {
	if n.Kind != yaml.MappingNode {
		p.errf(n, path, "want a mapping, got %s", describe(n))
		return nil
	}
	m, _ := p.anyValue(n, path).(map[string]any)
	return m
}

func (p *parser) parts(n *yaml.Node, path string) []PartSpec {
	var out []PartSpec
	for i, e := range p.list(n, path) {
		out = append(out, p.part(e, fmt.Sprintf("%s[%d]", path, i)))
	}
	return out
}

func (p *parser) part(n *yaml.Node, path string) PartSpec {
	var ps PartSpec
	f := p.fields(n, path, "text", "bytes", "url", "data", "media_type", "filename")
	if f == nil {
		return ps
	}
	var content []string
	for _, k := range []string{"text", "bytes", "url", "data"} {
		if f[k] != nil {
			content = append(content, k)
		}
	}
	if len(content) != 1 {
		p.errf(n, path, "want exactly one of text, bytes, url, data; got %d (%s)", len(content), strings.Join(content, ", "))
		return ps
	}
	switch content[0] {
	case "text":
		ps.Kind, ps.Text = PartText, p.str(f["text"], path+".text")
	case "bytes":
		ps.Kind = PartRaw
		b, err := decodeBase64(p.str(f["bytes"], path+".bytes"))
		if err != nil {
			p.errf(f["bytes"], path+".bytes", "%v", err)
		}
		ps.Raw = b
	case "url":
		ps.Kind, ps.URL = PartURL, p.str(f["url"], path+".url")
	case "data":
		ps.Kind, ps.Data = PartData, p.anyValue(f["data"], path+".data")
	}
	if v := f["media_type"]; v != nil {
		ps.MediaType = p.str(v, path+".media_type")
	}
	if v := f["filename"]; v != nil {
		ps.Filename = p.str(v, path+".filename")
	}
	return ps
}

func (p *parser) artifact(n *yaml.Node, path string) *ArtifactSpec {
	a := &ArtifactSpec{}
	f := p.fields(n, path, "id", "name", "description", "text", "parts", "chunks", "chunk_wait")
	if f == nil {
		return a
	}
	if v := f["id"]; v != nil {
		a.ID = p.str(v, path+".id")
	}
	if v := f["name"]; v != nil {
		a.Name = p.str(v, path+".name")
	}
	if v := f["description"]; v != nil {
		a.Description = p.str(v, path+".description")
	}
	if v := f["text"]; v != nil {
		a.Parts = append(a.Parts, TextPart(p.str(v, path+".text")))
	}
	if v := f["parts"]; v != nil {
		a.Parts = append(a.Parts, p.parts(v, path+".parts")...)
	}
	if v := f["chunks"]; v != nil {
		a.Chunks = p.integer(v, path+".chunks")
	}
	if v := f["chunk_wait"]; v != nil {
		a.ChunkWait = p.duration(v, path+".chunk_wait")
	}
	return a
}

func (p *parser) toolCall(n *yaml.Node, path string) *ToolCallSpec {
	t := &ToolCallSpec{}
	f := p.fields(n, path, "name", "args", "reply", "no_reply", "progress", "ignore_error")
	if f == nil {
		return t
	}
	if v := f["name"]; v != nil {
		t.Name = p.str(v, path+".name")
	}
	if v := f["args"]; v != nil {
		t.Args = p.anyValue(v, path+".args")
	}
	if v := f["reply"]; v != nil {
		t.Reply = p.str(v, path+".reply")
	}
	if v := f["no_reply"]; v != nil {
		t.NoReply = p.boolean(v, path+".no_reply")
	}
	if v := f["progress"]; v != nil {
		t.ForwardProgress = p.boolean(v, path+".progress")
	}
	if v := f["ignore_error"]; v != nil {
		t.IgnoreError = p.boolean(v, path+".ignore_error")
	}
	return t
}

func (p *parser) completion(n *yaml.Node, path string) CompletionRule {
	var c CompletionRule
	f := p.fields(n, path, "match", "reply")
	if f == nil {
		return c
	}
	if v := f["match"]; v != nil {
		c.Match = p.conditions(v, path+".match")
	}
	if v := f["reply"]; v != nil {
		c.Reply = p.str(v, path+".reply")
	} else {
		p.errf(n, path, "field \"reply\" is required")
	}
	return c
}
