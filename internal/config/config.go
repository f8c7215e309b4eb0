// Package config is the A2A plugin's configuration: the host's config
// section for the plugin (JSON, handed over in Configure) overlaid with
// A2A_* environment variables, with defaults and validation.
//
// Every setting is one field of Config carrying its JSON key, its
// environment variable, its default and a one-line help text in struct
// tags; Settings lists them (docs/configuration.md is generated from it
// by make docs, and a test fails when it drifts). Environment variables
// win over the host's config, so secrets can stay out of config files.
package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Peer is one outbound A2A agent the host's model may call by name.
type Peer struct {
	// Name is how tools refer to the peer.
	Name string `json:"name"`
	// URL is the peer's base URL (its Agent Card is found under it).
	URL string `json:"url"`
	// Token is sent as "Authorization: Bearer <token>".
	Token string `json:"token,omitempty"`
	// TokenFile is a file holding the bearer token, read on first use and
	// again whenever the peer refuses it (HTTP 401) or asks for credentials
	// (AUTH_REQUIRED): the token can be rotated without a restart.
	TokenFile string `json:"token_file,omitempty"`
	// TokenCommand is a command (sh -c, 10s at most) whose standard output
	// is the bearer token; it runs when TokenFile would be read. The token
	// is never logged.
	TokenCommand string `json:"token_command,omitempty"`
	// Header is an arbitrary auth header, "Name: value".
	Header string `json:"header,omitempty"`
	// Trust is "trusted" or "public" (default).
	Trust string `json:"trust,omitempty"`
	// Timeout bounds each call to the peer (Go duration, e.g. "2m").
	Timeout Duration `json:"timeout,omitempty"`
	// Signed requires the peer's Agent Card to carry a signature that
	// verifies with CardKeys or the global card_trusted_keys.
	Signed bool `json:"signed,omitempty"`
	// CardKeys are public key files (PEM, JWK or JWK Set; "KID=PATH" names
	// a PEM key's kid) trusted for this peer's card; setting them implies
	// Signed.
	CardKeys []string `json:"card_keys,omitempty"`
	// OAuth2 gets the peer's bearer tokens with the OAuth 2.0
	// client-credentials grant (instead of a static credential).
	OAuth2 *PeerOAuth `json:"oauth2,omitempty"`
}

// Skill is an extra skill advertised only on the extended Agent Card.
type Skill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags,omitempty"`
	Examples    []string `json:"examples,omitempty"`
}

// Duration is a time.Duration written as a Go duration string ("90s") or a
// number of seconds in JSON.
type Duration time.Duration

// UnmarshalJSON accepts "90s" or 90.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := parseDuration(s)
		if err != nil {
			return err
		}
		*d = Duration(v)
		return nil
	}
	var n float64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("want a duration such as \"90s\" or a number of seconds, got %s", b)
	}
	*d = Duration(n * float64(time.Second))
	return nil
}

