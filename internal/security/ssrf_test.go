package security

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeResolver answers from a table; a host may get a different answer on
// each lookup (to simulate DNS rebinding).
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][][]string
	calls   map[string]int
}

func newFakeResolver(table map[string][]string) *fakeResolver {
	r := &fakeResolver{answers: map[string][][]string{}, calls: map[string]int{}}
	for h, addrs := range table {
		r.answers[h] = [][]string{addrs}
	}
	return r
}

func (r *fakeResolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seq, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	i := min(r.calls[host], len(seq)-1)
	r.calls[host]++
	var out []netip.Addr
	for _, a := range seq[i] {
		ip := netip.MustParseAddr(a)
		if network == "ip4" && !ip.Is4() || network == "ip6" && !ip.Is6() {
			continue
		}
		out = append(out, ip)
	}
	return out, nil
}

func TestSSRFCheckURLTable(t *testing.T) {
	res := newFakeResolver(map[string][]string{
		"public.example":   {"93.184.216.34", "2606:2800:220:1::1"},
		"loop.example":     {"127.0.0.1"},
		"private.example":  {"10.1.2.3"},
		"mixed.example":    {"93.184.216.34", "192.168.1.5"},
		"mapped.example":   {"::ffff:127.0.0.1"},
		"metadata.example": {"169.254.169.254"},
		"localhost":        {"127.0.0.1", "::1"},
	})
	strict := &SSRFGuard{Resolver: res}
	loopOK := &SSRFGuard{AllowLoopback: true, Resolver: res}
	privOK := &SSRFGuard{AllowPrivate: true, Resolver: res}
	listed := &SSRFGuard{AllowHosts: []string{"loop.example", "*.corp.example", "10.9.0.0/16", "127.0.0.2"}, Resolver: res}
	tests := []struct {
		name    string
		g       *SSRFGuard
		url     string
		wantErr string // "" = allowed
	}{
		{"public name", strict, "https://public.example/a2a", ""},
		{"public v4 literal", strict, "http://93.184.216.34:8080/", ""},
		{"public v6 literal", strict, "http://[2606:2800:220:1::1]/", ""},
		{"ftp scheme", strict, "ftp://public.example/", "only http and https"},
		{"file scheme", strict, "file:///etc/passwd", "only http and https"},
		{"no host", strict, "http:///x", "has no host"},
		{"loopback v4", strict, "http://127.0.0.1:9/", "loopback address; set A2A_ALLOW_LOOPBACK_URLS=true"},
		{"loopback v4 other", strict, "http://127.8.9.10/", "loopback"},
		{"loopback v6", strict, "http://[::1]/", "loopback"},
		{"mapped loopback literal", strict, "http://[::ffff:127.0.0.1]/", "loopback"},
		{"mapped loopback resolved", strict, "http://mapped.example/", "loopback"},
		{"IPv4-compatible loopback", strict, "http://[::127.0.0.1]/", "IPv4-compatible"},
		{"NAT64 private", strict, "http://[64:ff9b::10.0.0.1]/", "NAT64"},
		{"6to4 loopback", strict, "http://[2002:7f00:1::]/", "6to4"},
		{"localhost name", strict, "http://localhost:8080/", "loopback host name"},
		{"localhost subdomain", strict, "http://a.localhost/", "loopback host name"},
		{"localhost trailing dot", strict, "http://LOCALHOST./", "loopback host name"},
		{"name resolving to loopback", strict, "http://loop.example/", "host loop.example resolves to 127.0.0.1, a loopback address"},
		{"rfc1918", strict, "http://10.0.0.1/", "private address; set A2A_ALLOW_PRIVATE_URLS=true"},
		{"rfc1918 172", strict, "http://172.16.5.4/", "private"},
		{"rfc1918 192", strict, "http://192.168.0.1/", "private"},
		{"cgnat", strict, "http://100.64.0.1/", "carrier-grade NAT"},
		{"link-local v4", strict, "http://169.254.1.1/", "link-local"},
		{"link-local v6", strict, "http://[fe80::1]/", "link-local"},
		{"link-local v6 zone", strict, "http://[fe80::1%25eth0]/", "link-local"},
		{"unique local", strict, "http://[fd12:3456::1]/", "private"},
		{"unspecified v4", strict, "http://0.0.0.0/", "unspecified"},
		{"unspecified v6", strict, "http://[::]/", "unspecified"},
		{"multicast", strict, "http://224.0.0.1/", "multicast"},
		{"broadcast", strict, "http://255.255.255.255/", "broadcast"},
		{"documentation range", strict, "http://203.0.113.5/", "special-purpose"},
		{"metadata ip", privOK, "http://169.254.169.254/latest/meta-data/", "cloud metadata address; no setting allows it"},
		{"metadata ipv6", privOK, "http://[fd00:ec2::254]/", "cloud metadata"},
		{"metadata via name", privOK, "http://metadata.example/", "cloud metadata"},
		{"metadata google name", privOK, "http://metadata.google.internal/computeMetadata/v1/", "cloud metadata host"},
		{"decimal ip", strict, "http://2130706433/", "non-standard notation"},
		{"hex ip", strict, "http://0x7f.1/", "non-standard notation"},
		{"short ip", strict, "http://127.1/", "non-standard notation"},
		{"name resolving to private", strict, "http://private.example/", "private"},
		{"any refused address refuses", strict, "http://mixed.example/", "192.168.1.5"},
		{"unresolvable", strict, "http://nowhere.example/", "cannot resolve"},
		{"allow loopback literal", loopOK, "http://127.0.0.1:9/", ""},
		{"allow loopback name", loopOK, "http://localhost:9/", ""},
		{"allow loopback resolved", loopOK, "http://loop.example/", ""},
		{"allow loopback not private", loopOK, "http://10.0.0.1/", "private"},
		{"allow private", privOK, "http://10.0.0.1/", ""},
		{"allow private link-local", privOK, "http://169.254.1.1/", ""},
		{"allow private cgnat", privOK, "http://100.64.0.1/", ""},
		{"allow private not loopback", privOK, "http://127.0.0.1/", "loopback"},
		{"allowed host name", listed, "http://loop.example/", ""},
		{"allowed wildcard", listed, "http://a.b.corp.example/", ""},
		{"wildcard not apex", listed, "http://corp.example/", "cannot resolve"},
		{"allowed prefix", listed, "http://10.9.8.7/", ""},
		{"outside prefix", listed, "http://10.8.8.7/", "private"},
		{"allowed address", listed, "http://127.0.0.2/", ""},
		{"other loopback address", listed, "http://127.0.0.3/", "loopback"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.g.CheckURL(context.Background(), tt.url)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("CheckURL(%s) = %v, want allowed", tt.url, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("CheckURL(%s) = %v, want error mentioning %q", tt.url, err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), "cannot resolve") && !strings.Contains(err.Error(), "has no host") {
				if !errors.Is(err, ErrAddressNotAllowed) {
					t.Errorf("refusal does not wrap ErrAddressNotAllowed: %v", err)
				}
				if !strings.Contains(err.Error(), tt.url) {
					t.Errorf("refusal does not name the URL: %v", err)
				}
			}
		})
	}
}

