package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// hostConfig is host.yaml: see host.example.yaml for the format.
type hostConfig struct {
	// PluginsDir is where plugins are discovered (--plugins wins).
	PluginsDir string `yaml:"plugins_dir"`
	// DataDir is the root of the plugins' data directories (--data wins).
	DataDir string `yaml:"data_dir"`
	// LogLevel is the host's and the plugins' log level (--log-level wins).
	LogLevel string `yaml:"log_level"`
	// Agent selects the agent: echo, scenario:FILE, command:CMD (--agent wins).
	Agent string `yaml:"agent"`
	// Plugins maps a plugin name to the section handed to its Configure.
	Plugins map[string]yaml.Node `yaml:"plugins"`
	// Env maps a plugin name to variables set in its environment.
	Env map[string]map[string]string `yaml:"env"`
	// EnvAllow lists patterns of the host's variables passed to every
	// plugin (default: A2A_* and the plugins' declared prefixes).
	EnvAllow []string `yaml:"env_allow"`

	// path is the file the configuration came from, for relative paths.
	path string
}

// loadHostConfig reads host.yaml; an empty path means no file.
func loadHostConfig(path string) (*hostConfig, error) {
	cfg := &hostConfig{}
	if path == "" {
		return cfg, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read host config: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	// An empty file (io.EOF) is a valid, empty configuration.
	if err := dec.Decode(cfg); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	cfg.path = path
	for name, n := range cfg.Plugins {
		if _, err := sectionJSON(n); err != nil {
			return nil, fmt.Errorf("%s: plugins.%s (line %d): %w", path, name, n.Line, err)
		}
	}
	return cfg, nil
}

// resolve makes a path from the configuration relative to the file.
func (c *hostConfig) resolve(p string) string {
	if p == "" || filepath.IsAbs(p) || c.path == "" {
		return p
	}
	return filepath.Join(filepath.Dir(c.path), p)
}

// pluginConfigs returns each plugin's section as a JSON object.
func (c *hostConfig) pluginConfigs() (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	for name, n := range c.Plugins {
		b, err := sectionJSON(n)
		if err != nil {
			return nil, fmt.Errorf("plugins.%s: %w", name, err)
		}
		out[name] = b
	}
	return out, nil
}

// sectionJSON converts a plugin's YAML section to a JSON object ("{}" for
// an empty section).
func sectionJSON(n yaml.Node) (json.RawMessage, error) {
	if n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
		return json.RawMessage("{}"), nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("want a mapping (the plugin's configuration), got %s", n.ShortTag())
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, err
	}
	v, err := jsonable(v)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// jsonable turns YAML's decoded values into ones encoding/json takes.
func jsonable(v any) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			c, err := jsonable(e)
			if err != nil {
				return nil, err
			}
			x[k] = c
		}
		return x, nil
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			ks, ok := k.(string)
			if !ok {
				return nil, fmt.Errorf("key %v is not a string", k)
			}
			c, err := jsonable(e)
			if err != nil {
				return nil, err
			}
			out[ks] = c
		}
		return out, nil
	case []any:
		for i, e := range x {
			c, err := jsonable(e)
			if err != nil {
				return nil, err
			}
			x[i] = c
		}
		return x, nil
	}
	return v, nil
}
