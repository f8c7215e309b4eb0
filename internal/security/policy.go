package security

import (
	"fmt"
	"slices"
	"strings"
)

// Permission is one kind of A2A operation a caller may be allowed to use.
type Permission int

// Permissions, one per group of A2A methods (see [PermissionForMethod]).
const (
	// PermSend covers SendMessage and SendStreamingMessage.
	PermSend Permission = iota
	// PermGet covers GetTask.
	PermGet
	// PermList covers ListTasks.
	PermList
	// PermCancel covers CancelTask.
	PermCancel
	// PermSubscribe covers SubscribeToTask.
	PermSubscribe
	// PermPushConfig covers the four push-notification config methods and
	// inline push configs on SendMessage.
	PermPushConfig
	// PermExtendedCard covers GetExtendedAgentCard.
	PermExtendedCard

	permCount = iota
)

var permNames = [permCount]string{"send", "get", "list", "cancel", "subscribe", "push-config", "extended-card"}

// String returns the permission's name as [ParsePolicy] spells it.
func (p Permission) String() string {
	if p >= 0 && int(p) < permCount {
		return permNames[p]
	}
	return fmt.Sprintf("permission(%d)", int(p))
}

// permDescriptions say what each permission covers, for the card's scopes.
var permDescriptions = [permCount]string{
	"Send messages: SendMessage and SendStreamingMessage",
	"Read the caller's tasks: GetTask",
	"List the caller's tasks: ListTasks",
	"Cancel the caller's tasks: CancelTask",
	"Follow the caller's tasks: SubscribeToTask",
	"Manage push-notification configs (webhooks) of the caller's tasks",
	"Read the extended Agent Card: GetExtendedAgentCard",
}

// Description says which operations the permission covers.
func (p Permission) Description() string {
	if p >= 0 && int(p) < permCount {
		return permDescriptions[p]
	}
	return p.String()
}

// Grants is a set of permissions (the operation scopes of an OAuth
// token). The zero value grants nothing.
type Grants uint32

// With returns g with p added.
func (g Grants) With(p Permission) Grants { return g | 1<<uint(p) }

// Has reports whether g contains p.
func (g Grants) Has(p Permission) bool { return p >= 0 && int(p) < permCount && g&(1<<uint(p)) != 0 }

// AllPermissions returns every permission, in declaration order.
func AllPermissions() []Permission {
	out := make([]Permission, permCount)
	for i := range out {
		out[i] = Permission(i)
	}
	return out
}

// ParsePermission parses a permission name (case-insensitive). Besides the
// names [Permission.String] returns it accepts "push", "pushconfig",
// "push_config", "card", "extendedcard" and "extended_card".
func ParsePermission(s string) (Permission, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "send":
		return PermSend, nil
	case "get":
		return PermGet, nil
	case "list":
		return PermList, nil
	case "cancel":
		return PermCancel, nil
	case "subscribe":
		return PermSubscribe, nil
	case "push-config", "push_config", "pushconfig", "push":
		return PermPushConfig, nil
	case "extended-card", "extended_card", "extendedcard", "card":
		return PermExtendedCard, nil
	}
	return 0, fmt.Errorf("unknown permission %q (want %s, all or none)", s, strings.Join(permNames[:], ", "))
}

// methodPerms maps every accepted JSON-RPC method name (v1.0, v0.3 and the
// slash-style aliases) to the permission it needs.
var methodPerms = map[string]Permission{
	"SendMessage":                         PermSend,
	"SendStreamingMessage":                PermSend,
	"message/send":                        PermSend,
	"message/stream":                      PermSend,
	"GetTask":                             PermGet,
	"tasks/get":                           PermGet,
	"ListTasks":                           PermList,
	"tasks/list":                          PermList,
	"CancelTask":                          PermCancel,
	"tasks/cancel":                        PermCancel,
	"SubscribeToTask":                     PermSubscribe,
	"tasks/resubscribe":                   PermSubscribe,
	"tasks/subscribe":                     PermSubscribe,
	"CreateTaskPushNotificationConfig":    PermPushConfig,
	"SetTaskPushNotificationConfig":       PermPushConfig,
	"GetTaskPushNotificationConfig":       PermPushConfig,
	"ListTaskPushNotificationConfigs":     PermPushConfig,
	"ListTaskPushNotificationConfig":      PermPushConfig,
	"DeleteTaskPushNotificationConfig":    PermPushConfig,
	"tasks/pushNotificationConfig/set":    PermPushConfig,
	"tasks/pushNotificationConfig/create": PermPushConfig,
	"tasks/pushNotificationConfig/get":    PermPushConfig,
	"tasks/pushNotificationConfig/list":   PermPushConfig,
	"tasks/pushNotificationConfig/delete": PermPushConfig,
	"GetExtendedAgentCard":                PermExtendedCard,
	"agent/getAuthenticatedExtendedCard":  PermExtendedCard,
}

