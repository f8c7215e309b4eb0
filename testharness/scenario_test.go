package testharness

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestScenarioParsesYAMLAndJSONAlike(t *testing.T) {
	fromYAML, err := LoadScenario("testdata/demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, err := LoadScenario("testdata/demo.json")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromYAML, fromJSON) {
		t.Fatalf("YAML and JSON differ:\nyaml: %+v\njson: %+v", fromYAML, fromJSON)
	}
	s := fromYAML
	if s.Name != "demo" || len(s.Tools) != 2 || len(s.Rules) != 10 || s.Default == nil || len(s.Completions) != 2 {
		t.Fatalf("unexpected shape: name=%q tools=%d rules=%d default=%v complete=%d",
			s.Name, len(s.Tools), len(s.Rules), s.Default, len(s.Completions))
	}
	var schema map[string]any
	if err := json.Unmarshal(s.Tools[0].Parameters, &schema); err != nil || schema["type"] != "object" {
		t.Fatalf("tool parameters = %s (%v)", s.Tools[0].Parameters, err)
	}
	if got := s.Tools[0].Tags; !reflect.DeepEqual(got, []string{"search", "read-only"}) {
		t.Fatalf("tags = %v", got)
	}
	slow := s.Rules[5]
	if slow.Actions[1].Kind != ActWait || slow.Actions[1].Wait != 30*time.Second {
		t.Fatalf("wait action = %+v", slow.Actions[1])
	}
	report := s.Rules[1].Actions[0].Artifact
	if report.Chunks != 3 || report.Parts[0].Kind != PartText {
		t.Fatalf("artifact = %+v", report)
	}
	extras := s.Rules[1].Actions[1].Artifact.Parts
	if extras[1].Kind != PartRaw || string(extras[1].Raw) != "hello" || extras[1].Filename != "hello.txt" {
		t.Fatalf("file part = %+v", extras[1])
	}
	if extras[0].Kind != PartData || !reflect.DeepEqual(extras[0].Data, map[string]any{"score": 0.9, "tags": []any{"a", "b"}}) {
		t.Fatalf("data part = %#v", extras[0].Data)
	}
	vip := s.Rules[4].Match
	if vip[0].Field != "metadata.customer.tier" || vip[0].Op != OpEquals || vip[0].Value != "gold" {
		t.Fatalf("metadata condition = %+v", vip[0])
	}
}

func TestScenarioNameDefaultsToFileName(t *testing.T) {
	s, err := ParseScenario([]byte("default: [ {echo: } ]"), "dir/my-agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "my-agent" {
		t.Fatalf("name = %q", s.Name)
	}
}

