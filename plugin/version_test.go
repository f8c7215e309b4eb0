package plugin

import (
	"os"
	"path/filepath"
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

// TestLintChecksTheLatestReleasedContract keeps `make lint`'s buf breaking
// honest: the Makefile's RELEASED_CONTRACT is the newest image in
// proto/released, of this major, and no newer than the contract itself.
func TestLintChecksTheLatestReleasedContract(t *testing.T) {
	images, err := filepath.Glob("../proto/released/agentplugin-v*.binpb")
	if err != nil || len(images) == 0 {
		t.Fatalf("no released contract image in proto/released (%v): run make proto-release", err)
	}
	name := regexp.MustCompile(`agentplugin-v(\d+)\.(\d+)\.binpb$`)
	newest, newestMinor := "", -1
	for _, img := range images {
		m := name.FindStringSubmatch(img)
		if m == nil {
			t.Errorf("%s is not named agentplugin-vMAJOR.MINOR.binpb", img)
			continue
		}
		major, _ := strconv.Atoi(m[1])
		minor, _ := strconv.Atoi(m[2])
		if major == ProtocolMajor && minor > newestMinor {
			newest, newestMinor = filepath.Base(img), minor
		}
	}
	if newestMinor > ProtocolMinor {
		t.Errorf("%s is newer than the contract (%d.%d)", newest, ProtocolMajor, ProtocolMinor)
	}
	mk, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^RELEASED_CONTRACT\s*:=\s*proto/released/(\S+)\s*$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile sets no RELEASED_CONTRACT")
	}
	if string(m[1]) != newest {
		t.Errorf("the Makefile's RELEASED_CONTRACT is %s, but the newest released contract is %s", m[1], newest)
	}
}
