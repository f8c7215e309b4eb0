package plugin

import (
	"context"
	"errors"
	"fmt"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
)

// ConnectInProcess serves opts with Serve inside this process (go-plugin's
// test mode) and returns the go-plugin client a host reaches it with,
// attached through a ReattachConfig exactly as to a plugin process: the same
// handshake, plugin map, gRPC dial options and broker. It is the one
// in-process wiring, used by host-sdk's ServeInProcess and this package's
// own tests. The client's Kill (or Close of its ClientProtocol, then Kill)
// makes Serve return. log is the host side's logger (nil discards).
// timeout bounds how long Serve may take to start serving.
func ConnectInProcess(opts ServeOpts, log hclog.Logger, timeout time.Duration) (*goplugin.Client, error) {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	sctx, stopServing := context.WithCancel(context.Background())
	reattach := make(chan *goplugin.ReattachConfig, 1)
	closed := make(chan struct{})
	opts.Test = &goplugin.ServeTestConfig{Context: sctx, ReattachConfigCh: reattach, CloseCh: closed}
	go Serve(opts)

	var rc *goplugin.ReattachConfig
	select {
	case rc = <-reattach:
	case <-closed:
		stopServing()
		return nil, errors.New("plugin.Serve returned before serving")
	case <-time.After(timeout):
		stopServing()
		return nil, fmt.Errorf("plugin.Serve did not start serving within %s", timeout)
	}
	// Not go-plugin's "test" reattach: that one never kills, and polls our
	// own pid forever. This runner ends with the served plugin.
	rc.Test = false
	rc.ReattachFunc = func() (runner.AttachedRunner, error) {
		return &inProcessRunner{closed: closed, stop: stopServing}, nil
	}
	return goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig:  Handshake,
		Plugins:          PluginMap(log),
		Reattach:         rc,
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		Logger:           log,
		GRPCDialOptions:  DialOptions(),
	}), nil
}

// inProcessRunner is go-plugin's view of an in-process plugin: Wait ends
// when Serve returned, Kill makes it return.
type inProcessRunner struct {
	closed chan struct{}
	stop   context.CancelFunc
}

func (r *inProcessRunner) Wait(context.Context) error { <-r.closed; return nil }
func (r *inProcessRunner) Kill(context.Context) error {
	r.stop()
	<-r.closed
	return nil
}
func (r *inProcessRunner) ID() string { return "in-process" }
func (r *inProcessRunner) PluginToHost(network, addr string) (string, string, error) {
	return network, addr, nil
}
func (r *inProcessRunner) HostToPlugin(network, addr string) (string, string, error) {
	return network, addr, nil
}
