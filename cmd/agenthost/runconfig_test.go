package main

import (
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/config"
)

// make run uses run.yaml: it must stay a configuration the plugin accepts,
// with the inspector on, so `make run` prints the inspector's URL.
func TestMakeRunConfigTurnsTheInspectorOn(t *testing.T) {
	cfg, err := loadHostConfig("run.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sections, err := cfg.pluginConfigs()
	if err != nil {
		t.Fatal(err)
	}
	a2a, err := config.Load(sections["a2a"], nil)
	if err != nil {
		t.Fatalf("the plugin refuses run.yaml's a2a section: %v", err)
	}
	if !a2a.Inspector || a2a.Port != 41241 || len(a2a.Agents) != 1 || a2a.Agents[0].Name != "self" {
		t.Fatalf("run.yaml: inspector %v, port %d, peers %v", a2a.Inspector, a2a.Port, a2a.Agents)
	}
}