func TestSSRFRefusalIsNotANetError(t *testing.T) {
	err := (&SSRFGuard{}).CheckURL(context.Background(), "http://127.0.0.1/")
	var ne net.Error
	if errors.As(err, &ne) {
		t.Fatal("refusal looks like a network error")
	}
	var se *SSRFError
	if !errors.As(err, &se) || se.IP != netip.MustParseAddr("127.0.0.1") || se.Setting != "A2A_ALLOW_LOOPBACK_URLS=true" {
		t.Fatalf("SSRFError = %+v", se)
	}
}

func TestSSRFValidate(t *testing.T) {
	good := &SSRFGuard{AllowHosts: []string{"agent.internal", "*.corp.example", "10.0.0.0/8", "::1", "[fe80::1]", "10.1.2.3"}}
	if err := good.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	bad := &SSRFGuard{AllowHosts: []string{"https://x.example", "x.example:8080", "10.0.0.0/33", "", "a b"}}
	err := bad.Validate()
	if err == nil {
		t.Fatal("Validate accepted bad entries")
	}
	for _, e := range bad.AllowHosts {
		if !strings.Contains(err.Error(), fmt.Sprintf("%q", e)) {
			t.Errorf("Validate error does not name %q: %v", e, err)
		}
	}
}

// listen starts a TCP listener on loopback that accepts and closes.
func listen(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln.Addr().String()
}