func TestActionsWithoutValueMayBeBare(t *testing.T) {
	s, err := ParseScenario([]byte("default: [echo, hang, drop]"), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Default.Actions; len(got) != 3 || got[0].Kind != ActEcho || got[1].Kind != ActHang || got[2].Kind != ActDrop {
		t.Fatalf("actions = %+v", got)
	}
	if _, err := ParseScenario([]byte("default: [reply]"), "x.yaml"); err == nil || !strings.Contains(err.Error(), "x.yaml:1: default.actions[0]: want a mapping with exactly one action") {
		t.Fatalf("bare reply: %v", err)
	}
}

func TestConditionsKeepTheirWrittenOrder(t *testing.T) {
	s, err := ParseScenario([]byte(`{"rules":[{"match":{"text":"a","sender":"b","chat_id":"c","platform":"d"},"actions":[{"reply":"x"}]}]}`), "x.json")
	if err != nil {
		t.Fatal(err)
	}
	var fields []string
	for _, c := range s.Rules[0].Match {
		fields = append(fields, c.Field)
	}
	if strings.Join(fields, ",") != "text,sender,chat_id,platform" {
		t.Fatalf("order = %v", fields)
	}
}

func TestScenarioFormatIsSniffedWithoutExtension(t *testing.T) {
	json := "{\n\t\"default\": {\"actions\": [{\"reply\": \"x\"}]}\n}"
	if _, err := ParseScenario([]byte(json), "stdin"); err != nil {
		t.Fatalf("tab-indented JSON: %v", err)
	}
}

func TestInvalidScenarioErrorsNameLineAndField(t *testing.T) {
	tests := []struct {
		name, file, src string
		want            []string
	}{
		{"unknown action", "a.yaml", `
rules:
  - match: {text: hi}
    actions:
      - replay: hello
`, []string{`a.yaml:5: rules[0].actions[0]: unknown action "replay" (want one of reply,`}},
		{"unknown top-level field", "a.yaml", "name: x\nrulez: []\n",
			[]string{`a.yaml:2: unknown field "rulez"`}},
		{"unknown match field", "a.yaml", `
rules:
  - match:
      txt: {equals: hi}
    actions: [{reply: x}]
`, []string{`a.yaml:4: rules[0].match.txt: unknown field "txt"`}},
		{"unknown operator", "a.yaml", `
rules:
  - match:
      text: {startswith: hi}
    actions: [{reply: x}]
`, []string{`a.yaml:4: rules[0].match.text: unknown field "startswith" (want one of equals, prefix, contains, regexp)`}},
		{"bad regexp", "a.yaml", `
rules:
  - match:
      text: {regexp: "(unclosed"}
    actions: [{reply: x}]
`, []string{`a.yaml:4: rules[0].match.text: bad regexp "(unclosed"`}},
		{"bad trust tier", "a.yaml", `
rules:
  - match: {trust_tier: royal}
    actions: [{reply: x}]
`, []string{`a.yaml:3: rules[0].match.trust_tier: unknown trust tier "royal"`}},
		{"missing actions", "a.yaml", `
rules:
  - match: {text: hi}
`, []string{`a.yaml:3: rules[0]: field "actions" is required`}},
		{"two actions in one item", "a.yaml", `
default:
  - reply: a
    progress: b
`, []string{`a.yaml:3: default.actions[0]: want a mapping with exactly one action`}},
		{"bad wait", "a.yaml", `
default:
  - wait: soon
`, []string{`a.yaml:3: default.actions[0].wait: want milliseconds or a duration`}},
		{"bad base64", "a.yaml", `
default:
  - artifact:
      parts:
        - bytes: "!!!"
`, []string{`a.yaml:5: default.actions[0].artifact.parts[0].bytes: not valid base64`}},
		{"part with two contents", "a.yaml", `
default:
  - artifact:
      parts:
        - {text: a, url: "http://x"}
`, []string{`a.yaml:5: default.actions[0].artifact.parts[0]: want exactly one of text, bytes, url, data; got 2`}},
		{"chunks of a non-text artifact", "a.yaml", `
default:
  - artifact:
      chunks: 2
      parts:
        - {url: "http://x"}
`, []string{`a.yaml:3: default.actions[0].artifact: chunks: only an artifact with exactly one text part`}},
		{"unknown template variable", "a.yaml", `
default:
  - reply: "hi {{sendr}}"
`, []string{`a.yaml:3: default.actions[0].reply: unknown template variable {{sendr}}`}},
		{"call_tool without name", "a.yaml", `
default:
  - call_tool: {args: {a: 1}}
`, []string{`a.yaml:3: default.actions[0].call_tool: name: required`}},
		{"duplicate tool", "a.yaml", `
tools:
  - name: t
  - name: t
default: [{reply: x}]
`, []string{`a.yaml:4: tools[1].name: duplicate tool "t"`}},
		{"several errors at once", "a.yaml", `
rules:
  - match: {text: {bogus: 1}}
    actions: [{reply: x}]
  - actions: [{nope: 1}]
`, []string{`a.yaml:3: rules[0].match.text: unknown field "bogus"`, `a.yaml:5: rules[1].actions[0]: unknown action "nope"`}},
		{"YAML syntax", "a.yaml", "rules: [\n", []string{"a.yaml: yaml: line"}},
		{"JSON syntax", "a.json", "{\n  \"rules\": [\n    {,}\n  ]\n}", []string{"a.json: line 3: invalid JSON"}},
		{"JSON unknown action", "a.json", "{\n\t\"default\": [\n\t\t{\"replay\": \"x\"}\n\t]\n}",
			[]string{`a.json:3: default.actions[0]: unknown action "replay"`}},
		{"JSON trailing data", "a.json", "{}\n{}", []string{"a.json: line 2: invalid JSON: data after the top-level value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseScenario([]byte(tt.src), tt.file)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestScenarioBuiltInGoIsValidated(t *testing.T) {
	s := &Scenario{
		Name: "go",
		Rules: []Rule{{
			Match:   []Condition{Match("text", OpRegexp, "(")},
			Actions: []Action{Reply("{{nope}}")},
		}},
	}
	err := s.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range []string{`go: rules[0].match.text: bad regexp`, `rules[0].actions[0].reply: unknown template variable {{nope}}`} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error does not contain %q:\n%v", w, err)
		}
	}
	if _, err := NewAgent(s, AgentOptions{}); err == nil {
		t.Fatal("NewAgent accepted an invalid scenario")
	}
}

func TestEchoScenarioIsValid(t *testing.T) {
	if err := EchoScenario().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestREADMEScenarioExampleParses(t *testing.T) {
	// The README embeds testdata/demo.yaml; keep them the same.
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	demo, err := os.ReadFile("testdata/demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	body := strings.SplitN(string(demo), "\n", 2)[1] // without the first comment line
	if !strings.Contains(string(readme), body) {
		t.Fatal("README.md does not contain testdata/demo.yaml (minus its first line); update the README example")
	}
}
