package release_test

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// env returns a required environment variable make test-release sets.
func env(t *testing.T, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		t.Fatalf("%s is not set: run these tests with make test-release", name)
	}
	return v
}

// run runs a command and fails t with its output when it fails.
func run(t *testing.T, dir string, extraEnv []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), extraEnv...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// only returns the one file of the release matching pattern.
func only(t *testing.T, r release, pattern string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(r.dir, pattern))
	if len(m) != 1 {
		t.Fatalf("want one %s in the release, found %v", pattern, m)
	}
	return m[0]
}

func machineBinary(t *testing.T, r release) string {
	return filepath.Join(hostArchive(t, r), "a2a-plugin")
}

// TestPythonWheelInstallsIntoAVenvAndItsExampleHostRuns installs the
// wheel with pip into a fresh venv that sees Debian's grpcio
// (--system-site-packages), with no index, and runs the sdist's example
// host on the release's binary.
func TestPythonWheelInstallsIntoAVenvAndItsExampleHostRuns(t *testing.T) {
	r := theRelease(t)
	requireHostTarget(t)
	py := env(t, "PYTHON")
	work := t.TempDir()
	venv := filepath.Join(work, "venv")
	run(t, work, nil, py, "-m", "venv", "--system-site-packages", venv)
	vpy := filepath.Join(venv, "bin", "python")
	run(t, work, nil, vpy, "-m", "pip", "install", "--no-index", "--disable-pip-version-check", only(t, r, "agentplugin_host-*-py3-none-any.whl"))
	where := run(t, work, nil, vpy, "-c", "import agentplugin_host, agentplugin.v1; print(agentplugin_host.__file__)")
	if !strings.HasPrefix(strings.TrimSpace(where), venv) {
		t.Errorf("agentplugin_host comes from %s, not the venv", where)
	}
	sdist := unpack(t, only(t, r, "agentplugin-host-*.tar.gz"), t.TempDir())
	examples, _ := filepath.Glob(filepath.Join(sdist, "*", "examples", "echo_host.py"))
	if len(examples) != 1 {
		t.Fatalf("the sdist has no examples/echo_host.py: %v", examples)
	}
	cmd := exec.Command(vpy, examples[0], "--plugin", machineBinary(t, r), "--data", t.TempDir(), "--config", `{"port": 0}`)
	cmd.Dir = work
	url := served(t, cmd)
	if got := ask(t, url, "hello from the wheel"); !strings.Contains(got, "hello from the wheel") {
		t.Errorf("the Python echo host answered %q", got)
	}
}

