package plugin

import (
	"os"
	"regexp"
	"strconv"
	"testing"
)

// TestProtocolMinorMatchesProto keeps ProtocolMajor/ProtocolMinor equal to
// the "protocol-version: MAJOR.MINOR" header of the .proto, so a field added
// to the contract cannot ship without bumping the minor both sides compare.
func TestProtocolMinorMatchesProto(t *testing.T) {
	src, err := os.ReadFile("../proto/agentplugin/v1/agentplugin.proto")
	if err != nil {
		t.Fatalf("read the contract: %v", err)
	}
	m := regexp.MustCompile(`(?m)^//\s*protocol-version:\s*(\d+)\.(\d+)\s*$`).FindSubmatch(src)
	if m == nil {
		t.Fatal(`agentplugin.proto has no "// protocol-version: MAJOR.MINOR" header line`)
	}
	major, _ := strconv.Atoi(string(m[1]))
	minor, _ := strconv.Atoi(string(m[2]))
	if major != ProtocolMajor || minor != ProtocolMinor {
		t.Fatalf("agentplugin.proto says protocol-version %d.%d but plugin.go has ProtocolMajor=%d ProtocolMinor=%d; update whichever is stale",
			major, minor, ProtocolMajor, ProtocolMinor)
	}
	if Handshake.ProtocolVersion != ProtocolMajor {
		t.Fatalf("Handshake.ProtocolVersion = %d, want ProtocolMajor %d", Handshake.ProtocolVersion, ProtocolMajor)
	}
}