func TestSSRFDialContextChecksResolvedAddress(t *testing.T) {
	addr := listen(t)
	_, port, _ := net.SplitHostPort(addr)
	res := newFakeResolver(map[string][]string{"loop.example": {"127.0.0.1"}})
	ctx := context.Background()

	strict := &SSRFGuard{Resolver: res}
	if _, err := strict.DialContext(ctx, "tcp", addr); !errors.Is(err, ErrAddressNotAllowed) {
		t.Fatalf("strict dial to %s: %v", addr, err)
	}
	if _, err := strict.DialContext(ctx, "tcp", net.JoinHostPort("loop.example", port)); !errors.Is(err, ErrAddressNotAllowed) {
		t.Fatalf("strict dial to name resolving to loopback: %v", err)
	}
	loose := &SSRFGuard{AllowLoopback: true, Resolver: res}
	for _, target := range []string{addr, net.JoinHostPort("loop.example", port)} {
		c, err := loose.DialContext(ctx, "tcp", target)
		if err != nil {
			t.Fatalf("loopback-allowed dial to %s: %v", target, err)
		}
		c.Close()
	}
	listed := &SSRFGuard{AllowHosts: []string{"127.0.0.1"}}
	c, err := listed.DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatalf("allow-listed dial: %v", err)
	}
	c.Close()
}

func TestSSRFDNSRebindingIsCaughtAtDial(t *testing.T) {
	addr := listen(t)
	_, port, _ := net.SplitHostPort(addr)
	res := &fakeResolver{
		answers: map[string][][]string{"rebind.example": {{"93.184.216.34"}, {"127.0.0.1"}}},
		calls:   map[string]int{},
	}
	g := &SSRFGuard{Resolver: res}
	ctx := context.Background()
	if err := g.CheckURL(ctx, "http://rebind.example:"+port+"/"); err != nil {
		t.Fatalf("first answer (public) refused: %v", err)
	}
	_, err := g.DialContext(ctx, "tcp", net.JoinHostPort("rebind.example", port))
	if !errors.Is(err, ErrAddressNotAllowed) || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Fatalf("rebound dial = %v, want refusal naming 127.0.0.1", err)
	}
}

func TestSSRFControlRefusesAtConnectTime(t *testing.T) {
	addr := listen(t)
	g := &SSRFGuard{}
	d := &net.Dialer{Control: g.Control, Timeout: 2 * time.Second}
	_, err := d.Dial("tcp", addr)
	if !errors.Is(err, ErrAddressNotAllowed) {
		t.Fatalf("Control let %s through: %v", addr, err)
	}
	g.AllowLoopback = true
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("Control refused with AllowLoopback: %v", err)
	}
	c.Close()
}

func TestSSRFHTTPClientChecksRedirects(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/go" {
			u, _ := url.Parse("http://" + r.Host)
			_, port, _ := net.SplitHostPort(u.Host)
			http.Redirect(w, r, "http://localhost:"+port+"/landed", http.StatusFound)
			return
		}
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	g := &SSRFGuard{AllowHosts: []string{"127.0.0.1"}}
	client := g.HTTPClient(5 * time.Second)
	resp, err := client.Get(srv.URL + "/plain")
	if err != nil {
		t.Fatalf("allowed GET: %v", err)
	}
	resp.Body.Close()
	_, err = client.Get(srv.URL + "/go")
	if !errors.Is(err, ErrAddressNotAllowed) || !strings.Contains(err.Error(), "localhost") {
		t.Fatalf("redirect to localhost = %v, want refusal", err)
	}
	if tr := g.Transport(); tr.Proxy != nil {
		t.Fatal("guarded transport uses a proxy")
	}
}