// TestNodePackageInstallsAndItsExampleHostRuns installs the host
// library's npm tarball into a fresh project and runs the example host it
// carries on the release's binary; the types come with it.
func TestNodePackageInstallsAndItsExampleHostRuns(t *testing.T) {
	r := theRelease(t)
	requireHostTarget(t)
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "package.json"), []byte(`{"private": true, "type": "module"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, work, nil, "npm", "install", "--no-audit", "--no-fund", only(t, r, "a2a-plugin-host-sdk-*.tgz"))
	pkg := filepath.Join(work, "node_modules", "@a2a-plugin", "host-sdk")
	for _, f := range []string{"dist/index.js", "dist/index.d.ts", "examples/echo-host.mjs"} {
		if _, err := os.Stat(filepath.Join(pkg, f)); err != nil {
			t.Errorf("the package lacks %s: %v", f, err)
		}
	}
	cmd := exec.Command("node", filepath.Join(pkg, "examples", "echo-host.mjs"), "--plugin", machineBinary(t, r), "--port", "0")
	cmd.Dir = work
	url := served(t, cmd)
	if got := ask(t, url, "hello from npm"); !strings.Contains(got, "hello from npm") {
		t.Errorf("the Node echo host answered %q", got)
	}
}

// freePort is a loopback port nobody listens on (bound, then released).
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestHermesArchiveInstallsIntoAHermesHomeAndServes unpacks the Hermes
// archive, installs it with the install.py it carries (which picks this
// machine's binary), and runs the installed plugin in the Hermes
// stand-in's gateway (host-sdk/hermes/tests) with its fake model.
func TestHermesArchiveInstallsIntoAHermesHomeAndServes(t *testing.T) {
	r := theRelease(t)
	requireHostTarget(t)
	py := env(t, "PYTHON")
	dir := unpack(t, filepath.Join(r.dir, "a2a-plugin-hermes_"+r.version+".tar.gz"), t.TempDir())
	root := filepath.Join(dir, "a2a-plugin-hermes_"+r.version)
	home := t.TempDir()
	installed := strings.TrimSpace(run(t, root, nil, py, filepath.Join(root, "install.py"), "--hermes-home", home, "--quiet"))
	got, err := os.ReadFile(filepath.Join(installed, "bin", "a2a-plugin"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(root, "bin", runtime.GOOS+"-"+runtime.GOARCH, "a2a-plugin"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("install.py installed another binary than the archive's %s-%s one", runtime.GOOS, runtime.GOARCH)
	}
	port := freePort(t)
	cfg := map[string]any{
		"plugins": map[string]any{"enabled": []string{"a2a-plugin"}, "disabled": []string{"a2a-platform"},
			"entries": map[string]any{"a2a-plugin": map[string]any{"settings": map[string]any{"a2a": map[string]any{"port": port, "rate_limit": 0}}}}},
		"gateway":           map[string]any{"platforms": map[string]any{"a2a": map[string]any{"enabled": true}}},
		"platform_toolsets": map[string]any{"a2a": []string{"web", "a2a"}, "cli": []string{"hermes-cli", "a2a"}},
	}
	raw, _ := json.Marshal(cfg) // JSON is YAML
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	repo, err := testharness.ModuleRoot("")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, filepath.Join(repo, "host-sdk", "hermes", "tests", "standin_main.py"), "gateway")
	cmd.Dir = home
	cmd.Env = append(os.Environ(), "HERMES_HOME="+home)
	var up struct {
		Endpoints []string `json:"endpoints"`
		Error     string   `json:"error"`
	}
	testharness.StartAnnounced(t, cmd, &up, nil)
	if len(up.Endpoints) == 0 {
		t.Fatalf("the stand-in's a2a platform serves nothing: %s", up.Error)
	}
	if got := ask(t, strings.TrimSuffix(up.Endpoints[0], "/"), "hello from hermes"); !strings.Contains(got, "hello from hermes") {
		t.Errorf("the Hermes agent answered %q", got)
	}
}

// TestOpenClawPackageInstallsIntoTheRealOpenClawAndAnswers installs the
// release's OpenClaw package from its .tgz with OpenClaw's own `plugins
// install` into a fresh OpenClaw home of the pinned OpenClaw, starts the
// gateway on the OpenClaw tests' fake model and asks the agent over A2A.
func TestOpenClawPackageInstallsIntoTheRealOpenClawAndAnswers(t *testing.T) {
	r := theRelease(t)
	requireHostTarget(t)
	node, entry := env(t, "OPENCLAW_NODE"), env(t, "OPENCLAW_ENTRY")
	tgz := filepath.Join(r.dir, "a2a-plugin-openclaw-"+strings.TrimPrefix(r.version, "v")+".tgz")
	repo, err := testharness.ModuleRoot("")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join(repo, "testharness", "e2e", "release", "testdata", "openclaw-gateway.mjs"),
		filepath.Join(repo, "host-sdk", "openclaw", "test"))
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "OPENCLAW_ENTRY="+entry, "OPENCLAW_PLUGIN_STAGE="+tgz)
	var up struct {
		A2AURL string `json:"a2aURL"`
	}
	testharness.StartAnnounced(t, cmd, &up, nil)
	if up.A2AURL == "" {
		t.Fatal("the gateway gave no A2A URL")
	}
	if name := card(t, up.A2AURL); name != "Release Agent" {
		t.Errorf("the card names %q, want the configured Release Agent", name)
	}
	if got := ask(t, up.A2AURL, "hello from openclaw"); !strings.Contains(got, "fake reply: hello from openclaw") {
		t.Errorf("the OpenClaw agent answered %q", got)
	}
}
