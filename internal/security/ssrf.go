package security

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Settings named in SSRF refusals, as the configuration spells them.
const (
	EnvAllowLoopbackURLs = "A2A_ALLOW_LOOPBACK_URLS"
	EnvAllowPrivateURLs  = "A2A_ALLOW_PRIVATE_URLS"
)

// ErrAddressNotAllowed is wrapped by every refusal of an [SSRFGuard].
var ErrAddressNotAllowed = errors.New("address not allowed")

// ErrUnresolved is wrapped by [SSRFGuard.CheckURL]'s error when the host
// name could not be resolved: nothing is known about its addresses yet,
// which is no refusal (errors.Is(err, ErrAddressNotAllowed) is false).
var ErrUnresolved = errors.New("the host name could not be resolved")

// SSRFError is a refusal by an [SSRFGuard]. It is deliberately not a
// net.Error, so callers can tell a refusal from a network failure.
type SSRFError struct {
	// URL is the URL refused, when a URL was checked.
	URL string
	// Host is the host name or address of the URL or dial target; empty
	// when the URL was refused for its scheme.
	Host string
	// IP is the refused address; invalid when the name itself was refused.
	IP netip.Addr
	// Reason says what the address is ("a loopback address").
	Reason string
	// Setting is what would allow it ("A2A_ALLOW_LOOPBACK_URLS=true"), or
	// empty when only the guard's host allow-list can.
	Setting string
}

// Error says what was refused, why, and which setting would allow it.
func (e *SSRFError) Error() string {
	var b strings.Builder
	b.WriteString("security: refused ")
	if e.URL != "" {
		fmt.Fprintf(&b, "URL %q", e.URL)
	} else {
		fmt.Fprintf(&b, "connection to %q", e.Host)
	}
	b.WriteString(": ")
	if e.Host == "" {
		b.WriteString(e.Reason)
		return b.String()
	}
	_, notIP := netip.ParseAddr(strings.Trim(e.Host, "[]"))
	hostIsIP := notIP == nil
	switch {
	case !e.IP.IsValid() || hostIsIP:
		fmt.Fprintf(&b, "%s is %s", e.Host, e.Reason)
	default:
		fmt.Fprintf(&b, "host %s resolves to %s, %s", e.Host, e.IP, e.Reason)
	}
	if e.Setting != "" {
		fmt.Fprintf(&b, "; set %s to allow it", e.Setting)
	} else {
		b.WriteString("; no setting allows it (only an explicit host allow-list entry does)")
	}
	return b.String()
}

// Unwrap makes errors.Is(err, ErrAddressNotAllowed) true.
func (e *SSRFError) Unwrap() error { return ErrAddressNotAllowed }

// Resolver looks up the addresses of a host; *net.Resolver implements it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// SSRFGuard keeps outbound requests (peer calls, push-notification
// webhooks) away from the machine and its networks. It refuses
//
//   - schemes other than http and https;
//   - loopback addresses and localhost names, unless AllowLoopback;
//   - private (RFC 1918, fc00::/7), CGNAT (100.64.0.0/10), link-local
//     (169.254.0.0/16, fe80::/10) and other non-global unicast ranges,
//     unless AllowPrivate;
//   - always: unspecified, multicast, broadcast and reserved addresses,
//     cloud metadata endpoints (169.254.169.254, fd00:ec2::254,
//     100.100.100.200, metadata.google.internal …) and host names that are
//     numbers in disguise (2130706433, 0x7f.1, 127.1);
//
// looking through IPv4-mapped, IPv4-compatible, NAT64 and 6to4 IPv6
// addresses to the IPv4 address inside. A host matching AllowHosts skips
// every address check. [SSRFGuard.CheckURL] resolves the host and refuses
// the URL if any of its addresses is refused; [SSRFGuard.DialContext]
// resolves again and connects only to an address it has just checked, so a
// DNS answer that changes between check and connect (DNS rebinding) gains
// nothing. The zero value is the strictest guard and is ready to use; a
// guard is safe for concurrent use as long as its fields are not changed.
type SSRFGuard struct {
	// AllowLoopback allows loopback addresses and localhost names.
	AllowLoopback bool
	// AllowPrivate allows private, CGNAT, link-local and other non-global
	// unicast addresses (never metadata endpoints).
	AllowPrivate bool
	// AllowHosts lists hosts exempt from the address checks: host names
	// ("agent.internal"), wildcard subdomains ("*.corp.example"), addresses
	// ("10.1.2.3") and prefixes ("10.20.0.0/16"). Case-insensitive; ports
	// are not part of an entry. See [SSRFGuard.Validate].
	AllowHosts []string
	// Resolver resolves host names; nil means net.DefaultResolver.
	Resolver Resolver
	// Dialer is copied for every connection DialContext makes; nil means a
	// dialer with a 10 s timeout and 30 s keep-alive.
	Dialer *net.Dialer
}