// PermissionForMethod returns the permission a JSON-RPC method needs. ok is
// false for a method name it does not know; the server should answer those
// with "method not found" before asking the policy.
func PermissionForMethod(method string) (p Permission, ok bool) {
	p, ok = methodPerms[method]
	return p, ok
}

// Policy says which permissions each tier has. A tier missing from Allowed
// has none. The zero Policy allows nothing; use [DefaultPolicy].
type Policy struct {
	// Allowed lists the permissions of each tier.
	Allowed map[Tier][]Permission
}

// DefaultPolicy lets local and trusted callers do everything, and public
// callers send messages and get, cancel and subscribe to tasks (the server
// scopes those to the caller's own tasks) and read the extended agent card
// (the server requires authentication for it, so anonymous callers still
// cannot). Public callers may not list tasks or manage push-notification
// configs (which make the server call out to a URL).
func DefaultPolicy() Policy {
	return Policy{Allowed: map[Tier][]Permission{
		TierLocal:   AllPermissions(),
		TierTrusted: AllPermissions(),
		TierPublic:  {PermSend, PermGet, PermCancel, PermSubscribe, PermExtendedCard},
	}}
}

// Allows reports whether tier t has permission p.
func (p Policy) Allows(t Tier, perm Permission) bool {
	return slices.Contains(p.Allowed[t], perm)
}

// String renders the policy in the syntax [ParsePolicy] reads.
func (p Policy) String() string {
	var parts []string
	for _, t := range []Tier{TierPublic, TierTrusted, TierLocal} {
		perms, ok := p.Allowed[t]
		if !ok {
			continue
		}
		names := make([]string, 0, len(perms))
		for _, perm := range perms {
			names = append(names, perm.String())
		}
		if len(names) == 0 {
			names = []string{"none"}
		}
		parts = append(parts, t.String()+"="+strings.Join(names, ","))
	}
	return strings.Join(parts, ";")
}

// ParsePolicy reads a policy setting such as
//
//	public=send,get,cancel,subscribe;trusted=all
//
// Clauses are separated by ";", each is tier=permissions with permissions
// separated by ",". "all" and "none" stand for every and no permission.
// Tiers the setting does not mention keep their [DefaultPolicy] permissions,
// so "public=none" alone shuts out public callers and changes nothing else.
// An empty setting is the default policy.
func ParsePolicy(spec string) (Policy, error) {
	p := DefaultPolicy()
	if strings.TrimSpace(spec) == "" {
		return p, nil
	}
	seen := map[Tier]bool{}
	for _, clause := range strings.Split(spec, ";") {
		clause = strings.TrimSpace(clause)
		if clause == "" {
			continue // tolerate a trailing ";"
		}
		tierName, list, ok := strings.Cut(clause, "=")
		if !ok {
			return Policy{}, fmt.Errorf("security: policy clause %q has no \"=\"; write tier=perm,perm (e.g. public=send,get)", clause)
		}
		t, err := ParseTier(tierName)
		if err != nil {
			return Policy{}, fmt.Errorf("security: policy clause %q: %w", clause, err)
		}
		if seen[t] {
			return Policy{}, fmt.Errorf("security: policy names tier %q twice", t)
		}
		seen[t] = true
		perms, err := parsePermList(list)
		if err != nil {
			return Policy{}, fmt.Errorf("security: policy clause %q: %w", clause, err)
		}
		p.Allowed[t] = perms
	}
	return p, nil
}