// MarshalJSON writes the duration as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// Config is every setting of the A2A plugin.
type Config struct {
	// Inbound server.
	Host      string `json:"host" env:"A2A_HOST" default:"127.0.0.1" help:"Address the A2A server binds. Anything but loopback needs a token (A2A_BEARER_TOKEN, A2A_PEER_TOKENS, an issuer in A2A_OAUTH_ISSUERS, or tokens in agent_settings)."`
	Port      int    `json:"port" env:"A2A_PORT" default:"41241" help:"TCP port of the A2A server (0 picks a free port)."`
	PublicURL string `json:"public_url" env:"A2A_PUBLIC_URL" help:"Base URL advertised in the Agent Card; set it when clients reach the agent by a host name or through a proxy (default: a loopback Host as sent, else the address the connection came in on; a client's Host is never reflected)."`
	TLSCert   string `json:"tls_cert" env:"A2A_TLS_CERT" help:"PEM certificate file; with A2A_TLS_KEY the server speaks HTTPS."`
	TLSKey    string `json:"tls_key" env:"A2A_TLS_KEY" help:"PEM private key file for A2A_TLS_CERT."`
	GRPC      bool   `json:"grpc" env:"A2A_GRPC" default:"true" help:"Serve the gRPC binding (lf.a2a.v1.A2AService) on the A2A port beside JSON-RPC and HTTP+JSON, declared in the Agent Card as host:port; false turns it off (e.g. behind a proxy that passes no HTTP/2)."`

	// Agent Card.
	AgentName            string   `json:"agent_name" env:"A2A_AGENT_NAME" default:"Agent" help:"Agent Card name."`
	AgentDescription     string   `json:"agent_description" env:"A2A_AGENT_DESCRIPTION" default:"An agent that answers A2A requests with its host's live session." help:"Agent Card description."`
	AgentVersion         string   `json:"agent_version" env:"A2A_AGENT_VERSION" default:"1.0.0" help:"Agent Card version (the agent's, not the plugin's)."`
	ProviderOrganization string   `json:"provider_organization" env:"A2A_PROVIDER_ORGANIZATION" help:"Agent Card provider.organization (the provider is omitted when empty)."`
	ProviderURL          string   `json:"provider_url" env:"A2A_PROVIDER_URL" help:"Agent Card provider.url."`
	DocumentationURL     string   `json:"documentation_url" env:"A2A_DOCUMENTATION_URL" help:"Agent Card documentationUrl."`
	IconURL              string   `json:"icon_url" env:"A2A_ICON_URL" help:"Agent Card iconUrl."`
	AdvertisedToolsets   []string `json:"advertised_toolsets" env:"A2A_ADVERTISED_TOOLSETS" help:"Opt-in: host toolsets whose tools the Agent Card also lists as skills, comma-separated, * for all but this plugin's own a2a tools (default: none, the host's tools stay private)."`
	ExtendedSkills       []Skill  `json:"extended_skills" help:"Extra skills shown only on the extended Agent Card to authenticated peers (host config only)."`
	CardSigningKey       string   `json:"card_signing_key" env:"A2A_CARD_SIGNING_KEY" help:"PEM private key file (PKCS#8 Ed25519 or EC P-256) that signs the Agent Card (JWS over the JCS-canonical card); the public key is served at /.well-known/jwks.json."`
	CardSigningKID       string   `json:"card_signing_kid" env:"A2A_CARD_SIGNING_KID" help:"Key id (kid) of the card signatures (default: the key's RFC 7638 thumbprint)."`
	CardSigningJKU       string   `json:"card_signing_jku" env:"A2A_CARD_SIGNING_JKU" help:"URL of a JWK Set holding the card signing key, put in the signatures' jku (optional; e.g. <public URL>/.well-known/jwks.json)."`

	// Host agents (contract 1.4).
	ExposeAgents  []string                 `json:"expose_agents" env:"A2A_EXPOSE_AGENTS" help:"Host agents served, comma-separated ids, each at /agents/{id}/ and by tenant (default: every agent the host declares; a host that declares none is one agent and this must stay empty)."`
	DefaultAgent  string                   `json:"default_agent" env:"A2A_DEFAULT_AGENT" help:"Host agent served at the root URL and the root Agent Card (default: the first served agent in the host's order)."`
	AgentSettings map[string]AgentSettings `json:"agent_settings" env:"A2A_AGENT_SETTINGS" secret:"true" help:"Per host agent, a JSON object of agent ids to {name, description, bearer_token, peer_tokens, trusted_peers, policy, rate_limit, oauth}; unset fields take the plugin-wide settings, except tokens: an agent with tokens of its own admits only those (oauth: true admits the tokens of oauth_issuers too; oauth: false refuses them at an agent without tokens of its own; oauth: {\"issuers\": [names], \"audience\": \"aud\"} admits only the named issuers' tokens, and only those minted for the agent's own audience)."`

	// Tasks.
	RequestTimeout     Duration `json:"request_timeout" env:"A2A_REQUEST_TIMEOUT" default:"60s" help:"How long a blocking SendMessage waits before returning the task as it is (the task keeps running)."`
	TaskSilenceTimeout Duration `json:"task_silence_timeout" env:"A2A_TASK_SILENCE_TIMEOUT" default:"10m" help:"A running task whose host sent nothing for this long is failed; any progress resets the clock."`

	// State.
	Store          string   `json:"store" env:"A2A_STORE" default:"sqlite" help:"Task store: sqlite (durable, in the host's data directory), memory (bounded, lost on restart) or postgres (several replicas of the agent on one PostgreSQL database; needs postgres_dsn)."`
	MemoryMaxTasks int      `json:"memory_max_tasks" env:"A2A_MEMORY_MAX_TASKS" default:"10000" help:"Tasks the memory store keeps before evicting the oldest finished ones."`
	Retention      Duration `json:"retention" env:"A2A_RETENTION" default:"720h" help:"Finished tasks and conversations older than this are pruned in the background (0 keeps everything)."`
	PostgresDSN    string   `json:"postgres_dsn" env:"A2A_POSTGRES_DSN" secret:"true" help:"With store postgres: the database, as postgres://user:password@host:5432/db?sslmode=require (or key=value pairs; search_path picks the schema). Every replica uses the same one."`
	ReplicaID      string   `json:"replica_id" env:"A2A_REPLICA_ID" help:"With store postgres: this replica's name among those sharing the database (default: host name and process id). A replica restarted with the same name fails the tasks it was running at once instead of after replica_lease."`
	ReplicaLease   Duration `json:"replica_lease" env:"A2A_REPLICA_LEASE" default:"15s" help:"With store postgres: a replica renews its lease every third of this; when it stops (crash, lost network) another replica fails its running tasks once this long has passed since its last renewal (checked every third of it)."`
	PushClaimLease Duration `json:"push_claim_lease" env:"A2A_PUSH_CLAIM_LEASE" default:"40s" help:"With store postgres: how long a replica holds a webhook notification it sends; if it dies meanwhile another replica sends it after this. Webhook POSTs time out at half of it (at most 15s)."`

	// Security.
	BearerToken        string            `json:"bearer_token" env:"A2A_BEARER_TOKEN" secret:"true" help:"Shared token; callers presenting it are identified as ip:<address>."`
	PeerTokens         map[string]string `json:"peer_tokens" env:"A2A_PEER_TOKENS" secret:"true" help:"Per-peer tokens giving named identities, \"alice:tok1,bob:tok2\" (JSON: an object)."`
	TrustedPeers       []string          `json:"trusted_peers" env:"A2A_TRUSTED_PEERS" help:"Peer names (from A2A_PEER_TOKENS) of the Trusted tier; when set, only Local callers and these peers may run tasks."`
	LoopbackIsLocal    bool              `json:"loopback_is_local" env:"A2A_LOOPBACK_IS_LOCAL" default:"true" help:"Treat loopback callers that present no token as the Local tier (a presented token always names its holder); turn off behind a reverse proxy on the same machine."`
	Policy             string            `json:"policy" env:"A2A_POLICY" help:"Operations per tier, e.g. \"public=send,get,cancel,subscribe;trusted=all\" (default: local and trusted callers may do everything, public callers send, get, cancel and subscribe; see docs/security.md)."`
	RateLimit          int               `json:"rate_limit" env:"A2A_RATE_LIMIT" default:"120" help:"Requests per minute per identity (0: unlimited)."`
	RateLimitLocal     bool              `json:"rate_limit_local" env:"A2A_RATE_LIMIT_LOCAL" default:"false" help:"Apply rate_limit to Local callers too (loopback, no token: the operator's own tools and agents); by default they are exempt."`
	MaxPingPongTurns   int               `json:"max_pingpong_turns" env:"A2A_MAX_PINGPONG_TURNS" default:"5" help:"Turns one context may run before further messages are rejected (hard maximum 20); CancelTask resets it."`
	MaxDelegationDepth int               `json:"max_delegation_depth" env:"A2A_MAX_DELEGATION_DEPTH" default:"3" help:"Hops a delegation chain may take through agents before it is refused."`
	MaxCallsPerTask    int               `json:"max_calls_per_task" env:"A2A_MAX_CALLS_PER_TASK" default:"10" help:"Outbound calls (a2a_call, a2a_route, each peer of a2a_orchestrate) the host may make while answering one inbound task; one more is a tool error (0: no limit)."`
	MaxCallsPerMinute  int               `json:"max_calls_per_minute" env:"A2A_MAX_CALLS_PER_MINUTE" default:"30" help:"Outbound calls per minute the host may make while answering the tasks of one caller, whatever contexts and metadata they come with; stops delegation rings through agents that drop the chain (0: no limit)."`
	MaxBodyBytes       int64             `json:"max_body_bytes" env:"A2A_MAX_BODY_BYTES" default:"4194304" help:"Largest request body accepted."`
	MaxParts           int               `json:"max_parts" env:"A2A_MAX_PARTS" default:"64" help:"Most parts one message may have."`
	MaxPartBytes       int               `json:"max_part_bytes" env:"A2A_MAX_PART_BYTES" default:"2097152" help:"Largest single part (decoded bytes)."`
	MaxStreamsPerPeer  int               `json:"max_streams_per_peer" env:"A2A_MAX_STREAMS_PER_PEER" default:"16" help:"Concurrent SSE streams per identity."`
	MaxStreams         int               `json:"max_streams" env:"A2A_MAX_STREAMS" default:"512" help:"Concurrent SSE streams in all, whoever holds them; one more is refused with HTTP 503 (JSON-RPC -32603, reason SERVER_BUSY) saying to retry or poll."`
	MaxConnections     int               `json:"max_connections" env:"A2A_MAX_CONNECTIONS" default:"1024" help:"Open connections in all; past it a new connection takes the place of the longest-idle keep-alive one (idle for 5s at least), or is answered HTTP 503 when there is none."`
	BodyTimeout        Duration          `json:"body_timeout" env:"A2A_BODY_TIMEOUT" default:"30s" help:"How long a request body may take to arrive once its headers have; a late body gets HTTP 408, and one not needed (a refused request) is waited for at most 2s before the answer."`
	AuditLog           string            `json:"audit_log" env:"A2A_AUDIT_LOG" help:"Audit log file (JSON Lines); default <data dir>/audit.jsonl; \"off\" disables it."`
	AuditMaxBytes      int64             `json:"audit_max_bytes" env:"A2A_AUDIT_MAX_BYTES" default:"10485760" help:"Size at which the audit log is rotated (5 old files are kept)."`

	// OAuth 2.0 / OpenID Connect (inbound; oauth_allow_loopback_http also outbound).
	OAuthIssuers           []OAuthIssuer `json:"oauth_issuers" env:"A2A_OAUTH_ISSUERS" help:"OpenID providers whose JWT access tokens are accepted beside the static tokens: a JSON list of {issuer, audience, name, identity_claim, scope_prefix, ignore_scopes, trusted_claim, trusted_values, token_url} (see docs/security.md)."`
	OAuthClockSkew         Duration      `json:"oauth_clock_skew" env:"A2A_OAUTH_CLOCK_SKEW" default:"30s" help:"How far an access token's exp, nbf and iat may be off this machine's clock (at most 10m)."`
	OAuthAllowLoopbackHTTP bool          `json:"oauth_allow_loopback_http" env:"A2A_OAUTH_ALLOW_LOOPBACK_HTTP" default:"false" help:"Allow issuers and peers' token endpoints on loopback addresses over plain http (tests, a provider on the same machine); all others must be https."`

	// Outbound.
	Agents                []Peer   `json:"a2a_agents" env:"A2A_AGENTS" help:"Peers the model may call: a JSON list of {name, url, token|token_file|token_command|header|oauth2, trust, timeout, signed, card_keys}."`
	AllowUnconfiguredURLs bool     `json:"allow_unconfigured_urls" env:"A2A_ALLOW_UNCONFIGURED_URLS" default:"false" help:"Let tools call agent URLs that are not in a2a_agents."`
	AllowLoopbackURLs     bool     `json:"allow_loopback_urls" env:"A2A_ALLOW_LOOPBACK_URLS" default:"false" help:"Allow loopback addresses in outbound and webhook URLs (tests, same-machine agents)."`
	AllowPrivateURLs      bool     `json:"allow_private_urls" env:"A2A_ALLOW_PRIVATE_URLS" default:"false" help:"Allow private and link-local addresses in outbound and webhook URLs."`
	CallTimeout           Duration `json:"call_timeout" env:"A2A_CALL_TIMEOUT" default:"120s" help:"Default time a2a_call waits for a peer before returning a task receipt."`
	CancelOnFailure       bool     `json:"cancel_on_failure" env:"A2A_CANCEL_ON_FAILURE" default:"true" help:"When an inbound task fails or is rejected, cancel the remote tasks its turns delegated, as a cancel of the task always does (off: they run on)."`
	CancelMaxAttempts     int      `json:"cancel_max_attempts" env:"A2A_CANCEL_MAX_ATTEMPTS" default:"12" help:"CancelTask attempts (exponential backoff from 1s to 5m) for each remote task a canceled task delegated, before the cancel is given up and recorded as failed."`
	CardTrustedKeys       []string `json:"card_trusted_keys" env:"A2A_CARD_TRUSTED_KEYS" help:"Public key files (PEM, JWK or JWK Set) trusted for the cards of every peer configured with signed: true, comma-separated."`
	AttachmentRoots       []string `json:"attachment_roots" env:"A2A_ATTACHMENT_ROOTS" help:"Directories (absolute paths, comma-separated) a2a_call may attach local files from (files[].path, resolved after symlinks); with none, path is refused and files go as base64 or url."`

	// Observability.
	Metrics      bool   `json:"metrics" env:"A2A_METRICS" default:"true" help:"Serve Prometheus metrics at /metrics (to the local operator and trusted peers only)."`
	OtelEndpoint string `json:"otel_endpoint" env:"A2A_OTEL_ENDPOINT" help:"OTLP/HTTP collector to export OpenTelemetry spans to, e.g. http://127.0.0.1:4318 (empty: no export; W3C traceparent headers are passed on either way)."`
	Inspector    bool   `json:"inspector" env:"A2A_INSPECTOR" default:"false" help:"Serve the operator's web inspector at /inspector/ — live card, tasks, peers, calls, metrics, a send form (Local callers only; see docs/operations.md)."`
	Pprof        bool   `json:"pprof" env:"A2A_PPROF" default:"false" help:"Serve Go's runtime profiles (net/http/pprof) at /debug/pprof/ to Local callers only, for finding where CPU and memory go."`

	// Push notifications.
	PushEnabled           bool   `json:"push_enabled" env:"A2A_PUSH_ENABLED" default:"true" help:"Offer push notifications (webhooks)."`
	PushSecret            string `json:"push_secret" env:"A2A_PUSH_SECRET" secret:"true" help:"HMAC-SHA256 key for X-A2A-Signature on webhook deliveries (default: a random key generated into <data dir>/push-secret; never the bearer token)."`
	PushMaxAttempts       int    `json:"push_max_attempts" env:"A2A_PUSH_MAX_ATTEMPTS" default:"12" help:"Delivery attempts (with exponential backoff) before a webhook notification is given up."`
	MaxPushConfigsPerTask int    `json:"max_push_configs_per_task" env:"A2A_MAX_PUSH_CONFIGS_PER_TASK" default:"10" help:"Push notification configs one task may have; one more is refused with -32602 (replacing a config by its id does not count)."`
}