// Validate reports AllowHosts entries that can never match, such as URLs,
// entries with ports and malformed prefixes.
func (g *SSRFGuard) Validate() error {
	var bad []string
	for _, h := range g.AllowHosts {
		e := strings.TrimSpace(h)
		if !isPrefixEntry(e) && !isIPEntry(e) && !isHostEntry(e) {
			bad = append(bad, h)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("security: allowed hosts %q are not host names, addresses or CIDR prefixes (write them without scheme, port or path)", bad)
	}
	return nil
}

func isPrefixEntry(e string) bool {
	_, err := netip.ParsePrefix(e)
	return err == nil
}

func isIPEntry(e string) bool {
	_, err := netip.ParseAddr(strings.Trim(e, "[]"))
	return err == nil
}

// isHostEntry accepts "name.example" and "*.name.example".
func isHostEntry(e string) bool {
	e = strings.TrimSuffix(strings.TrimPrefix(e, "*."), ".")
	if e == "" || len(e) > 253 {
		return false
	}
	for _, label := range strings.Split(e, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// normaliseHost lowercases a host and drops brackets and a trailing dot.
func normaliseHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
}

// hostAllowed reports whether AllowHosts exempts host (a name or address).
func (g *SSRFGuard) hostAllowed(host string) bool {
	ip, ipErr := netip.ParseAddr(host)
	for _, raw := range g.AllowHosts {
		e := normaliseHost(strings.TrimSpace(raw))
		switch {
		case e == "":
		case e == host:
			return true
		case strings.HasPrefix(e, "*."):
			if strings.HasSuffix(host, e[1:]) && len(host) > len(e)-1 {
				return true
			}
		case ipErr == nil:
			if p, err := netip.ParsePrefix(e); err == nil && p.Contains(ip.Unmap()) {
				return true
			}
			if a, err := netip.ParseAddr(e); err == nil && a.Unmap() == ip.Unmap() {
				return true
			}
		}
	}
	return false
}

// ipAllowed reports whether an AllowHosts address or prefix covers ip.
func (g *SSRFGuard) ipAllowed(ip netip.Addr) bool {
	if len(g.AllowHosts) == 0 {
		return false
	}
	return g.hostAllowed(ip.WithZone("").String())
}

var (
	metadataAddrs = []netip.Addr{
		netip.MustParseAddr("169.254.169.254"), // AWS, GCP, Azure, OpenStack, …
		netip.MustParseAddr("169.254.169.253"), // AWS DNS
		netip.MustParseAddr("169.254.170.2"),   // AWS ECS task metadata
		netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
		netip.MustParseAddr("fd00:ec2::254"),   // AWS IPv6
		netip.MustParseAddr("fd00:ec2::253"),
	}
	metadataNames = map[string]bool{
		"metadata.google.internal": true, "metadata.goog": true, "metadata": true,
		"instance-data": true, "instance-data.ec2.internal": true, "metadata.azure.internal": true,
	}
	loopbackNames = map[string]bool{
		"localhost": true, "localhost.localdomain": true, "ip6-localhost": true, "ip6-loopback": true,
	}

	pCGNAT     = netip.MustParsePrefix("100.64.0.0/10")
	pThisNet   = netip.MustParsePrefix("0.0.0.0/8")
	pReserved4 = netip.MustParsePrefix("240.0.0.0/4")
	pNAT64     = netip.MustParsePrefix("64:ff9b::/96")
	pNAT64Loc  = netip.MustParsePrefix("64:ff9b:1::/48")
	p6to4      = netip.MustParsePrefix("2002::/16")
	pTeredo    = netip.MustParsePrefix("2001::/32")
	pCompat4   = netip.MustParsePrefix("::/96")
	pSiteLocal = netip.MustParsePrefix("fec0::/10")
)

// classify says why ip is refused and which setting would allow it; ok is
// true when the guard's flags allow it.
func (g *SSRFGuard) classify(ip netip.Addr) (reason, setting string, ok bool) {
	ip = ip.WithZone("").Unmap()
	if ip.Is6() {
		if v4, how := embeddedIPv4(ip); v4.IsValid() {
			r, s, ok := g.classify(v4)
			if ok {
				return "", "", true
			}
			return fmt.Sprintf("%s (the %s address %s inside it)", r, how, v4), s, false
		}
		if pTeredo.Contains(ip) {
			return "a Teredo tunnel address", "", false
		}
	}
	for _, m := range metadataAddrs {
		if ip == m {
			return "a cloud metadata address", "", false
		}
	}
	switch {
	case ip.IsUnspecified() || pThisNet.Contains(ip):
		return "an unspecified address", "", false
	case ip.IsLoopback():
		if g.AllowLoopback {
			return "", "", true
		}
		return "a loopback address", EnvAllowLoopbackURLs + "=true", false
	case ip.IsMulticast() || ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}) || pReserved4.Contains(ip):
		return "a multicast, broadcast or reserved address", "", false
	case ip.IsPrivate():
		return g.private("a private address")
	case pCGNAT.Contains(ip):
		return g.private("a carrier-grade NAT address")
	case ip.IsLinkLocalUnicast():
		return g.private("a link-local address")
	case pSiteLocal.Contains(ip):
		return g.private("a site-local address")
	case !ip.IsGlobalUnicast() || isSpecialPurpose(ip):
		return g.private("a special-purpose address")
	}
	return "", "", true
}

