// Command testplugin is the test plugin (host-sdk/internal/testplugin) as a
// binary: host-sdk's process tests, testharness.TestPluginBinary and
// cmd/agenthost's tests launch it.
//
// Its name is the link-time name if set, else $TESTPLUGIN_NAME, else the
// executable's file name, so one binary copied under two names is two
// plugins. Name, version and handshake protocol version can be set at link
// time:
//
//	go build -ldflags "-X main.name=other -X main.version=2.0.0 -X main.protocolVersion=2" ./host-sdk/internal/testplugin/cmd/testplugin
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/a2a-plugin/a2a-plugin/host-sdk/internal/testplugin"
	"github.com/a2a-plugin/a2a-plugin/plugin"
)

var (
	name    = ""
	version = "1.0.0"
	// protocolVersion, when set, replaces the handshake's protocol major, to
	// build a plugin a host must refuse.
	protocolVersion = ""
)

func main() {
	if protocolVersion != "" {
		n, err := strconv.Atoi(protocolVersion)
		if err != nil {
			fmt.Fprintf(os.Stderr, "testplugin: bad protocolVersion %q\n", protocolVersion)
			os.Exit(2)
		}
		plugin.Handshake.ProtocolVersion = uint(n)
	}
	if name == "" {
		name = os.Getenv("TESTPLUGIN_NAME")
	}
	if name == "" {
		name = filepath.Base(os.Args[0])
	}
	logger := plugin.NewLogger(name) // before Serve: it writes to the real stderr
	plugin.Serve(testplugin.New(name, version, logger).ServeOpts())
}