// Setting describes one configuration setting.
type Setting struct {
	Key, Env, Default, Help string
	Secret                  bool
}

// Settings lists every setting in declaration order.
func Settings() []Setting {
	t := reflect.TypeOf(Config{})
	out := make([]Setting, 0, t.NumField())
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		out = append(out, Setting{
			Key: jsonKey(f), Env: f.Tag.Get("env"), Default: f.Tag.Get("default"),
			Help: f.Tag.Get("help"), Secret: f.Tag.Get("secret") == "true",
		})
	}
	return out
}

func jsonKey(f reflect.StructField) string {
	k, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return k
}

// Load builds the configuration from the host's JSON section (may be empty)
// and the environment (getenv, usually os.Getenv), then validates it.
// Unknown keys and malformed values are errors naming the setting.
func Load(section []byte, getenv func(string) string) (*Config, error) {
	c, _, err := LoadChecked(section, getenv, nil)
	return c, err
}

func (c *Config) setDefaults() error {
	v := reflect.ValueOf(c).Elem()
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		def, ok := t.Field(i).Tag.Lookup("default")
		if !ok {
			continue
		}
		if err := setFromString(v.Field(i), def); err != nil {
			return fmt.Errorf("config: bad default for %s: %w", jsonKey(t.Field(i)), err)
		}
	}
	return nil
}

