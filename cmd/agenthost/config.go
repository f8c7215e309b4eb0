package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/a2a-plugin/a2a-plugin/internal/config"
	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// hostConfig is host.yaml: see host.example.yaml for the format.
type hostConfig struct {
	// PluginsDir is where plugins are discovered (--plugins wins).
	PluginsDir string
	// DataDir is the root of the plugins' data directories (--data wins).
	DataDir string
	// LogLevel is the host's and the plugins' log level (--log-level wins).
	LogLevel string
	// Agent selects the agent: echo, scenario:FILE, command:CMD (--agent wins).
	Agent string
	// Plugins maps a plugin name to the section handed to its Configure.
	Plugins map[string]yaml.Node
	// Env maps a plugin name to variables set in its environment.
	Env map[string]map[string]string
	// EnvAllow lists patterns of the host's variables passed to every
	// plugin (default: A2A_* and the plugins' declared prefixes).
	EnvAllow []string
	// Restart is the supervisor's policy for crashed plugins.
	Restart restartConfig
	// Agents are the host's agents (contract 1.4), each with its own
	// behavior; none: the host is one agent (Agent).
	Agents []agentConfig

	// path is the file the configuration came from, for relative paths
	// and messages; lines has the line of each top-level key and of each
	// plugin's section ("plugins.a2a").
	path  string
	lines map[string]int
}

// restartConfig is host.yaml's restart section.
type restartConfig struct {
	// MaxRestarts within Window before agenthost gives up; unset means 5,
	// negative (max_restarts: 0 in the file) never restarts.
	MaxRestarts int
	// Window over which restarts are counted (0: 5m).
	Window time.Duration
}

// hostKeys are the top-level keys of host.yaml.
var hostKeys = []string{"agent", "agents", "data_dir", "env", "env_allow", "log_level", "plugins", "plugins_dir", "restart"}

// agentConfig is one entry of host.yaml's agents list.
type agentConfig struct {
	// ID, Name and Description are what the host tells plugins
	// (HostInfo.agents); Agent is the agent's behavior, as --agent
	// (default: the host's agent).
	ID, Name, Description, Agent string
	// line is where the entry starts, for messages.
	line int
}

// agentKeys are the keys of an agents entry.
var agentKeys = []string{"agent", "description", "id", "name"}

// loadHostConfig reads host.yaml; an empty path means no file. ${VAR} and
// ${VAR:-default} in values are replaced from the environment.
func loadHostConfig(path string) (*hostConfig, error) {
	return loadHostConfigEnv(path, os.LookupEnv)
}

