package tools

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/client"
	"github.com/a2a-plugin/a2a-plugin/internal/security"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// This file is the seam between the tools and internal/security: redaction,
// the SSRF guard and the delegation chain.

// redactText scrubs credential-shaped strings from outgoing text.
func redactText(s string) (string, int) {
	return security.Redact(s)
}

// newGuard returns the guard of the shared client: configured peers' hosts
// are allowed (the operator named them), everything else follows the
// loopback/private settings.
func newGuard(cfg Config, peerHosts []string) client.Guard {
	g := &addrGuard{allowLoopback: cfg.AllowLoopback, allowPrivate: cfg.AllowPrivate, allowHosts: map[string]bool{}}
	for _, h := range peerHosts {
		if h != "" {
			g.allowHosts[strings.ToLower(h)] = true
		}
	}
	return g
}

// checkUnconfiguredURL applies the SSRF rules to a URL that is not a
// configured peer, without the configured peers' host exemptions.
func checkUnconfiguredURL(ctx context.Context, cfg Config, raw string) error {
	g := &addrGuard{allowLoopback: cfg.AllowLoopback, allowPrivate: cfg.AllowPrivate}
	return g.CheckURL(ctx, raw)
}

// addrGuard is a local SSRF guard: it refuses unspecified, loopback
// (unless allowLoopback), private, CGNAT, unique-local and link-local
// (unless allowPrivate) and multicast addresses, checking names after
// resolution and dialing the checked address, so DNS rebinding cannot
// swap it. It stands in for security.SSRFGuard until that lands.
type addrGuard struct {
	allowLoopback, allowPrivate bool
	allowHosts                  map[string]bool
}

var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// checkAddr says why an address is refused, or nil.
func (g *addrGuard) checkAddr(ip netip.Addr) error {
	ip = ip.Unmap()
	switch {
	case ip.IsUnspecified():
		return fmt.Errorf("address %s is unspecified", ip)
	case ip.IsLoopback():
		if !g.allowLoopback {
			return fmt.Errorf("address %s is loopback (allow_loopback is off)", ip)
		}
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		if !g.allowPrivate {
			return fmt.Errorf("address %s is link-local (cloud metadata lives here; allow_private is off)", ip)
		}
	case ip.IsPrivate(), cgnat.Contains(ip):
		if !g.allowPrivate {
			return fmt.Errorf("address %s is private (allow_private is off)", ip)
		}
	case ip.IsMulticast(), ip.IsInterfaceLocalMulticast():
		return fmt.Errorf("address %s is multicast", ip)
	}
	return nil
}

// resolve returns the addresses of host (an IP literal or a name).
func (g *addrGuard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return []netip.Addr{ip}, nil
	}
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// CheckURL refuses a URL whose host is or resolves to a refused address.
func (g *addrGuard) CheckURL(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	host := strings.ToLower(u.Hostname())
	if g.allowHosts[host] {
		return nil
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		if !g.allowLoopback {
			return fmt.Errorf("host %s is loopback (allow_loopback is off)", host)
		}
		return nil
	}
	addrs, err := g.resolve(ctx, host)
	if err != nil {
		return fmt.Errorf("cannot resolve %s: %w", host, err)
	}
	for _, a := range addrs {
		if err := g.checkAddr(a); err != nil {
			return fmt.Errorf("%s: %w", host, err)
		}
	}
	return nil
}

// DialContext resolves, checks and dials the first allowed address.
func (g *addrGuard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if g.allowHosts[strings.ToLower(host)] {
		return d.DialContext(ctx, network, addr)
	}
	addrs, err := g.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	var refusal error
	for _, a := range addrs {
		if err := g.checkAddr(a); err != nil {
			refusal = err
			continue
		}
		return d.DialContext(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
	}
	if refusal == nil {
		refusal = fmt.Errorf("%s resolved to no address", host)
	}
	return nil, refusal
}

// Delegation chain metadata keys, as message metadata carries them.
const (
	metaChainID    = "a2a-plugin/chain-id"
	metaChainDepth = "a2a-plugin/chain-depth"
)

// Chain is a delegation chain: an id shared by every hop of one piece of
// delegated work and the number of hops so far.
type Chain struct {
	ID    string
	Depth int
}

type chainKey struct{}

// WithChain returns a context carrying the delegation chain of the work
// that is calling the tools (the bridge sets it for turns started by an
// inbound A2A task); outbound calls then continue that chain.
func WithChain(ctx context.Context, c Chain) context.Context {
	return context.WithValue(ctx, chainKey{}, c)
}

// ChainFromMetadata reads a chain from message metadata.
func ChainFromMetadata(md map[string]any) (Chain, bool) {
	id, _ := md[metaChainID].(string)
	if id == "" {
		return Chain{}, false
	}
	c := Chain{ID: id}
	switch d := md[metaChainDepth].(type) {
	case float64:
		c.Depth = int(d)
	case int:
		c.Depth = d
	case string:
		c.Depth, _ = strconv.Atoi(d)
	}
	return c, true
}

// nextChain returns the chain for one outbound call: the caller's chain
// (or a new one) one hop deeper, refused beyond maxDepth.
func nextChain(ctx context.Context, maxDepth int) (Chain, error) {
	c, ok := ctx.Value(chainKey{}).(Chain)
	if !ok || c.ID == "" {
		c = Chain{ID: newChainID()}
	}
	next := Chain{ID: c.ID, Depth: c.Depth + 1}
	if next.Depth > maxDepth {
		return next, fmt.Errorf("delegation depth %d would exceed the limit of %d (chain %s); answer from what you have instead of delegating further", next.Depth, maxDepth, c.ID)
	}
	return next, nil
}

// applyChain writes the chain into message metadata.
func applyChain(md map[string]any, c Chain) map[string]any {
	if md == nil {
		md = map[string]any{}
	}
	md[metaChainID] = c.ID
	md[metaChainDepth] = c.Depth
	return md
}

// recordDelegation tells the host's memory about finished delegated work,
// when the host offers RecordDelegation (best effort).
func (t *Toolset) recordDelegation(ctx context.Context, peer string, prep *prepared, o *outcome) {
	if t.deps.Host == nil || o.err != nil || !o.tr.done() {
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer cancel()
	_, err := t.deps.Host.RecordDelegation(cctx, &pb.RecordDelegationRequest{
		Peer: peer, RemoteTaskId: o.tr.taskID, RemoteContextId: o.tr.contextID, ChainId: prep.chainID,
		RequestSummary: oneLine(prep.text, 500), ResultSummary: oneLine(o.tr.answer(), 1000), State: o.tr.state.String(),
	})
	if err != nil && status.Code(err) != codes.Unimplemented {
		t.log.Debug("host did not record the delegation", "peer", peer, "error", err)
	}
}

// newChainID returns a fresh delegation chain id.
func newChainID() string { return a2a.NewID() }