func (c *Config) loadJSON(section []byte, src sources) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(section, &raw); err != nil {
		return fmt.Errorf("config: the host's a2a section is not a JSON object: %w", err)
	}
	v := reflect.ValueOf(c).Elem()
	t := v.Type()
	fields := map[string]int{}
	for i := 0; i < t.NumField(); i++ {
		fields[jsonKey(t.Field(i))] = i
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		i, ok := fields[k]
		if !ok {
			return unknownKey(k, fieldKeys(t))
		}
		src[k] = ""
		f := v.Field(i)
		if issuers, ok := f.Addr().Interface().(*[]OAuthIssuer); ok {
			is, err := decodeIssuers(raw[k])
			if err != nil {
				return peersError(k, err)
			}
			*issuers = is
			continue
		}
		if peers, ok := f.Addr().Interface().(*[]Peer); ok {
			p, err := decodePeers(raw[k])
			if err != nil {
				return peersError(k, err)
			}
			*peers = p
			continue
		}
		if err := json.Unmarshal(raw[k], f.Addr().Interface()); err != nil {
			// Strings are accepted for every type, as in the environment.
			var s string
			if json.Unmarshal(raw[k], &s) != nil || setFromString(f, s) != nil {
				return typeError(k, f, raw[k], err)
			}
		}
	}
	return nil
}

