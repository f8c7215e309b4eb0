package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Names of the servers the suite knows, in the order rounds visit them.
const (
	srvFloor      = "floor"
	srvFloorHop   = "floor-hop"
	srvOursMem    = "ours-mem"
	srvOursSQLite = "ours-sqlite"
	srvOursGRPC   = "ours-grpc"
	srvGoSDK      = "go-sdk"
	srvGoSDKGRPC  = "go-sdk-grpc"
	srvJSSDK      = "js-sdk"
	srvPyHost     = "py-host"
)

// defaultServers are the servers a plain `make bench` compares.
var defaultServers = []string{srvFloor, srvFloorHop, srvOursMem, srvOursSQLite, srvOursGRPC, srvGoSDK, srvGoSDKGRPC, srvJSSDK}

// allServers are every server the suite knows, in the order rounds visit
// them: the default ones and the Python host (make bench-python).
var allServers = append(append([]string{}, defaultServers...), srvPyHost)

// serverInfo describes each server for the report.
var serverInfo = map[string]string{
	srvFloor:      "net/http + encoding/json echo handler (the floor)",
	srvFloorHop:   "the floor answering each send after one gRPC round trip over a long-lived stream to a child process (the second floor: the cheapest form of our process layout)",
	srvOursGRPC:   "ours-mem over the gRPC binding (lf.a2a.v1.A2AService on the A2A port; a2a-load -transport grpc, one connection per client; send only)",
	srvGoSDKGRPC:  "a2a serve --transport grpc --echo (github.com/a2aproject/a2a-go/v2 v2.4.0; send only)",
	srvOursMem:    "agenthost + a2a-plugin, store: memory (HTTP → plugin → gRPC → host agent → gRPC Send → plugin → HTTP)",
	srvOursSQLite: "agenthost + a2a-plugin, store: sqlite (same round trip, durable store)",
	srvGoSDK:      "a2a serve --transport jsonrpc --echo (github.com/a2aproject/a2a-go/v2 v2.4.0)",
	srvJSSDK:      "node server-bench.mjs (@a2a-js/sdk 1.3.0 + express)",
	srvPyHost:     "host-sdk/python/examples/echo_host.py (the Python host SDK on Debian's python3) + a2a-plugin, store: sqlite (the same round trip as ours-sqlite, the host in Python)",
}

func isOurs(name string) bool {
	return name == srvOursMem || name == srvOursSQLite || name == srvOursGRPC
}

// overGRPC reports whether the load speaks gRPC to the server (which then
// runs the send mode only).
func overGRPC(name string) bool { return name == srvOursGRPC || name == srvGoSDKGRPC }

// runsPlugin reports whether the server is a host running a2a-plugin as a
// child process (its CPU counts as the server's too).
func runsPlugin(name string) bool { return isOurs(name) || name == srvPyHost }

// server is one running server under test.
type server struct {
	name    string
	cmd     *exec.Cmd
	base    string // http://127.0.0.1:port
	rpc     string // JSON-RPC endpoint (gRPC servers: host:port)
	dataDir string // ours: the host's data root
	started time.Time
	exited  chan struct{}
	waitErr error
	stdin   io.WriteCloser
	log     *os.File
	plugin  int // ours: the a2a-plugin process, once ready
	// extra are further processes whose CPU counts as the server's
	// (floor-hop's child).
	extra   []int
	stopped bool
}

