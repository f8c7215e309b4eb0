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
	if !a2a.Inspector || a2a.Port != 41241 || len(a2a.Agents) != 2 || a2a.Agents[0].Name != "self" || a2a.Agents[1].Name != "peer" ||
		a2a.Agents[0].URL != "http://127.0.0.1:41241" || a2a.AgentName != "Echo Agent" {
		t.Fatalf("run.yaml: inspector %v, port %d, name %q, peers %v", a2a.Inspector, a2a.Port, a2a.AgentName, a2a.Agents)
	}
	// make run's knobs fill it in.
	env := map[string]string{"RUN_PORT": "45001", "RUN_NAME": "Bob", "RUN_PEER": "http://127.0.0.1:45002"}
	cfg, err = loadHostConfigEnv("run.yaml", func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	sections, _ = cfg.pluginConfigs()
	if a2a, err = config.Load(sections["a2a"], nil); err != nil {
		t.Fatal(err)
	}
	if a2a.Port != 45001 || a2a.AgentName != "Bob" || a2a.Agents[0].URL != "http://127.0.0.1:45001" || a2a.Agents[1].URL != "http://127.0.0.1:45002" {
		t.Fatalf("run.yaml with the knobs: port %d, name %q, peers %v", a2a.Port, a2a.AgentName, a2a.Agents)
	}
}