func loadHostConfigEnv(path string, lookup func(string) (string, bool)) (*hostConfig, error) {
	cfg := &hostConfig{lines: map[string]int{}}
	if path == "" {
		return cfg, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read host config: %w", err)
	}
	cfg.path = path
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, syntaxError(path, data, err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return cfg, nil // an empty file is a valid, empty configuration
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return cfg, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, cfg.errorf(root, "want a mapping of settings (%s), got %s", strings.Join(hostKeys, ", "), kindName(root))
	}
	if err := expandEnv(path, root, lookup); err != nil {
		return nil, err
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		cfg.lines[k.Value] = k.Line
		if err := cfg.set(k, v); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

// set reads one top-level key.
func (c *hostConfig) set(k, v *yaml.Node) error {
	switch k.Value {
	case "plugins_dir":
		return c.scalar(k, v, &c.PluginsDir)
	case "data_dir":
		return c.scalar(k, v, &c.DataDir)
	case "log_level":
		return c.scalar(k, v, &c.LogLevel)
	case "agent":
		return c.scalar(k, v, &c.Agent)
	case "plugins":
		if isNull(v) {
			return nil
		}
		if v.Kind != yaml.MappingNode {
			return c.errorf(v, "plugins: want a mapping of plugin names to their sections, got %s", kindName(v))
		}
		c.Plugins = map[string]yaml.Node{}
		for i := 0; i+1 < len(v.Content); i += 2 {
			name, sec := v.Content[i], v.Content[i+1]
			if _, err := sectionJSON(*sec); err != nil {
				return c.errorf(sec, "plugins.%s: %v", name.Value, err)
			}
			c.Plugins[name.Value] = *sec
			c.lines["plugins."+name.Value] = name.Line
		}
	case "env":
		if isNull(v) {
			return nil
		}
		if v.Kind != yaml.MappingNode {
			return c.errorf(v, "env: want a mapping of plugin names to variables, e.g. env: {a2a: {A2A_RATE_LIMIT: \"600\"}}, got %s", kindName(v))
		}
		c.Env = map[string]map[string]string{}
		for i := 0; i+1 < len(v.Content); i += 2 {
			name, vars := v.Content[i], v.Content[i+1]
			c.lines["env."+name.Value] = name.Line
			if vars.Kind != yaml.MappingNode {
				return c.errorf(vars, "env.%s: want a mapping of variable names to values, e.g. {A2A_RATE_LIMIT: \"600\"}, got %s", name.Value, kindName(vars))
			}
			m := map[string]string{}
			for j := 0; j+1 < len(vars.Content); j += 2 {
				vk, vv := vars.Content[j], vars.Content[j+1]
				if vv.Kind != yaml.ScalarNode {
					return c.errorf(vv, "env.%s.%s: want a value (text or a number), got %s", name.Value, vk.Value, kindName(vv))
				}
				m[vk.Value] = vv.Value
			}
			c.Env[name.Value] = m
		}
	case "env_allow":
		switch {
		case isNull(v):
		case v.Kind == yaml.ScalarNode:
			c.EnvAllow = []string{v.Value}
		case v.Kind == yaml.SequenceNode:
			for _, e := range v.Content {
				if e.Kind != yaml.ScalarNode {
					return c.errorf(e, "env_allow: want variable names or PREFIX* patterns, got %s", kindName(e))
				}
				c.EnvAllow = append(c.EnvAllow, e.Value)
			}
		default:
			return c.errorf(v, "env_allow: want a list of variable names or PREFIX* patterns, e.g. [OTEL_*], got %s", kindName(v))
		}
	case "restart":
		return c.restart(v)
	case "agents":
		return c.agents(v)
	default:
		msg := fmt.Sprintf("unknown key %q", k.Value)
		if near := config.Closest(k.Value, hostKeys); near != "" {
			msg += fmt.Sprintf("; did you mean %q?", near)
		}
		return c.errorf(k, "%s (the keys are %s)", msg, strings.Join(hostKeys, ", "))
	}
	return nil
}

func (c *hostConfig) scalar(k, v *yaml.Node, dst *string) error {
	if isNull(v) {
		return nil
	}
	if v.Kind != yaml.ScalarNode {
		return c.errorf(v, "%s: want a single value, got %s", k.Value, kindName(v))
	}
	*dst = v.Value
	return nil
}

// agents reads agents: a list of {id, name, description, agent}.
func (c *hostConfig) agents(v *yaml.Node) error {
	if isNull(v) {
		return nil
	}
	if v.Kind != yaml.SequenceNode {
		return c.errorf(v, "agents: want a list of agents such as [{id: main, name: Main, agent: echo}], got %s", kindName(v))
	}
	seen := map[string]bool{}
	for i, e := range v.Content {
		if e.Kind != yaml.MappingNode {
			return c.errorf(e, "agents[%d]: want a mapping {id, name, description, agent}, got %s", i, kindName(e))
		}
		a := agentConfig{line: e.Line}
		for j := 0; j+1 < len(e.Content); j += 2 {
			k, val := e.Content[j], e.Content[j+1]
			if val.Kind != yaml.ScalarNode {
				return c.errorf(val, "agents[%d].%s: want a single value, got %s", i, k.Value, kindName(val))
			}
			switch k.Value {
			case "id":
				a.ID = val.Value
			case "name":
				a.Name = val.Value
			case "description":
				a.Description = val.Value
			case "agent":
				a.Agent = val.Value
			default:
				msg := fmt.Sprintf("agents[%d]: unknown key %q", i, k.Value)
				if near := config.Closest(k.Value, agentKeys); near != "" {
					msg += fmt.Sprintf("; did you mean %q?", near)
				}
				return c.errorf(k, "%s (the keys are %s)", msg, strings.Join(agentKeys, ", "))
			}
		}
		switch {
		case !config.ValidAgentID(a.ID):
			return c.errorf(e, "agents[%d]: id %q is no agent id: use lower-case letters, digits, '-' and '_' (it becomes the path /agents/{id}/)", i, a.ID)
		case seen[a.ID]:
			return c.errorf(e, "agents[%d]: agent %q is listed twice", i, a.ID)
		}
		seen[a.ID] = true
		c.Agents = append(c.Agents, a)
	}
	return nil
}

// restart reads restart: {max_restarts: N, window: DURATION}.
func (c *hostConfig) restart(v *yaml.Node) error {
	if isNull(v) {
		return nil
	}
	if v.Kind != yaml.MappingNode {
		return c.errorf(v, "restart: want a mapping such as {max_restarts: 5, window: 5m}, got %s", kindName(v))
	}
	keys := []string{"max_restarts", "window"}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		switch k.Value {
		case "max_restarts":
			n, err := strconv.Atoi(val.Value)
			if val.Kind != yaml.ScalarNode || err != nil || n < 0 {
				return c.errorf(val, "restart.max_restarts: want a whole number of restarts (0 or more), got %q", val.Value)
			}
			if n == 0 {
				n = -1 // host-sdk: never restart
			}
			c.Restart.MaxRestarts = n
		case "window":
			d, err := time.ParseDuration(val.Value)
			if val.Kind != yaml.ScalarNode || err != nil || d <= 0 {
				return c.errorf(val, "restart.window: want a duration such as 5m, got %q", val.Value)
			}
			c.Restart.Window = d
		default:
			msg := fmt.Sprintf("restart: unknown key %q", k.Value)
			if near := config.Closest(k.Value, keys); near != "" {
				msg += fmt.Sprintf("; did you mean %q?", near)
			}
			return c.errorf(k, "%s (the keys are max_restarts, window)", msg)
		}
	}
	return nil
}

// errorf is an error at n's line of the file.
func (c *hostConfig) errorf(n *yaml.Node, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", c.path, n.Line, fmt.Sprintf(format, args...))
}

// where names the place of a key in the file ("host.yaml:3"), or "" when
// it is not in a file.
func (c *hostConfig) where(key string) string {
	if line, ok := c.lines[key]; ok && c.path != "" {
		return fmt.Sprintf("%s:%d", c.path, line)
	}
	return ""
}

func isNull(n *yaml.Node) bool {
	return n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// kindName says what a node is, in words.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if isNull(n) {
			return "nothing"
		}
		return fmt.Sprintf("the value %q", n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "nothing"
}

// envRef matches ${NAME} and ${NAME:-default}.
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// expandEnv replaces ${NAME} and ${NAME:-default} in every value (not in
// keys). A plain value that was expanded is typed again, so port: ${PORT}
// is a number.
func expandEnv(path string, n *yaml.Node, lookup func(string) (string, bool)) error {
	switch n.Kind {
	case yaml.ScalarNode:
		if !strings.Contains(n.Value, "${") {
			return nil
		}
		var missing string
		n.Value = envRef.ReplaceAllStringFunc(n.Value, func(ref string) string {
			m := envRef.FindStringSubmatch(ref)
			if v, ok := lookup(m[1]); ok && v != "" {
				return v
			}
			if m[2] != "" {
				return m[3]
			}
			if missing == "" {
				missing = m[1]
			}
			return ""
		})
		if missing != "" {
			return fmt.Errorf("%s:%d: ${%s} is not set in the environment; set it, or give a default as ${%s:-value}", path, n.Line, missing, missing)
		}
		if n.Style == 0 {
			n.Tag = ""
		}
	case yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			if err := expandEnv(path, n.Content[i], lookup); err != nil {
				return err
			}
		}
	case yaml.SequenceNode, yaml.DocumentNode:
		for _, c := range n.Content {
			if err := expandEnv(path, c, lookup); err != nil {
				return err
			}
		}
	}
	return nil
}

