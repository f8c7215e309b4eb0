package client

import (
	"fmt"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// spoken reports whether this client speaks in (an entry of bindings):
// JSON-RPC at protocol 1.0 or 0.3, HTTP+JSON and gRPC at 1.0 (their 0.3
// forms — other paths, another proto package — are not spoken).
func spoken(in a2a.AgentInterface) bool {
	_, ok := bindingOf(in)
	return ok
}

// pickInterface picks the interface this client uses:
//
//   - GRPC 1.0 when the card prefers it: it is the first interface in
//     card order (the specification's preference order) among those at
//     protocol 1.0 this client speaks;
//   - else JSON-RPC (protocol 1.0, else 0.3) when the card has one;
//   - else HTTP+JSON for protocol 1.0;
//   - else GRPC for protocol 1.0 (a gRPC-only agent).
//
// The order of the last three is the order of bindings; GRPC is the one
// that leads.
func pickInterface(card *a2a.AgentCard) (a2a.AgentInterface, error) {
	for _, in := range card.SupportedInterfaces {
		if in.ProtocolVersion != a2a.ProtocolVersion || !spoken(in) {
			continue
		}
		if b, _ := bindingOf(in); b.leads {
			return in, nil
		}
		break
	}
	tried := map[string]bool{}
	for _, b := range bindings {
		if tried[b.name] {
			continue
		}
		tried[b.name] = true
		if in, ok := card.PreferredInterface(b.name); ok && spoken(in) {
			return in, nil
		}
	}
	return a2a.AgentInterface{}, fmt.Errorf("card offers no JSONRPC interface for protocol 1.0 or 0.3 and no HTTP+JSON or GRPC interface for protocol 1.0 (it offers: %s)",
		describeInterfaces(card))
}
