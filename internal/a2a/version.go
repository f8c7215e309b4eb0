package a2a

import "strings"

// Protocol versions and binding names as they appear on the wire.
const (
	// ProtocolVersion is the A2A version this package implements, as sent
	// in the A2A-Version header and AgentInterface.protocolVersion.
	ProtocolVersion = "1.0"
	// ProtocolVersionV03 is the previous protocol version still served.
	ProtocolVersionV03 = "0.3"

	// BindingJSONRPC is the JSON-RPC 2.0 over HTTP binding.
	BindingJSONRPC = "JSONRPC"
	// BindingHTTPJSON is the HTTP+JSON (REST) binding.
	BindingHTTPJSON = "HTTP+JSON"
	// BindingGRPC is the gRPC binding.
	BindingGRPC = "GRPC"

	// HeaderVersion is the request header carrying the protocol version.
	HeaderVersion = "A2A-Version"
	// HeaderExtensions is the header listing requested/activated extensions
	// (a2av03.HeaderExtensions is its 0.3 name).
	HeaderExtensions = "A2A-Extensions"
)

// NegotiateVersion decides which protocol version a request is served
// with, from its A2A-Version header and whether its method is a 0.3 name.
//
//   - "1.0" or "1.0.x" → "1.0"; "0.3" or "0.3.x" → "0.3" (patch ignored).
//   - empty header with a 0.3 method → "0.3", as the specification says
//     for a missing header.
//   - empty header with a v1.0 (PascalCase) method → "1.0". Strictly a
//     missing header means 0.3, under which these methods do not exist;
//     we choose to serve them as v1.0 rather than fail (the conformance
//     kit accepts either), because a client that uses v1.0 method names
//     can only mean v1.0.
//   - anything else ("99.0", "1.1", "1", garbage) → -32009
//     VersionNotSupported naming the requested version.
//
// A v1.0 header with a 0.3 method yields "1.0"; the caller decides
// whether to serve 0.3 methods under it.
func NegotiateVersion(header string, methodIsV03 bool) (string, *Error) {
	h := strings.TrimSpace(header)
	if h == "" {
		if methodIsV03 {
			return ProtocolVersionV03, nil
		}
		return ProtocolVersion, nil
	}
	major, rest, ok := strings.Cut(h, ".")
	if ok && isDigits(major) {
		minor, patch, hasPatch := strings.Cut(rest, ".")
		if isDigits(minor) && (!hasPatch || isDigits(patch)) {
			switch major + "." + minor {
			case ProtocolVersion:
				return ProtocolVersion, nil
			case ProtocolVersionV03:
				return ProtocolVersionV03, nil
			}
		}
	}
	return "", ErrVersionNotSupported(h)
}

// isDigits reports whether s is a non-empty run of ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
