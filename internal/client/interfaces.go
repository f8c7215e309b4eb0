package client

import (
	"fmt"
	"strings"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// spoken reports whether this client speaks in: JSON-RPC at protocol 1.0
// or 0.3, HTTP+JSON and gRPC at 1.0 (their 0.3 forms — other paths,
// another proto package — are not spoken).
func spoken(in a2a.AgentInterface) bool {
	v03 := in.ProtocolVersion == a2a.ProtocolVersionV03 || strings.HasPrefix(in.ProtocolVersion, "0.")
	switch {
	case strings.EqualFold(in.ProtocolBinding, a2a.BindingJSONRPC):
		return in.ProtocolVersion == a2a.ProtocolVersion || in.ProtocolVersion == a2a.ProtocolVersionV03
	case strings.EqualFold(in.ProtocolBinding, a2a.BindingHTTPJSON), strings.EqualFold(in.ProtocolBinding, a2a.BindingGRPC):
		return in.ProtocolVersion == a2a.ProtocolVersion && !v03
	}
	return false
}

// pickInterface picks the interface this client uses:
//
//   - GRPC 1.0 when the card prefers it: it is the first interface in
//     card order (the specification's preference order) among those at
//     protocol 1.0 this client speaks;
//   - else JSON-RPC (protocol 1.0, else 0.3) when the card has one;
//   - else HTTP+JSON for protocol 1.0;
//   - else GRPC for protocol 1.0 (a gRPC-only agent).
func pickInterface(card *a2a.AgentCard) (a2a.AgentInterface, error) {
	for _, in := range card.SupportedInterfaces {
		if in.ProtocolVersion != a2a.ProtocolVersion || !spoken(in) {
			continue
		}
		if strings.EqualFold(in.ProtocolBinding, a2a.BindingGRPC) {
			return in, nil
		}
		break
	}
	for _, binding := range []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON, a2a.BindingGRPC} {
		if in, ok := card.PreferredInterface(binding); ok && spoken(in) {
			return in, nil
		}
	}
	return a2a.AgentInterface{}, fmt.Errorf("card offers no JSONRPC interface for protocol 1.0 or 0.3 and no HTTP+JSON or GRPC interface for protocol 1.0 (it offers: %s)",
		describeInterfaces(card))
}
