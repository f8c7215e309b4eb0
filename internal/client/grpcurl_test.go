package client

import "testing"

func TestResolveGRPCURL(t *testing.T) {
	for _, tc := range []struct{ card, raw, want string }{
		{"http://agent.example/.well-known/agent-card.json", "agent.example:50051", "http://agent.example:50051"},
		{"https://agent.example/.well-known/agent-card.json", "agent.example:50051", "https://agent.example:50051"},
		{"http://agent.example/", "127.0.0.1:9000", "http://127.0.0.1:9000"},
		{"http://agent.example/", "dns:///agent.example:443", "http://agent.example:443"},
		{"http://agent.example/", "grpcs://agent.example:8443", "https://agent.example:8443"},
		{"https://agent.example/", "grpc://agent.example:8080", "http://agent.example:8080"},
		{"http://agent.example/", "https://agent.example", "https://agent.example:443"},
		{"http://agent.example/", "http://agent.example/a2a", "http://agent.example:80"},
		{"http://agent.example/", "[::1]:9000", "http://[::1]:9000"},
	} {
		got, err := resolveGRPCURL(tc.card, tc.raw)
		if err != nil || got != tc.want {
			t.Errorf("resolveGRPCURL(%q, %q) = %q, %v; want %q", tc.card, tc.raw, got, err, tc.want)
		}
	}
	for _, raw := range []string{"unix:///tmp/a2a.sock", ":9000", "agent.example:http", "agent.example:99999"} {
		if got, err := resolveGRPCURL("http://agent.example/", raw); err == nil {
			t.Errorf("resolveGRPCURL(%q) = %q, want an error", raw, got)
		}
	}
}
