package bridge

import (
	"slices"
	"strings"
	"testing"

	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// TestSkillsComeFromTheHostsToolsFilteredByToolset: host tools become
// skills only for the advertised toolsets (none without any, every tool but
// the plugin's own for *); each with a description and tags.
func TestSkillsComeFromTheHostsToolsFilteredByToolset(t *testing.T) {
	tools := []*pb.ToolDefinition{
		{Name: "web_search", Description: "Search the web", Toolset: "web", Tags: []string{"search"}},
		{Name: "a2a_call", Description: "Call another agent", Toolset: OwnToolset},
		{Name: "read_file", Toolset: "files"},
		{Name: "web_search", Description: "a second one of the name", Toolset: "web"},
		{Name: ""}, nil,
	}
	for _, c := range []struct {
		toolsets []string
		want     string
	}{
		{nil, ""},
		{[]string{"*"}, "web_search,read_file"},
		{[]string{"web", "a2a"}, "web_search,a2a_call"},
		{[]string{"nothing"}, ""},
	} {
		skills := SkillsOf(tools, c.toolsets)
		var ids []string
		for _, s := range skills {
			ids = append(ids, s.ID)
			if s.Name == "" || s.Description == "" || len(s.Tags) == 0 {
				t.Errorf("skill %+v lacks a required field", s)
			}
		}
		if strings.Join(ids, ",") != c.want {
			t.Errorf("toolsets %v: skills %v, want %s", c.toolsets, ids, c.want)
		}
	}
	skills := SkillsOf(tools, []string{AllToolsets})
	if ws := skills[0]; ws.Description != "Search the web" || !slices.Equal(ws.Tags, []string{"web", "search"}) {
		t.Errorf("web_search skill = %+v", ws)
	}
	if rf := skills[1]; rf.Description != "Uses the read_file tool." || !slices.Equal(rf.Tags, []string{"files"}) {
		t.Errorf("read_file skill = %+v", rf)
	}
}
