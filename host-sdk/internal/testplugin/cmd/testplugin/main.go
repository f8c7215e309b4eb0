// Command testplugin is host-sdk's test plugin as a binary. Its name, version
// and handshake protocol version can be changed at link time:
//
//	go build -ldflags "-X main.version=2.0.0 -X main.protocolVersion=2" ./internal/testplugin/cmd/testplugin
package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/a2a-plugin/a2a-plugin/host-sdk/internal/testplugin"
	"github.com/a2a-plugin/a2a-plugin/plugin"
)

var (
	name    = "testplugin"
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
	logger := plugin.NewLogger(name) // before Serve: it writes to the real stderr
	plugin.Serve(testplugin.New(name, version, logger).ServeOpts())
}
