package hostsdk

import (
	"encoding/json"
	"time"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/a2a-plugin/a2a-plugin/plugin"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// Options configure a Manager. The zero value of every field is usable.
type Options struct {
	// Dir is the plugins directory; every executable in it is tried (see
	// Discover). Empty means none.
	Dir string
	// Paths are plugin executables to launch in addition to those in Dir,
	// e.g. the one binary a test harness just built.
	Paths []string
	// Logger receives the manager's logs and, parsed, every plugin's own
	// log lines (under a sub-logger named after the plugin). Nil discards.
	Logger hclog.Logger
	// Host is the host's implementation of the callback service. Nil means
	// the host offers no callbacks (they answer Unimplemented); the Watch
	// stream is served either way. An optional RPC is served when Host
	// implements its interface (plugin.HostWithComplete,
	// plugin.HostWithRecordDelegation), and a host whose CancelTurn cannot
	// stop a running turn implements plugin.HostWithoutRunningCancel.
	Host plugin.HostHandler
	// Config holds each plugin's configuration section, by plugin name,
	// as a JSON object. A plugin without one gets "{}".
	Config map[string]json.RawMessage
	// DataDir is where each plugin gets its own directory (DataDir/<name>,
	// created with mode 0700). Empty means a temporary directory removed by
	// Close.
	DataDir string
	// LogLevel is passed to plugins through plugin.EnvLogLevel and
	// ConfigureRequest.log_level ("trace" … "error"). Empty leaves their
	// default.
	LogLevel string
	// HostInfo describes the host to plugins: its name and version.
	// protocol_minor is set to plugin.ProtocolMinor when zero.
	// optional_rpcs and cancel_turn_unsupported are not taken from here:
	// they are derived from the interfaces Host implements
	// (plugin.HostInfoOf), so a host never claims an RPC it lacks.
	HostInfo *pb.HostInfo

	// EnvAllow adds variables a plugin inherits from the host's
	// environment, as exact names or PREFIX* patterns. Plugins never inherit
	// the whole environment: by default only PATH, HOME, TMPDIR, TMP, TEMP,
	// USER, LANG, LC_*, TZ, the proxy variables (both cases), SSL_CERT_FILE,
	// SSL_CERT_DIR, GOCOVERDIR and plugin.EnvLogLevel pass; secrets such as
	// AWS_SECRET_ACCESS_KEY or OPENAI_API_KEY do not.
	//
	// A plugin also inherits the variables matching the prefixes it declares
	// in DescribeResponse.env_prefixes. Those are only known after it
	// answered Describe, so when they (or PluginEnv under its described
	// name) change its environment, the first launch is repeated at once
	// with the full environment before Configure. Listing the prefixes here
	// (e.g. "A2A_*") avoids that second launch.
	EnvAllow []string
	// PluginEnv sets variables for one plugin, by plugin name; they win
	// over inherited ones.
	PluginEnv map[string]map[string]string

	// StartTimeout bounds each step of bringing a plugin up: the handshake,
	// Describe, Configure and Connect. Default 10s.
	StartTimeout time.Duration
	// DrainTimeout bounds Disconnect and Drain of each plugin at Close.
	// Default 5s.
	DrainTimeout time.Duration
	// HeartbeatInterval is how often the Watch stream carries a heartbeat.
	// Default plugin.DefaultHeartbeat.
	HeartbeatInterval time.Duration
	// Restart is the supervisor's policy for crashed plugins.
	Restart RestartPolicy
	// OnEvent, when set, is called for every Event, from the manager's
	// goroutines; it must be quick and safe for concurrent use.
	OnEvent func(Event)
}

// RestartPolicy says how a crashed plugin is restarted. A crash is restarted
// only while fewer than MaxRestarts restarts happened within the last Window;
// the crash after that marks the plugin failed. A restart that itself fails
// counts as one. Delays grow from BaseBackoff, doubling per recent restart up
// to MaxBackoff, with jitter (half the delay, random).
type RestartPolicy struct {
	// MaxRestarts within Window; 0 means 5, negative means never restart.
	MaxRestarts int
	// Window over which restarts are counted; default 5 minutes.
	Window time.Duration
	// BaseBackoff is the first delay; default 250ms.
	BaseBackoff time.Duration
	// MaxBackoff caps the delay; default 30s.
	MaxBackoff time.Duration
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 10 * time.Second
	}
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = 5 * time.Second
	}
	if o.HeartbeatInterval <= 0 {
		o.HeartbeatInterval = plugin.DefaultHeartbeat
	}
	r := &o.Restart
	if r.MaxRestarts == 0 {
		r.MaxRestarts = 5
	}
	if r.Window <= 0 {
		r.Window = 5 * time.Minute
	}
	if r.BaseBackoff <= 0 {
		r.BaseBackoff = 250 * time.Millisecond
	}
	if r.MaxBackoff <= 0 {
		r.MaxBackoff = 30 * time.Second
	}
	if r.MaxBackoff < r.BaseBackoff {
		r.MaxBackoff = r.BaseBackoff
	}
	return o
}