func parsePermList(list string) ([]Permission, error) {
	list = strings.TrimSpace(list)
	switch strings.ToLower(list) {
	case "":
		return nil, fmt.Errorf("no permissions given; write none to grant nothing")
	case "all", "*":
		return AllPermissions(), nil
	case "none":
		return []Permission{}, nil
	}
	var out []Permission
	for _, name := range strings.Split(list, ",") {
		if strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("empty permission in %q", list)
		}
		perm, err := ParsePermission(name)
		if err != nil {
			return nil, err
		}
		if slices.Contains(out, perm) {
			return nil, fmt.Errorf("permission %q is listed twice", perm)
		}
		out = append(out, perm)
	}
	return out, nil
}

// TrustGate restricts who may run tasks at all, whatever their tier. A nil or
// empty gate lets everyone through. It is immutable and safe for concurrent
// use.
type TrustGate struct {
	exact    map[string]bool
	prefixes []string
	// minTier, when set, lets identities of at least this tier through.
	minTier *Tier
}

// WithMinTier returns a copy of g that also lets through every identity
// whose tier is at least t (e.g. the trusted callers of an OAuth issuer,
// whose identities are not known in advance).
func (g *TrustGate) WithMinTier(t Tier) *TrustGate {
	c := &TrustGate{minTier: &t}
	if g != nil {
		c.exact, c.prefixes = g.exact, g.prefixes
	}
	if c.exact == nil {
		c.exact = map[string]bool{}
	}
	return c
}

// NewTrustGate builds a gate from identities. Each entry is one of:
//
//   - a full identity ID such as "peer:alice", "ip:203.0.113.7" or
//     "local:127.0.0.1", matched exactly;
//   - a bare peer name such as "alice", short for "peer:alice";
//   - a kind with a wildcard such as "peer:*" or "local:*", matching every
//     identity of that kind.
//
// Spaces around entries are ignored; empty entries and entries with inner
// whitespace are refused. No entries means no restriction.
func NewTrustGate(ids []string) (*TrustGate, error) {
	g := &TrustGate{exact: map[string]bool{}}
	for _, raw := range ids {
		id := strings.TrimSpace(raw)
		if id == "" {
			return nil, fmt.Errorf("security: trust gate: empty identity in %q", ids)
		}
		if strings.ContainsAny(id, " \t\r\n") {
			return nil, fmt.Errorf("security: trust gate: identity %q contains whitespace", id)
		}
		kind, rest, hasKind := strings.Cut(id, ":")
		switch {
		case !hasKind:
			if err := checkPeerName(id); err != nil {
				return nil, fmt.Errorf("security: trust gate: %w", err)
			}
			g.exact["peer:"+id] = true
		case kind != "peer" && kind != "ip" && kind != "local" && kind != "anon" && kind != "oauth":
			return nil, fmt.Errorf("security: trust gate: identity %q has unknown kind %q (want peer:, ip:, local:, anon: or oauth:)", id, kind)
		case rest == "*":
			g.prefixes = append(g.prefixes, kind+":")
		case rest == "":
			return nil, fmt.Errorf("security: trust gate: identity %q is missing a name after the colon (use %s:* for all)", id, kind)
		default:
			g.exact[id] = true
		}
	}
	return g, nil
}

// ParseTrustGate builds a gate from a comma-separated list (see
// [NewTrustGate]). An empty string is a gate that lets everyone through.
func ParseTrustGate(s string) (*TrustGate, error) {
	if strings.TrimSpace(s) == "" {
		return &TrustGate{}, nil
	}
	return NewTrustGate(strings.Split(s, ","))
}

// Allows reports whether id may run tasks.
func (g *TrustGate) Allows(id Identity) bool {
	if g == nil || (len(g.exact) == 0 && len(g.prefixes) == 0 && g.minTier == nil) {
		return true
	}
	if g.minTier != nil && id.Tier >= *g.minTier {
		return true
	}
	if g.exact[id.ID] {
		return true
	}
	for _, p := range g.prefixes {
		if strings.HasPrefix(id.ID, p) {
			return true
		}
	}
	return false
}