// yamlLine finds the line yaml.v3 names in its messages.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError explains a file that is not YAML: a line indented to no level
// of the lines above it (the usual mistake, which the parser reports as
// "did not find expected key" on the line where the mapping started), or
// the parser's message at its line.
func syntaxError(path string, data []byte, err error) error {
	msg := err.Error()
	indentish := strings.Contains(msg, "did not find expected key") || strings.Contains(msg, "mapping values are not allowed") ||
		strings.Contains(msg, "could not find expected ':'")
	if line, text, levels, ok := misindented(data); ok && indentish {
		return fmt.Errorf("%s:%d: %q is indented by %d spaces, which matches none of the lines above it (%s): line it up with the keys it belongs with",
			path, line, strings.TrimSpace(text), indentOf(text), levels)
	}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("%s:%s: %s", path, m[1], m[2])
	}
	return fmt.Errorf("%s: %s", path, strings.TrimPrefix(msg, "yaml: "))
}

// misindented finds the first line that comes back from a deeper block to
// an indentation no enclosing line has.
func misindented(data []byte) (line int, text, levels string, ok bool) {
	var stack []int
	for i, l := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(l)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") || strings.HasPrefix(trimmed, "-") {
			continue
		}
		ind := indentOf(l)
		seen := slices.Clone(stack)
		for len(stack) > 0 && stack[len(stack)-1] > ind {
			stack = stack[:len(stack)-1]
		}
		switch {
		case len(stack) < len(seen) && (len(stack) == 0 || stack[len(stack)-1] < ind):
			words := make([]string, len(seen))
			for j, s := range seen {
				words[j] = strconv.Itoa(s)
			}
			return i + 1, l, strings.Join(words, ", ") + " spaces", true
		case len(stack) == 0 || stack[len(stack)-1] < ind:
			stack = append(stack, ind)
		}
	}
	return 0, "", "", false
}

