package hostsdk

import (
	"slices"
	"strings"

	"github.com/a2a-plugin/a2a-plugin/plugin"
)

// baseEnvAllow is what every plugin inherits from the host's environment:
// enough to run, resolve, reach proxies and verify TLS — and nothing that
// usually holds a secret. Patterns ending in "*" match a prefix.
var baseEnvAllow = []string{
	"PATH", "HOME", "TMPDIR", "TMP", "TEMP", "USER", "LANG", "LC_*", "TZ",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
	"http_proxy", "https_proxy", "no_proxy", "all_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR",
	"GOCOVERDIR", // so coverage of plugin subprocesses works under go test -cover
	"SystemRoot", // Windows networking needs it
	plugin.EnvLogLevel,
}

// envMatch reports whether the variable name matches pattern: an exact name,
// or a prefix followed by "*".
func envMatch(pattern, name string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
		return prefix != "" && strings.HasPrefix(name, prefix)
	}
	return name == pattern
}

// buildEnv is the whole environment of a plugin process, sorted: the
// variables of environ that match baseEnvAllow, allow or a declared prefix,
// then extra (which wins), then the log level. An empty declared prefix is
// ignored: it would let everything through.
func buildEnv(environ, allow, declaredPrefixes []string, extra map[string]string, logLevel string) []string {
	patterns := slices.Concat(baseEnvAllow, allow)
	for _, p := range declaredPrefixes {
		if p != "" {
			patterns = append(patterns, p+"*")
		}
	}
	vars := map[string]string{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if slices.ContainsFunc(patterns, func(p string) bool { return envMatch(p, k) }) {
			vars[k] = v
		}
	}
	for k, v := range extra {
		vars[k] = v
	}
	if logLevel != "" {
		vars[plugin.EnvLogLevel] = logLevel
	}
	out := make([]string, 0, len(vars))
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}
