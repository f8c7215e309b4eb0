package tools

import (
	"context"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/client"
	"github.com/a2a-plugin/a2a-plugin/internal/config"
)

// PeerStatus is what an operator's view shows about one configured peer:
// its configuration (never its credentials), whether its card could be
// fetched, and the card.
type PeerStatus struct {
	Name  string
	URL   string
	Trust string
	// Signed says the peer's card must carry a signature that verifies.
	Signed bool
	// Credential says how the tools authenticate to it: "bearer token",
	// "header", "OAuth 2.0 client credentials", a bearer token from a file
	// or command, or "" for none (the secret itself is never exposed).
	Credential string
	// Reachable reports the last reachability check (a cheap card fetch,
	// shared with a2a_list and cached as long); Error says why not.
	Reachable bool
	// RateLimited says the peer answered the check with HTTP 429: it is
	// up and answering, but asks callers to slow down (not Reachable,
	// since its card could not be read, but not down either).
	RateLimited bool
	Error       string
	Checked     time.Time
	// Card is the peer's card as last fetched, nil when none was.
	Card *client.CardInfo
}

// Peers reports every configured peer in configuration order, checking
// reachability the way a2a_list does (in parallel, bounded by a short
// timeout, cached for a minute).
func (t *Toolset) Peers(ctx context.Context) []PeerStatus {
	if len(t.peers.all) == 0 {
		return nil
	}
	reach := t.checkReachability(ctx, t.sinks.record(Origin{}))
	out := make([]PeerStatus, 0, len(t.peers.all))
	for _, pc := range t.peers.all {
		r := reach[pc.Name]
		ps := PeerStatus{Name: pc.Name, URL: pc.URL, Trust: pc.Trust, Signed: pc.Signed || len(pc.CardKeys) > 0,
			Reachable: r.ok, RateLimited: r.rateLimited, Error: r.err, Checked: r.checked, Card: pc.peer.CachedCard()}
		if ps.Trust == "" {
			ps.Trust = config.TrustPublic
		}
		switch {
		case pc.Token != "":
			ps.Credential = "bearer token"
		case pc.Header != "":
			ps.Credential = "header"
		case pc.OAuth2 != nil:
			ps.Credential = "OAuth 2.0 client credentials"
		case pc.tokens != nil:
			ps.Credential = "bearer token (" + pc.tokens.what() + ")"
		}
		out = append(out, ps)
	}
	return out
}
