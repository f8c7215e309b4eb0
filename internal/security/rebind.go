package security

import (
	"net"
	"strings"
)

// SafeLocalHost reports whether a request's Host header (host or
// host:port) cannot come from a DNS-rebinding attack: an IP literal, a
// localhost name, or one of the extra names the operator configured (for
// example the public URL's host, lower case). A web page on a rebound DNS
// name sends that name as its Host, so a loopback caller that names any
// other host must not get the Local tier's access.
func SafeLocalHost(hostport string, extra map[string]bool) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if host == "" {
		return false
	}
	return net.ParseIP(host) != nil || host == "localhost" || strings.HasSuffix(host, ".localhost") || extra[host]
}