func (c *Config) loadEnv(getenv func(string) string, src sources) error {
	v := reflect.ValueOf(c).Elem()
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		name := t.Field(i).Tag.Get("env")
		if name == "" {
			continue
		}
		s := getenv(name)
		if s == "" {
			continue
		}
		if err := setFromString(v.Field(i), s); err != nil {
			return fmt.Errorf("config: environment variable %s: %w", name, err)
		}
		src[jsonKey(t.Field(i))] = name
	}
	return nil
}

// setFromString parses s into f according to f's type.
func setFromString(f reflect.Value, s string) error {
	s = strings.TrimSpace(s)
	switch p := f.Addr().Interface().(type) {
	case *string:
		*p = s
	case *int:
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("want a whole number, got %q", s)
		}
		*p = n
	case *int64:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("want a whole number, got %q", s)
		}
		*p = n
	case *bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("want true or false, got %q", s)
		}
		*p = b
	case *Duration:
		d, err := parseDuration(s)
		if err != nil {
			return err
		}
		*p = Duration(d)
	case *[]string:
		*p = nil
		for _, part := range strings.Split(s, ",") {
			if part = strings.TrimSpace(part); part != "" {
				*p = append(*p, part)
			}
		}
	case *map[string]string:
		m, err := ParsePairs(s)
		if err != nil {
			return err
		}
		*p = m
	case *[]OAuthIssuer:
		is, err := decodeIssuers([]byte(s))
		if err != nil {
			return err
		}
		*p = is
	case *map[string]AgentSettings:
		m, err := decodeAgentSettings([]byte(s))
		if err != nil {
			return err
		}
		*p = m
	case *[]Peer:
		// As strictly as in the host's section: a misspelled key is an
		// error, not a dropped credential.
		peers, err := decodePeers([]byte(s))
		if err != nil {
			return err
		}
		*p = peers
	default:
		return fmt.Errorf("cannot be set from text (%s)", f.Type())
	}
	return nil
}