func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }

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

// unknownSections checks the plugins and env sections against the names
// of the plugins that were found, naming the closest one for a misspelled
// name: a section no plugin reads would leave that plugin on its defaults
// without a word.
func (c *hostConfig) unknownSections(names []string) error {
	var errs []error
	for _, kind := range []string{"plugins", "env"} {
		var keys []string
		if kind == "plugins" {
			for k := range c.Plugins {
				keys = append(keys, k)
			}
		} else {
			for k := range c.Env {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			if contains(names, k) {
				continue
			}
			msg := fmt.Sprintf("%s.%s: no plugin is named %q", kind, k, k)
			if near := config.Closest(k, names); near != "" {
				msg += fmt.Sprintf("; did you mean %q?", near)
			}
			found := "none"
			if len(names) > 0 {
				found = strings.Join(names, ", ")
			}
			msg += fmt.Sprintf(" (plugins found: %s; `agenthost plugins` lists them)", found)
			if w := c.where(kind + "." + k); w != "" {
				msg = w + ": " + msg
			}
			errs = append(errs, errors.New(msg))
		}
	}
	return errors.Join(errs...)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// sectionJSON converts a plugin's YAML section to a JSON object ("{}" for
// an empty section).
func sectionJSON(n yaml.Node) (json.RawMessage, error) {
	if n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null") {
		return json.RawMessage("{}"), nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("want a mapping (the plugin's configuration), got %s", kindName(&n))
	}
	v, err := testharness.JSONValue(&n)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(buf.Bytes()), nil
}
