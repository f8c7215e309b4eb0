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
//
// # Transport security
//
// Every connection to a plugin — its own gRPC server and the host callback
// served through the broker — uses go-plugin's AutoMTLS: one-time
// certificates exchanged at launch, mutual TLS on every byte. On Unix the
// connections are Unix sockets in the temporary directory, which the
// socket's own permissions (from the umask) normally close to other users;
// AutoMTLS is what makes them safe when they do not (a 0 umask, or TCP on
// Windows). It does not protect against processes of the host's own user
// (or root): those can read the certificate from the plugin's environment
// and the memory of both processes anyway.
//
// What it costs was measured, and is small enough that it stays on
// (docs/performance.md, "Decisions the code refers to"). Switching it off
// safely would need the sockets in a 0700 directory the host creates
// (go-plugin's UnixSocketConfig with a RunnerFunc, which also moves the
// host's broker sockets there), so that only the host's user can connect.
package hostsdk
