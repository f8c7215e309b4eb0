package config

// What the plugin says about configuration mistakes: a setting misspelled in
// the host's section or in the environment, a value of the wrong type, a
// value lowered to its hard maximum. Every message names where the value
// came from (the host's section or an environment variable), what was
// expected, and the closest valid name when a name is unknown.

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
)

// HardMaxPingPongTurns is the highest max_pingpong_turns the loop guard
// accepts (security.HardMaxTurns); a larger value is lowered with a warning.
const HardMaxPingPongTurns = 20

// EnvPrefix is the prefix of the plugin's environment variables.
const EnvPrefix = "A2A_"

// sources records where each setting's value came from, by JSON key: the
// name of its environment variable, or "" for the host's section.
type sources map[string]string

// LoadChecked is Load that also reports warnings: environment variables
// with the A2A_ prefix that are no setting (environ is the plugin's
// environment as NAME=value strings, e.g. os.Environ(); nil skips the
// check), and values lowered to a hard maximum. Errors name the source of
// the value at fault.
func LoadChecked(section []byte, getenv func(string) string, environ []string) (*Config, []string, error) {
	c := &Config{}
	if err := c.setDefaults(); err != nil {
		return nil, nil, err
	}
	src := sources{}
	if s := trimSection(section); len(s) > 0 {
		if err := c.loadJSON(s, src); err != nil {
			return nil, nil, err
		}
	}
	stray := unknownEnvWarnings(environ)
	if getenv != nil {
		if err := c.loadEnv(getenv, src); err != nil {
			return nil, nil, withStray(err, stray)
		}
	}
	warnings := append(stray, c.clamp(src)...)
	if err := c.Validate(); err != nil {
		return nil, nil, withStray(src.annotate(err), stray)
	}
	return c, warnings, nil
}

// withStray adds to a refusal the variables that are no setting, each with
// its closest setting: a misspelled variable (A2A_BEARER_TOKN) is often
// why a setting the refusal asks for is missing, and the refusal is all a
// user sees when start-up fails.
func withStray(err error, stray []string) error {
	if len(stray) == 0 {
		return err
	}
	lines := []string{err.Error()}
	for _, w := range stray {
		lines = append(lines, "config: note: "+w)
	}
	return errors.New(strings.Join(lines, "\n"))
}

// origin describes where the value of key came from.
func (s sources) origin(key string) string {
	env, ok := s[key]
	switch {
	case !ok:
		return "its default"
	case env != "":
		return "the environment variable " + env
	}
	return fmt.Sprintf("%q in the host's a2a section", key)
}

// envName matches the environment variable a validation message names.
var envName = regexp.MustCompile(`\bA2A_[A-Z0-9_]+`)

// annotate adds to each line of a validation error where the value it
// names came from, so that a user fixes the host's section or the
// environment, whichever set it.
func (s sources) annotate(err error) error {
	byEnv := map[string]string{}
	for _, st := range Settings() {
		if st.Env != "" {
			byEnv[st.Env] = st.Key
		}
	}
	lines := strings.Split(err.Error(), "\n")
	for i, l := range lines {
		// The setting a message is about is the word it starts with
		// ("config: host … "), else the first variable it names that was set.
		first, _, _ := strings.Cut(strings.TrimPrefix(l, "config: "), " ")
		keys := []string{first}
		for _, env := range envName.FindAllString(l, -1) {
			keys = append(keys, byEnv[env])
		}
		for _, key := range keys {
			if _, set := s[key]; set {
				lines[i] = l + " [set by " + s.origin(key) + "]"
				break
			}
		}
	}
	return errors.New(strings.Join(lines, "\n"))
}

// clamp lowers values above their hard maximum and says so.
func (c *Config) clamp(src sources) []string {
	var out []string
	if c.MaxPingPongTurns > HardMaxPingPongTurns {
		out = append(out, fmt.Sprintf("max_pingpong_turns %d (from %s) is above the hard maximum %d; using %d",
			c.MaxPingPongTurns, src.origin("max_pingpong_turns"), HardMaxPingPongTurns, HardMaxPingPongTurns))
		c.MaxPingPongTurns = HardMaxPingPongTurns
	}
	return out
}

// unknownEnvWarnings names every A2A_ variable of environ that is no
// setting, with the closest one.
func unknownEnvWarnings(environ []string) []string {
	known := map[string]bool{}
	var names []string
	for _, s := range Settings() {
		if s.Env != "" {
			known[s.Env] = true
			names = append(names, s.Env)
		}
	}
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, EnvPrefix) || known[name] || ignoredEnv(name) {
			continue
		}
		msg := fmt.Sprintf("the environment variable %s is not a setting of the a2a plugin and is ignored", name)
		if near := Closest(name, names); near != "" {
			msg += fmt.Sprintf("; did you mean %s?", near)
		}
		out = append(out, msg)
	}
	sort.Strings(out)
	return out
}

// ignoredEnv is A2A_ variables that are not settings on purpose: the test
// suite's database (A2A_TEST_*).
func ignoredEnv(name string) bool { return strings.HasPrefix(name, "A2A_TEST_") }

// unknownKey is the error for a key of the host's section that is no
// setting.
func unknownKey(k string, keys []string) error {
	if near := Closest(k, keys); near != "" {
		return fmt.Errorf("config: unknown setting %q in the host's a2a section; did you mean %q?", k, near)
	}
	return fmt.Errorf("config: unknown setting %q in the host's a2a section; the settings are listed in docs/configuration.md (e.g. %s)",
		k, strings.Join(keys[:min(6, len(keys))], ", "))
}

