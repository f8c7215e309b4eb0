package hostsdk

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	goplugin "github.com/hashicorp/go-plugin"

	"github.com/a2a-plugin/a2a-plugin/plugin"
)

// hostRules is the part of the conformance kit
// (proto/agentplugin/v1/host-rules.json) the Go host library holds as
// constants; plugin/hostrules_test.go checks the rest (call streams, error
// codes) where those constants live.
type hostRules struct {
	Handshake struct {
		ProtocolMajor       int    `json:"protocolMajor"`
		CoreProtocolVersion int    `json:"coreProtocolVersion"`
		MagicCookieKey      string `json:"magicCookieKey"`
		MagicCookieValue    string `json:"magicCookieValue"`
		EnvLogLevel         string `json:"envLogLevel"`
	} `json:"handshake"`
	PluginNames struct {
		Lifecycle string `json:"lifecycle"`
		Platform  string `json:"platform"`
		Toolset   string `json:"toolset"`
	} `json:"pluginNames"`
	MaxMessageBytes int      `json:"maxMessageBytes"`
	EnvAllow        []string `json:"envAllow"`
	Defaults        struct {
		StartTimeoutMs int64 `json:"startTimeoutMs"`
		DrainTimeoutMs int64 `json:"drainTimeoutMs"`
		HeartbeatMs    int64 `json:"heartbeatMs"`
		Restart        struct {
			MaxRestarts   int   `json:"maxRestarts"`
			WindowMs      int64 `json:"windowMs"`
			BaseBackoffMs int64 `json:"baseBackoffMs"`
			MaxBackoffMs  int64 `json:"maxBackoffMs"`
		} `json:"restart"`
	} `json:"defaults"`
}

func loadHostRules(t *testing.T) hostRules {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "proto", "agentplugin", "v1", "host-rules.json"))
	if err != nil {
		t.Fatalf("the conformance kit: %v", err)
	}
	var r hostRules
	if err := json.Unmarshal(src, &r); err != nil {
		t.Fatalf("proto/agentplugin/v1/host-rules.json does not parse: %v", err)
	}
	return r
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// TestHostLibraryAgreesWithTheConformanceKit fails when a constant of the Go
// host library says something else than the kit the Python and Node
// libraries are checked against too: change the rule in the kit, then here.
func TestHostLibraryAgreesWithTheConformanceKit(t *testing.T) {
	r := loadHostRules(t)
	d := Options{}.withDefaults()
	for _, c := range []struct {
		rule      string
		kit, ours any
	}{
		{"handshake.protocolMajor", r.Handshake.ProtocolMajor, int(plugin.Handshake.ProtocolVersion)},
		{"handshake.protocolMajor (plugin.ProtocolMajor)", r.Handshake.ProtocolMajor, plugin.ProtocolMajor},
		{"handshake.coreProtocolVersion", r.Handshake.CoreProtocolVersion, goplugin.CoreProtocolVersion},
		{"handshake.magicCookieKey", r.Handshake.MagicCookieKey, plugin.Handshake.MagicCookieKey},
		{"handshake.magicCookieValue", r.Handshake.MagicCookieValue, plugin.Handshake.MagicCookieValue},
		{"handshake.envLogLevel", r.Handshake.EnvLogLevel, plugin.EnvLogLevel},
		{"pluginNames.lifecycle", r.PluginNames.Lifecycle, plugin.NameLifecycle},
		{"pluginNames.platform", r.PluginNames.Platform, plugin.NamePlatform},
		{"pluginNames.toolset", r.PluginNames.Toolset, plugin.NameToolset},
		{"maxMessageBytes", r.MaxMessageBytes, plugin.MaxMessageBytes},
		{"defaults.startTimeoutMs", ms(r.Defaults.StartTimeoutMs), d.StartTimeout},
		{"defaults.drainTimeoutMs", ms(r.Defaults.DrainTimeoutMs), d.DrainTimeout},
		{"defaults.heartbeatMs", ms(r.Defaults.HeartbeatMs), d.HeartbeatInterval},
		{"defaults.restart.maxRestarts", r.Defaults.Restart.MaxRestarts, d.Restart.MaxRestarts},
		{"defaults.restart.windowMs", ms(r.Defaults.Restart.WindowMs), d.Restart.Window},
		{"defaults.restart.baseBackoffMs", ms(r.Defaults.Restart.BaseBackoffMs), d.Restart.BaseBackoff},
		{"defaults.restart.maxBackoffMs", ms(r.Defaults.Restart.MaxBackoffMs), d.Restart.MaxBackoff},
	} {
		if c.kit != c.ours {
			t.Errorf("%s: the kit says %v, the Go host library %v", c.rule, c.kit, c.ours)
		}
	}
	if !slices.Equal(r.EnvAllow, baseEnvAllow) {
		t.Errorf("envAllow: the kit says %q, host-sdk/env.go baseEnvAllow %q", r.EnvAllow, baseEnvAllow)
	}
}
