// Package hostsdk is what a Go agent host imports to run agentplugin plugins
// (proto/agentplugin/v1): it discovers executables in a plugins directory,
// launches each through the real go-plugin handshake with an explicit,
// allowlisted environment, describes, configures and connects it, serves the
// host callback service (HostService) through go-plugin's broker, and
// supervises the process: a crashed plugin is marked unavailable at once and
// restarted with a fresh go-plugin client and exponential backoff, until it
// crashes too often.
//
// The host gets typed handles — Plugin, with Platform and Toolset views that
// implement the interfaces of package plugin — which stay valid across
// restarts; calls through them fail fast with ErrUnavailable while the
// process is down.
//
//	m := hostsdk.NewManager(hostsdk.Options{Dir: "plugins", Host: myHost, DataDir: "state"})
//	if err := m.Start(ctx); err != nil { log.Print(err) } // the good plugins are loaded anyway
//	defer m.Close(context.Background())
//	tools, _ := m.Tools(ctx)
//	res, err := m.CallTool(ctx, &pb.CallToolRequest{Name: "a2a_call", ArgumentsJson: `{…}`}, nil)
//
// ServeInProcess runs a plugin implementation inside a test binary behind
// the same handles, so a plugin's whole contract (broker callback included)
// can be tested without building it.
package hostsdk