func (g *SSRFGuard) private(reason string) (string, string, bool) {
	if g.AllowPrivate {
		return "", "", true
	}
	return reason, EnvAllowPrivateURLs + "=true", false
}

// specialPurpose lists IANA special-purpose ranges that IsGlobalUnicast
// still calls global: documentation, benchmarking, protocol assignments.
var specialPurpose = []netip.Prefix{
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("100::/64"),
	netip.MustParsePrefix("2001:10::/28"),
	netip.MustParsePrefix("2001:20::/28"),
}

func isSpecialPurpose(ip netip.Addr) bool {
	for _, p := range specialPurpose {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// embeddedIPv4 returns the IPv4 address an IPv6 address carries and how.
func embeddedIPv4(ip netip.Addr) (netip.Addr, string) {
	b := ip.As16()
	switch {
	case pNAT64.Contains(ip) || pNAT64Loc.Contains(ip):
		return netip.AddrFrom4([4]byte(b[12:16])), "NAT64"
	case p6to4.Contains(ip):
		return netip.AddrFrom4([4]byte(b[2:6])), "6to4"
	case pCompat4.Contains(ip) && !ip.IsUnspecified() && !ip.IsLoopback():
		return netip.AddrFrom4([4]byte(b[12:16])), "IPv4-compatible"
	}
	return netip.Addr{}, ""
}

// disguisedNumber reports whether a host name is an IPv4 address in a form
// net/netip refuses but some resolvers accept: "2130706433", "0x7f.1",
// "0177.0.0.1", "127.1".
func disguisedNumber(host string) bool {
	labels := strings.Split(host, ".")
	if len(labels) > 4 {
		return false
	}
	for _, l := range labels {
		if l == "" {
			return false
		}
		digits := l
		if strings.HasPrefix(l, "0x") {
			digits = l[2:]
			for _, c := range digits {
				if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
					return false
				}
			}
			continue
		}
		for _, c := range digits {
			if c < '0' || c > '9' {
				return false
			}
		}
	}
	return true
}

// checkName refuses a host name by what it says, before any lookup.
func (g *SSRFGuard) checkName(host string) *SSRFError {
	switch {
	case metadataNames[host]:
		return &SSRFError{Host: host, Reason: "a cloud metadata host"}
	case loopbackNames[host] || strings.HasSuffix(host, ".localhost"):
		if !g.AllowLoopback {
			return &SSRFError{Host: host, Reason: "a loopback host name", Setting: EnvAllowLoopbackURLs + "=true"}
		}
	case disguisedNumber(host):
		return &SSRFError{Host: host, Reason: "an IP address in a non-standard notation; write it as a dotted quad"}
	}
	return nil
}

func (g *SSRFGuard) lookup(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r := g.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupNetIP(ctx, network, host)
	if err == nil && len(addrs) == 0 {
		err = &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
	}
	return addrs, err
}

// checkAddr returns the refusal for ip (reached through host), or nil.
func (g *SSRFGuard) checkAddr(host string, ip netip.Addr) *SSRFError {
	if g.ipAllowed(ip) {
		return nil
	}
	if reason, setting, ok := g.classify(ip); !ok {
		return &SSRFError{Host: host, IP: ip.WithZone(""), Reason: reason, Setting: setting}
	}
	return nil
}

// CheckURL refuses rawURL unless it is http(s) and its host, and every
// address the host resolves to, is allowed. Refusals are *SSRFError
// (errors.Is ErrAddressNotAllowed); a failed lookup is returned as the
// resolver's error.
func (g *SSRFGuard) CheckURL(ctx context.Context, rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("security: invalid URL %q: %w", rawURL, err)
	}
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
		return &SSRFError{URL: rawURL, Reason: fmt.Sprintf("only http and https URLs are allowed, not %q", u.Scheme)}
	}
	host := normaliseHost(u.Hostname())
	if host == "" {
		return fmt.Errorf("security: URL %q has no host", rawURL)
	}
	if g.hostAllowed(host) {
		return nil
	}
	fail := func(e *SSRFError) error {
		e.URL = rawURL
		return e
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if e := g.checkAddr(host, ip); e != nil {
			return fail(e)
		}
		return nil
	}
	if e := g.checkName(host); e != nil {
		return fail(e)
	}
	if g.AllowLoopback && (loopbackNames[host] || strings.HasSuffix(host, ".localhost")) {
		return nil
	}
	addrs, err := g.lookup(ctx, "ip", host)
	if err != nil {
		return fmt.Errorf("security: cannot resolve the host of %q: %w (%w)", rawURL, ErrUnresolved, err)
	}
	for _, a := range addrs {
		if e := g.checkAddr(host, a); e != nil {
			return fail(e)
		}
	}
	return nil
}