// startOptions vary how a server is started.
type startOptions struct {
	dataDir string // ours: reuse this data root (default: a fresh one)
	clients int    // the most concurrent clients it will see
	// ours only (the cost measurements):
	store string // the store, instead of the one the name implies
	agent string // the host's --agent (default echo)
	// plugin are further lines of the plugin's settings (plugins.a2a),
	// host further top-level lines of the host's configuration (agents).
	plugin, host string
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// start launches server name and returns once the process runs (not yet
// ready: see ready).
func (b *bench) start(name string, o startOptions) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &server{name: name, base: fmt.Sprintf("http://127.0.0.1:%d", port), exited: make(chan struct{})}
	var cmd *exec.Cmd
	switch name {
	case srvFloor, srvFloorHop:
		cmd = exec.Command(b.self, "floor-server", "-addr", fmt.Sprintf("127.0.0.1:%d", port))
		if name == srvFloorHop {
			cmd.Args = append(cmd.Args, "-hop")
		}
		s.rpc = s.base + "/"
	case srvOursMem, srvOursSQLite, srvOursGRPC:
		store := "memory"
		if name == srvOursSQLite {
			store = "sqlite"
		}
		if o.store != "" {
			store = o.store
		}
		s.dataDir = o.dataDir
		if s.dataDir == "" {
			if s.dataDir, err = os.MkdirTemp(b.work, name+"-data-"); err != nil {
				return nil, err
			}
		}
		cfgPath := filepath.Join(b.work, fmt.Sprintf("host-%s-%d.yaml", name, port))
		if err := os.WriteFile(cfgPath, []byte(hostConfig(port, store, o.clients)+o.plugin+o.host), 0o600); err != nil {
			return nil, err
		}
		cmd = exec.Command(b.cfg.AgentHost, "run", "--plugins", b.cfg.Plugins, "--agent", orDefault(o.agent, "echo"),
			"--config", cfgPath, "--data", s.dataDir, "--log-level", "warn")
		s.rpc = s.base + "/"
		if name == srvOursGRPC {
			s.rpc = fmt.Sprintf("127.0.0.1:%d", port) // the card's GRPC interface: the A2A port
		}
	case srvPyHost:
		s.dataDir = o.dataDir
		if s.dataDir == "" {
			if s.dataDir, err = os.MkdirTemp(b.work, name+"-data-"); err != nil {
				return nil, err
			}
		}
		cfg := fmt.Sprintf(`{"host":"127.0.0.1","port":%d,"store":"sqlite","rate_limit":0,"max_streams_per_peer":%d}`, port, max(16, o.clients))
		cmd = exec.Command(b.cfg.Python, b.cfg.PyHost, "--plugin", filepath.Join(b.cfg.Plugins, "a2a-plugin"),
			"--data", s.dataDir, "--config", cfg, "--transport", b.cfg.PyTransport, "--log-level", "warn")
		s.rpc = s.base + "/"
	case srvGoSDK:
		cmd = exec.Command(b.cfg.GoSDK, "serve", "--transport", "jsonrpc", "--echo", "--quiet",
			"--host", "127.0.0.1", "--port", strconv.Itoa(port))
		s.rpc = s.base + "/"
	case srvGoSDKGRPC:
		// Its card is on a port of its own it does not tell when quiet:
		// readiness is the gRPC port accepting connections.
		cmd = exec.Command(b.cfg.GoSDK, "serve", "--transport", "grpc", "--echo", "--quiet",
			"--host", "127.0.0.1", "--port", strconv.Itoa(port))
		s.rpc = fmt.Sprintf("127.0.0.1:%d", port)
	case srvJSSDK:
		script, err := filepath.Abs(b.cfg.JSServer)
		if err != nil {
			return nil, err
		}
		cmd = exec.Command(b.cfg.Node, script, strconv.Itoa(port))
		cmd.Dir = filepath.Dir(script)
		s.rpc = s.base + "/a2a/jsonrpc"
	default:
		return nil, fmt.Errorf("unknown server %q (want one of %s)", name, strings.Join(allServers, ", "))
	}
	// A process group per server, so a stuck one can be stopped with its
	// children (the plugin under agenthost) and nothing else.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if s.log, err = os.OpenFile(filepath.Join(b.logDir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
		return nil, err
	}
	fmt.Fprintf(s.log, "==== %s %s\n", time.Now().Format(time.RFC3339), strings.Join(cmd.Args, " "))
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if name == srvJSSDK {
		// The JS server exits when its stdin closes: it cannot outlive us.
		if s.stdin, err = cmd.StdinPipe(); err != nil {
			s.log.Close()
			return nil, err
		}
	}
	s.cmd = cmd
	s.started = time.Now()
	if err := cmd.Start(); err != nil {
		s.log.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	return s, nil
}

// hostConfig is agenthost's configuration for our plugin: loopback, the
// chosen store, and the per-minute rate limit off (a load test is one
// identity sending thousands of requests a second). The stream cap per
// peer is raised to the load's concurrency. Everything else is the
// plugin's default, the audit log included.
func hostConfig(port int, store string, clients int) string {
	return fmt.Sprintf(`plugins:
  a2a:
    host: 127.0.0.1
    port: %d
    store: %s
    rate_limit: 0
    max_streams_per_peer: %d
`, port, store, max(16, clients))
}