// parseDuration accepts Go durations ("90s", "2h") and plain seconds ("90").
func parseDuration(s string) (time.Duration, error) {
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		return time.Duration(n * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("want a duration such as \"90s\" or \"10m\", got %q", s)
	}
	return d, nil
}

// ParsePairs parses "name:value,name:value" (used for peer tokens).
func ParsePairs(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		k, v, ok := strings.Cut(item, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("want name:value pairs separated by commas, e.g. \"alice:tok1,bob:tok2\"; %q is not one", redactPair(item))
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("name %q appears twice", k)
		}
		out[k] = v
	}
	return out, nil
}

// redactPair hides the value of a malformed pair in error messages.
func redactPair(item string) string {
	if k, _, ok := strings.Cut(item, ":"); ok {
		return k + ":…"
	}
	if len(item) > 4 {
		return item[:2] + "…"
	}
	return "…"
}

// Validate checks the settings against each other and names what to fix.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("config: "+format, args...)) }
	if c.Port < 0 || c.Port > 65535 {
		bad("port %d is not a TCP port (0–65535; A2A_PORT)", c.Port)
	}
	if c.Host == "" {
		bad("host is empty; use 127.0.0.1 (A2A_HOST)")
	} else if !isLoopbackHost(c.Host) && !c.HasToken() && !c.agentTokens() {
		bad("host %q exposes the agent beyond this machine, but no token is set: set A2A_BEARER_TOKEN, A2A_PEER_TOKENS or A2A_OAUTH_ISSUERS, or bind 127.0.0.1", c.Host)
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		bad("TLS needs both a certificate and a key (A2A_TLS_CERT and A2A_TLS_KEY)")
	}
	if c.PublicURL != "" {
		if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("public_url %q is not an http(s) URL (A2A_PUBLIC_URL)", c.PublicURL)
		}
	}
	if c.OtelEndpoint != "" {
		if u, err := url.Parse(c.OtelEndpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("otel_endpoint %q is not an http(s) URL; use e.g. http://127.0.0.1:4318, or leave it empty to export nothing (A2A_OTEL_ENDPOINT)", c.OtelEndpoint)
		}
	}
	switch c.Store {
	case "sqlite", "memory":
	case "postgres":
		if strings.TrimSpace(c.PostgresDSN) == "" {
			bad("store postgres needs postgres_dsn (A2A_POSTGRES_DSN), e.g. postgres://a2a:secret@db.internal:5432/a2a?sslmode=require")
		}
		if c.ReplicaLease < Duration(100*time.Millisecond) {
			bad("replica_lease must be at least 100ms (A2A_REPLICA_LEASE; default 15s)")
		}
		if c.PushClaimLease < Duration(time.Second) {
			bad("push_claim_lease must be at least 1s (A2A_PUSH_CLAIM_LEASE; default 40s)")
		}
		if c.PushEnabled && c.PushSecret == "" {
			// Any replica may send any task's notifications: they must all
			// sign with one key, not each with its own generated one.
			bad("store postgres needs push_secret (A2A_PUSH_SECRET), the same on every replica, so that webhook receivers can verify notifications whichever replica sends them (or set push_enabled false)")
		}
	default:
		bad("store %q is unknown; use sqlite, memory or postgres (A2A_STORE)", c.Store)
	}
	positive := map[string]int64{
		"memory_max_tasks (A2A_MEMORY_MAX_TASKS)": int64(c.MemoryMaxTasks), "max_body_bytes (A2A_MAX_BODY_BYTES)": c.MaxBodyBytes,
		"max_parts (A2A_MAX_PARTS)": int64(c.MaxParts), "max_part_bytes (A2A_MAX_PART_BYTES)": int64(c.MaxPartBytes),
		"max_streams_per_peer (A2A_MAX_STREAMS_PER_PEER)": int64(c.MaxStreamsPerPeer), "max_pingpong_turns (A2A_MAX_PINGPONG_TURNS)": int64(c.MaxPingPongTurns),
		"max_streams (A2A_MAX_STREAMS)": int64(c.MaxStreams), "max_connections (A2A_MAX_CONNECTIONS)": int64(c.MaxConnections),
		"max_delegation_depth (A2A_MAX_DELEGATION_DEPTH)": int64(c.MaxDelegationDepth), "push_max_attempts (A2A_PUSH_MAX_ATTEMPTS)": int64(c.PushMaxAttempts),
		"cancel_max_attempts (A2A_CANCEL_MAX_ATTEMPTS)":             int64(c.CancelMaxAttempts),
		"max_push_configs_per_task (A2A_MAX_PUSH_CONFIGS_PER_TASK)": int64(c.MaxPushConfigsPerTask),
		"audit_max_bytes (A2A_AUDIT_MAX_BYTES)":                     c.AuditMaxBytes,
	}
	names := make([]string, 0, len(positive))
	for k := range positive {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if positive[k] <= 0 {
			bad("%s must be positive, got %d", k, positive[k])
		}
	}
	if c.RateLimit < 0 {
		bad("rate_limit must not be negative (A2A_RATE_LIMIT; 0 means unlimited)")
	}
	if c.MaxCallsPerTask < 0 || c.MaxCallsPerMinute < 0 {
		bad("max_calls_per_task and max_calls_per_minute must not be negative (A2A_MAX_CALLS_PER_TASK, A2A_MAX_CALLS_PER_MINUTE; 0 means no limit)")
	}
	for name, d := range map[string]Duration{"request_timeout (A2A_REQUEST_TIMEOUT)": c.RequestTimeout,
		"task_silence_timeout (A2A_TASK_SILENCE_TIMEOUT)": c.TaskSilenceTimeout, "call_timeout (A2A_CALL_TIMEOUT)": c.CallTimeout,
		"body_timeout (A2A_BODY_TIMEOUT)": c.BodyTimeout} {
		if d <= 0 {
			bad("%s must be positive", name)
		}
	}
	if c.Retention < 0 {
		bad("retention must not be negative (A2A_RETENTION; 0 keeps everything)")
	}
	for name := range c.PeerTokens {
		if strings.ContainsAny(name, " :,") {
			bad("peer token name %q must not contain spaces, colons or commas", name)
		}
	}
	for _, tp := range c.TrustedPeers {
		if _, ok := c.PeerTokens[tp]; !ok {
			bad("trusted peer %q has no token in peer_tokens (A2A_PEER_TOKENS); trusted peers are named by their token", tp)
		}
	}
	c.validatePeers(bad)
	c.validateOAuth(bad)
	c.validateHostAgents(bad)
	if c.CardSigningKey == "" && (c.CardSigningKID != "" || c.CardSigningJKU != "") {
		bad("card_signing_kid and card_signing_jku need card_signing_key (A2A_CARD_SIGNING_KEY), the private key file that signs the card")
	}
	if c.CardSigningJKU != "" {
		if u, err := url.Parse(c.CardSigningJKU); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("card_signing_jku %q is not an http(s) URL (A2A_CARD_SIGNING_JKU)", c.CardSigningJKU)
		}
	}
	for i, s := range c.ExtendedSkills {
		if s.ID == "" || s.Name == "" || s.Description == "" {
			bad("extended_skills[%d] needs id, name and description", i)
		}
	}
	return errors.Join(errs...)
}

// HasToken reports whether any inbound credential is configured: a static
// token or an OAuth issuer.
func (c *Config) HasToken() bool {
	return c.BearerToken != "" || len(c.PeerTokens) > 0 || len(c.OAuthIssuers) > 0
}

// Addr is the listen address host:port.
func (c *Config) Addr() string { return net.JoinHostPort(c.Host, strconv.Itoa(c.Port)) }

func isLoopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsLoopback()
}
