package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/config"
)

// TestCommittedReferenceIsGenerated fails when docs/configuration.md is not
// what make docs writes from the code: a setting added, renamed, given
// another default or help text, or the page edited by hand.
func TestCommittedReferenceIsGenerated(t *testing.T) {
	want, err := render(config.Settings())
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../../docs/configuration.md")
	if err != nil {
		t.Fatalf("%v: run make docs", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) || i < len(wl); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("docs/configuration.md differs from the code at line %d: run make docs and commit it\n committed: %s\n generated: %s", i+1, g, w)
			}
		}
	}
}

// TestTableFollowsTheSettings: a setting of the code becomes a row with its
// key, variable and default, a missing one a dash, and a | in a help text
// does not split the row.
func TestTableFollowsTheSettings(t *testing.T) {
	doc, err := render([]config.Setting{
		{Key: "port", Env: "A2A_PORT", Default: "41241", Help: "TCP port."},
		{Key: "extended_skills", Help: "Host config only."},
		{Key: "a2a_agents", Env: "A2A_AGENTS", Help: "{name, token|header}", Secret: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{
		"| `port` | `A2A_PORT` | `41241` | TCP port. |",
		"| `extended_skills` | — | — | Host config only. |",
		"| `a2a_agents` | `A2A_AGENTS` | — | {name, token\\|header} Secret: keep it in the environment or a file only its owner reads. |",
	} {
		if !strings.Contains(string(doc), "\n"+row+"\n") {
			t.Errorf("the table lacks the row\n%s\nin:\n%s", row, doc)
		}
	}
	if strings.Contains(string(doc), "| `bearer_token` |") {
		t.Error("the table lists a setting it was not given")
	}
}
