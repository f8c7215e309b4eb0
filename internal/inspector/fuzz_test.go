package inspector

import (
	"net"
	"strings"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// FuzzRequestInputs feeds the parts of a request the inspector parses
// itself — a part location from the path, a Host header, an a2a_call
// result — and checks they never panic and never resolve outside the task.
func FuzzRequestInputs(f *testing.F) {
	for _, s := range []string{"a0-0", "h1-2", "s-0", "a-1", "h99999999999999999999-0", "a0-", "x", "127.0.0.1:80", "[::1]:1", "evil.localhost",
		"done\n{\"state\":\"COMPLETED\"}", "{", "\n{}"} {
		f.Add(s)
	}
	task := &a2a.Task{ID: "t", Status: a2a.TaskStatus{Message: &a2a.Message{Parts: []a2a.Part{a2a.TextPart("q")}}},
		History:   []a2a.Message{{Parts: []a2a.Part{a2a.TextPart("a"), a2a.FilePart([]byte("b"), "", "")}}},
		Artifacts: []a2a.Artifact{{Parts: []a2a.Part{a2a.FilePart([]byte("c"), "image/png", "c.png")}}}}
	in := &Inspector{hosts: map[string]bool{"localhost": true}}
	f.Fuzz(func(t *testing.T, s string) {
		if p := findPart(task, s); p != nil {
			found := false
			for _, parts := range [][]a2a.Part{task.Status.Message.Parts, task.History[0].Parts, task.Artifacts[0].Parts} {
				for i := range parts {
					found = found || p == &parts[i]
				}
			}
			if !found {
				t.Fatalf("findPart(%q) resolved outside the task", s)
			}
		}
		if in.hostAllowed(s) {
			host := s
			if h, _, err := net.SplitHostPort(s); err == nil {
				host = h
			}
			host = strings.ToLower(strings.Trim(host, "[]"))
			if net.ParseIP(host) == nil && host != "localhost" && !strings.HasSuffix(host, ".localhost") {
				t.Fatalf("hostAllowed(%q) accepted a DNS name that is not localhost", s)
			}
		}
		outcome, text := outcomeOf(s)
		if outcome == nil && text != strings.TrimSpace(s) {
			t.Fatalf("outcomeOf(%q) lost text without an outcome", s)
		}
	})
}