// typeError explains a value of the host's section that does not fit its
// setting: what was expected and what was given.
func typeError(key string, f reflect.Value, raw json.RawMessage, err error) error {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if serr := setFromString(f, s); serr != nil {
			return fmt.Errorf("config: %q in the host's a2a section: %v", key, serr)
		}
	}
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) && ute.Field != "" && strings.Contains(ute.Field, ".") {
		_, inner, _ := strings.Cut(ute.Field, ".")
		return fmt.Errorf("config: %q in the host's a2a section: %s: want %s, got %s", key, inner, kindOf(ute.Type), jsonKind(raw, ute.Value))
	}
	var se *json.SyntaxError
	if errors.As(err, &se) || (!errors.As(err, &ute) && !strings.HasPrefix(err.Error(), "json:")) {
		// A value's own explanation (a duration, a peer's key).
		return fmt.Errorf("config: %q in the host's a2a section: %v", key, err)
	}
	return fmt.Errorf("config: %q in the host's a2a section: want %s, got %s", key, kindOf(f.Type()), jsonKind(raw, ""))
}

// kindOf names what a value of type t is written as.
func kindOf(t reflect.Type) string {
	switch t {
	case reflect.TypeOf(Duration(0)):
		return `a duration such as "90s" or a number of seconds`
	case reflect.TypeOf([]Peer{}):
		return `a list of peers such as [{"name": "bob", "url": "https://bob.example"}]`
	case reflect.TypeOf([]Skill{}):
		return `a list of skills such as [{"id": "s", "name": "S", "description": "…"}]`
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "a whole number"
	case reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "a list of " + strings.TrimPrefix(kindOf(t.Elem()), "a ") + "s (or one comma-separated string)"
	case reflect.Map:
		return `an object such as {"alice": "token"} (or "alice:token,bob:token")`
	}
	return t.String()
}

// jsonKind names the JSON type of raw ("a string", "a list", …), preferring
// what encoding/json saw when it says.
func jsonKind(raw json.RawMessage, seen string) string {
	switch seen {
	case "string":
		return "a string"
	case "number":
		return "a number"
	case "bool":
		return "true or false"
	case "array":
		return "a list"
	case "object":
		return "an object"
	}
	b := trimSection(raw)
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '"':
		return "a string"
	case '[':
		return "a list"
	case '{':
		return "an object"
	case 't', 'f':
		return "true or false"
	case 'n':
		return "null"
	}
	return "the number " + string(b)
}

// decodePeers reads a2a_agents one peer at a time, refusing keys a peer
// does not have, so that a misspelled credential ("tokn") is not silently
// dropped.
func decodePeers(raw json.RawMessage) ([]Peer, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("want %s, got %s", kindOf(reflect.TypeOf([]Peer{})), jsonKind(raw, ""))
	}
	keys := fieldKeys(reflect.TypeOf(Peer{}))
	out := make([]Peer, 0, len(items))
	for i, item := range items {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(item, &m); err != nil {
			return nil, fmt.Errorf("[%d]: want an object such as {\"name\": \"bob\", \"url\": \"https://bob.example\"}, got %s", i, jsonKind(item, ""))
		}
		for k := range m {
			if !contains(keys, k) {
				msg := fmt.Sprintf("[%d]: unknown key %q", i, k)
				if near := Closest(k, keys); near != "" {
					msg += fmt.Sprintf("; did you mean %q?", near)
				} else {
					msg += " (a peer has " + strings.Join(keys, ", ") + ")"
				}
				return nil, errors.New(msg)
			}
		}
		if err := checkPeerOAuthKeys(m); err != nil {
			return nil, fmt.Errorf("[%d]%w", i, err)
		}
		var p Peer
		if err := json.Unmarshal(item, &p); err != nil {
			var ute *json.UnmarshalTypeError
			if errors.As(err, &ute) {
				return nil, fmt.Errorf("[%d].%s: want %s, got %s", i, ute.Field, kindOf(ute.Type), jsonKind(nil, ute.Value))
			}
			return nil, fmt.Errorf("[%d]: %v", i, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// peersError places an error of decodePeers: "[1].url: …" becomes
// `a2a_agents[1].url in the host's a2a section: …`.
func peersError(key string, err error) error {
	msg := err.Error()
	if strings.HasPrefix(msg, "[") {
		where, rest, _ := strings.Cut(msg, ": ")
		return fmt.Errorf("config: %s%s in the host's a2a section: %s", key, where, rest)
	}
	return fmt.Errorf("config: %q in the host's a2a section: %s", key, msg)
}

func fieldKeys(t reflect.Type) []string {
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		keys = append(keys, jsonKey(t.Field(i)))
	}
	sort.Strings(keys)
	return keys
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func trimSection(b []byte) []byte {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		return nil
	}
	return []byte(s)
}

// Closest returns the candidate nearest to word (ignoring case, '_' and
// '-'), or "" when none is near enough to be a likely misspelling.
func Closest(word string, candidates []string) string {
	norm := func(s string) string {
		return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(s))
	}
	w := norm(word)
	best, bestD := "", -1
	for _, c := range candidates {
		d := editDistance(w, norm(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" || bestD > max(2, len([]rune(w))/3) {
		return ""
	}
	return best
}

// editDistance is the Damerau–Levenshtein distance (adjacent swaps count
// once) between a and b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
