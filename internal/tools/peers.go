package tools

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/a2a-plugin/a2a-plugin/internal/client"
	"github.com/a2a-plugin/a2a-plugin/internal/config"
)

// peerSet is the configured peers (with the client they share) and how
// an agent argument finds its peer: a configured name, the URL of a
// configured peer, or — when allowed, through the SSRF guard — another
// URL.
type peerSet struct {
	cfg    Config
	client *client.Client
	all    []*peerConf // config order
	byName map[string]*peerConf
}

// resolved is the target of a call: a configured peer or an ad-hoc URL,
// with the handle of this call (its trace) and the call's recorders.
type resolved struct {
	name string // configured name, or the URL
	conf *peerConf
	peer *client.Peer
	// rec is the chain of recorders of the call made to the peer.
	rec *callRecord
}

// target is the configured peer pc as a target of the call rec records:
// its handle carries the call's trace (Origin.call).
func (ps *peerSet) target(pc *peerConf, rec *callRecord) *resolved {
	return &resolved{name: pc.Name, conf: pc, peer: pc.peer.For(rec.org.call()), rec: rec}
}

// resolve maps an agent argument (a configured name, or a URL when
// allowed) to a target of the call rec records. The error text is ready
// for an is_error result.
func (ps *peerSet) resolve(ctx context.Context, rec *callRecord, arg, argName string) (*resolved, error) {
	arg = strings.TrimSpace(arg)
	if arg == "" {
		return nil, fmt.Errorf("argument %q is required: give a configured peer name (%s)%s", argName, ps.names(), ps.urlHint())
	}
	if pc, ok := ps.byName[strings.ToLower(arg)]; ok {
		return ps.target(pc, rec), nil
	}
	if !strings.Contains(arg, "://") {
		return nil, fmt.Errorf("argument %q: no configured peer is named %q; configured peers: %s%s", argName, arg, ps.names(), ps.urlHint())
	}
	if err := config.CheckPeerURL(arg); err != nil {
		return nil, fmt.Errorf("argument %q: %v", argName, err)
	}
	// A URL of a configured peer is that peer (with its credentials).
	for _, pc := range ps.all {
		if sameURL(pc.URL, arg) {
			return ps.target(pc, rec), nil
		}
	}
	if !ps.cfg.AllowUnconfigured {
		return nil, fmt.Errorf("argument %q: calling agents by URL is disabled (allow_unconfigured_urls, A2A_ALLOW_UNCONFIGURED_URLS, is off); use a configured peer: %s", argName, ps.names())
	}
	if err := checkUnconfiguredURL(ctx, ps.cfg, arg); err != nil {
		return nil, fmt.Errorf("argument %q: %s is refused by the SSRF guard: %v", argName, arg, err)
	}
	p := ps.client.Peer(client.Endpoint{URL: arg}).For(rec.org.call())
	return &resolved{name: arg, peer: p, rec: rec}, nil
}

// sameURL compares two URLs ignoring case of scheme/host and a trailing
// slash.
func sameURL(a, b string) bool {
	norm := func(s string) string {
		u, err := url.Parse(strings.TrimSpace(s))
		if err != nil {
			return s
		}
		return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host) + strings.TrimSuffix(u.Path, "/")
	}
	return norm(a) == norm(b)
}

// names lists the configured peer names for messages.
func (ps *peerSet) names() string {
	if len(ps.all) == 0 {
		return "none configured"
	}
	names := make([]string, len(ps.all))
	for i, p := range ps.all {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// urlHint says whether a URL may be used instead of a name.
func (ps *peerSet) urlHint() string {
	if ps.cfg.AllowUnconfigured {
		return ", or an agent URL such as https://agent.example.com"
	}
	return ""
}

// voiceOf is the voice of a peer named in a stored conversation: a
// configured peer's name, else the URL an agent was called by.
func (ps *peerSet) voiceOf(name string) peerVoice {
	pc := ps.byName[strings.ToLower(name)]
	return peerVoice{name: name, trusted: pc != nil && pc.Trust == config.TrustTrusted}
}