// ready polls the Agent Card until it is served and returns the time since
// the process was started.
func (s *server) ready(timeout time.Duration) (time.Duration, error) {
	c := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	deadline := time.Now().Add(timeout)
	url := s.base + "/.well-known/agent-card.json"
	// probe reports whether the server answers: its Agent Card is served;
	// for go-sdk-grpc, whose card is on a port it does not tell, the gRPC
	// port accepts connections.
	probe := func() error {
		if s.name == srvGoSDKGRPC {
			conn, err := net.DialTimeout("tcp", s.rpc, time.Second)
			if err == nil {
				conn.Close()
			}
			return err
		}
		resp, err := c.Get(url)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		return nil
	}
	for {
		err := probe()
		if err == nil {
			d := time.Since(s.started)
			if runsPlugin(s.name) {
				s.plugin = childNamed(s.cmd.Process.Pid, "a2a-plugin")
			}
			if s.name == srvFloorHop {
				s.extra = children(s.cmd.Process.Pid)
			}
			return d, nil
		}
		select {
		case <-s.exited:
			return 0, fmt.Errorf("%s exited before it was ready (%v); see %s", s.name, s.waitErr, s.log.Name())
		default:
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%s not ready after %s (last: %v); see %s", s.name, timeout, err, s.log.Name())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// pids are the processes whose CPU counts as the server's: for ours the
// host and the plugin (the host plays the agent, whose work is part of the
// round trip).
func (s *server) pids() []int {
	p := []int{s.cmd.Process.Pid}
	if s.plugin != 0 {
		p = append(p, s.plugin)
	}
	return append(p, s.extra...)
}

// memPID is the process whose memory the report shows: the plugin for
// ours (the thing we ship), the server process for the others.
func (s *server) memPID() int {
	if s.plugin != 0 {
		return s.plugin
	}
	return s.cmd.Process.Pid
}

// cpu is the CPU time the server's processes have used so far.
func (s *server) cpu() (total, plugin time.Duration) {
	for _, pid := range s.pids() {
		d, err := procCPU(pid)
		if err != nil {
			continue
		}
		total += d
		if pid == s.plugin {
			plugin = d
		}
	}
	return total, plugin
}

func (s *server) mem() memKB {
	m, _ := procMem(s.memPID())
	return m
}

// stop ends the server gracefully (SIGTERM; agenthost drains its plugin),
// then its process group by force after a grace period.
func (s *server) stop() error {
	if s.stopped {
		return nil
	}
	s.stopped = true
	defer s.log.Close()
	if s.stdin != nil {
		s.stdin.Close()
	}
	select {
	case <-s.exited:
		return s.unexpectedExit()
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.exited
		return fmt.Errorf("%s did not stop within 10s of SIGTERM; killed", s.name)
	}
	// The plugin exits when its host does; make sure of it.
	if s.plugin != 0 {
		deadline := time.Now().Add(5 * time.Second)
		for processAlive(s.plugin) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if processAlive(s.plugin) {
			syscall.Kill(s.plugin, syscall.SIGKILL)
			return fmt.Errorf("%s: a2a-plugin (pid %d) outlived its host; killed", s.name, s.plugin)
		}
	}
	return nil
}

func (s *server) unexpectedExit() error {
	return fmt.Errorf("%s exited during the run (%v); see %s", s.name, s.waitErr, s.log.Name())
}

// processAlive reports whether pid exists and is not a zombie.
func processAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f, err := statFields(b)
	return err == nil && f[0] != "Z" && f[0] != "X"
}

// storedTasks asks a server how many tasks it holds (ListTasks totalSize).
func (s *server) storedTasks() (int64, error) {
	body := `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"pageSize":1}}`
	req, _ := http.NewRequest(http.MethodPost, s.rpc, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var out struct {
		Result *struct {
			TotalSize int64 `json:"totalSize"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := jsonDecode(resp.Body, &out); err != nil {
		return 0, err
	}
	if out.Result == nil {
		msg := "no result"
		if out.Error != nil {
			msg = out.Error.Message
		}
		return 0, errors.New("ListTasks: " + msg)
	}
	return out.Result.TotalSize, nil
}
