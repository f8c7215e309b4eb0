package client

import (
	"fmt"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// TestEachCardGetsTheInterfaceAndTransportOfItsPreferredBinding pins the
// choice pickInterface and newTransport make for a card, so that adding a
// binding cannot change what an existing card is called with.
func TestEachCardGetsTheInterfaceAndTransportOfItsPreferredBinding(t *testing.T) {
	in := func(binding, version string) a2a.AgentInterface {
		return a2a.AgentInterface{URL: "https://peer/" + binding + "/" + version, ProtocolBinding: binding, ProtocolVersion: version}
	}
	var (
		rpc10  = in(a2a.BindingJSONRPC, a2a.ProtocolVersion)
		rpc03  = in(a2a.BindingJSONRPC, a2a.ProtocolVersionV03)
		rest10 = in(a2a.BindingHTTPJSON, a2a.ProtocolVersion)
		rest03 = in(a2a.BindingHTTPJSON, a2a.ProtocolVersionV03)
		grpc10 = in(a2a.BindingGRPC, a2a.ProtocolVersion)
		grpc03 = in(a2a.BindingGRPC, a2a.ProtocolVersionV03)
	)
	cases := []struct {
		name      string
		offered   []a2a.AgentInterface
		want      a2a.AgentInterface
		transport string
	}{
		{"JSON-RPC 1.0 before 0.3 whatever the card order", []a2a.AgentInterface{rpc03, rpc10}, rpc10, "*client.jsonrpcTransport"},
		{"JSON-RPC 0.3 when it is the only JSON-RPC", []a2a.AgentInterface{rest03, rpc03}, rpc03, "*client.v03Transport"},
		{"JSON-RPC before HTTP+JSON listed first", []a2a.AgentInterface{rest10, rpc10}, rpc10, "*client.jsonrpcTransport"},
		{"JSON-RPC 0.3 before HTTP+JSON 1.0", []a2a.AgentInterface{rest10, rpc03}, rpc03, "*client.v03Transport"},
		{"HTTP+JSON when no JSON-RPC", []a2a.AgentInterface{rest10, grpc10}, rest10, "*client.restTransport"},
		{"gRPC when the card lists it first", []a2a.AgentInterface{grpc10, rpc10, rest10}, grpc10, "*client.grpcTransport"},
		{"gRPC listed after a 0.3 interface still leads", []a2a.AgentInterface{rpc03, grpc10, rpc10}, grpc10, "*client.grpcTransport"},
		{"gRPC listed second does not lead", []a2a.AgentInterface{rpc10, grpc10}, rpc10, "*client.jsonrpcTransport"},
		{"gRPC alone", []a2a.AgentInterface{grpc10}, grpc10, "*client.grpcTransport"},
		{"gRPC 0.3 and HTTP+JSON 0.3 are not spoken", []a2a.AgentInterface{grpc03, rest03, rpc03}, rpc03, "*client.v03Transport"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := pickInterface(&a2a.AgentCard{SupportedInterfaces: c.offered})
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Fatalf("picked %s %s, want %s %s", got.ProtocolBinding, got.ProtocolVersion, c.want.ProtocolBinding, c.want.ProtocolVersion)
			}
			tr := newTransport(&conn{info: &CardInfo{Interface: got}})
			if typ := fmt.Sprintf("%T", tr); typ != c.transport {
				t.Errorf("transport %s, want %s", typ, c.transport)
			}
		})
	}
	if _, err := pickInterface(&a2a.AgentCard{SupportedInterfaces: []a2a.AgentInterface{grpc03, rest03}}); err == nil {
		t.Error("a card offering only gRPC 0.3 and HTTP+JSON 0.3 was given an interface")
	}
}