// PrecheckURL is CheckURL for a URL registered now and used later (a
// webhook): it refuses only what is certainly forbidden — a scheme other
// than http(s), a URL without a host, a literal address or a host name the
// guard refuses, a name that resolves to a refused address — and lets a
// name that cannot be resolved at the moment pass. A transient DNS failure
// must not refuse a valid URL, and what the name resolves to later is
// checked where it matters: DialContext checks the address each
// connection really goes to, at the time it connects.
func (g *SSRFGuard) PrecheckURL(ctx context.Context, rawURL string) error {
	err := g.CheckURL(ctx, rawURL)
	if errors.Is(err, ErrUnresolved) {
		return nil
	}
	return err
}

// DialContext connects like net.Dialer.DialContext, but only to addresses
// the guard allows: it resolves the host itself, drops refused addresses and
// dials the remaining ones by address, with [SSRFGuard.Control] checking
// again at connect time. Install it as http.Transport.DialContext (and set
// Proxy to nil: a proxy would connect on our behalf, past the guard).
func (g *SSRFGuard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	rawHost, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("security: dial %q: %w", addr, err)
	}
	host := normaliseHost(rawHost)
	d := g.dialer()
	if g.hostAllowed(host) {
		return d.DialContext(ctx, network, addr)
	}
	d.Control = g.Control
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip}
	} else {
		if e := g.checkName(host); e != nil {
			return nil, e
		}
		lookupNet := "ip"
		switch network {
		case "tcp4", "udp4":
			lookupNet = "ip4"
		case "tcp6", "udp6":
			lookupNet = "ip6"
		}
		if addrs, err = g.lookup(ctx, lookupNet, host); err != nil {
			return nil, err
		}
	}
	var refusal *SSRFError
	var lastErr error
	for _, a := range addrs {
		if e := g.checkAddr(host, a); e != nil {
			if refusal == nil {
				refusal = e
			}
			continue
		}
		conn, err := d.DialContext(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
		if err == nil {
			return conn, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	if lastErr != nil {
		return nil, lastErr
	}
	return nil, refusal
}

func (g *SSRFGuard) dialer() *net.Dialer {
	if g.Dialer != nil {
		d := *g.Dialer
		return &d
	}
	return &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
}

// Control is a net.Dialer Control function that refuses to connect to an
// address the guard does not allow. It sees the address actually being
// connected to, after any resolution, so it also protects dialers that
// resolve names themselves. Host-name entries of AllowHosts cannot apply
// here (only addresses are known); use DialContext for those.
func (g *SSRFGuard) Control(network, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		host = address
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return &SSRFError{Host: address, Reason: "not an IP address at connect time"}
	}
	if e := g.checkAddr(host, ip); e != nil {
		return e
	}
	return nil
}

// Transport returns a clone of http.DefaultTransport that dials through the
// guard and uses no proxy.
func (g *SSRFGuard) Transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.DialContext = g.DialContext
	return t
}

// HTTPClient returns a client that dials through the guard, checks every
// redirect target with CheckURL and follows at most 5 redirects.
func (g *SSRFGuard) HTTPClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Transport: g.Transport(),
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return fmt.Errorf("security: stopped after %d redirects", len(via))
			}
			return g.CheckURL(req.Context(), req.URL.String())
		},
	}
}
