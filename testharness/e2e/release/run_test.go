package release_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// served starts cmd, whose stdout says "serving at URL" once it serves,
// and returns the URL; the process is stopped (SIGTERM, then killed) when
// the test ends. Its output goes to the test log on failure.
func served(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr testharness.SyncBuffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	urls := make(chan string, 1)
	var stdout testharness.SyncBuffer
	go func() { // owned by this test: ends when the process closes stdout
		sc := bufio.NewScanner(out)
		re := regexp.MustCompile(`serving at (http://\S+)`)
		for sc.Scan() {
			stdout.Write([]byte(sc.Text() + "\n"))
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case urls <- m[1]:
				default:
				}
			}
		}
		cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		if t.Failed() {
			t.Logf("%s stdout:\n%s\nstderr:\n%s", cmd.Path, stdout.String(), stderr.String())
		}
	})
	select {
	case u := <-urls:
		return strings.TrimSuffix(u, "/")
	case <-exited:
		t.Fatalf("%s exited before serving:\n%s\n%s", cmd.Path, stdout.String(), stderr.String())
	case <-time.After(3 * time.Minute):
		t.Fatalf("%s did not serve within 3 minutes:\n%s\n%s", cmd.Path, stdout.String(), stderr.String())
	}
	return ""
}

// card fetches url's Agent Card and returns its name.
func card(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var c struct {
		Name string `json:"name"`
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("agent card: HTTP %d", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	return c.Name
}

// ask sends text with a blocking SendMessage and returns the answer
// artifact's text (or the status message's).
func ask(t *testing.T, url, text string) string {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-%d","role":"ROLE_USER","parts":[{"text":%q}]},"configuration":{"returnImmediately":false}}}`, time.Now().UnixNano(), text)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var r struct {
		Result struct {
			Task struct {
				Status struct {
					State string `json:"state"`
				} `json:"status"`
				Artifacts []struct {
					Parts []struct {
						Text string `json:"text"`
					} `json:"parts"`
				} `json:"artifacts"`
			} `json:"task"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("SendMessage answered %s: %v", raw, err)
	}
	var b strings.Builder
	for _, a := range r.Result.Task.Artifacts {
		for _, p := range a.Parts {
			b.WriteString(p.Text)
		}
	}
	if r.Result.Task.Status.State != "TASK_STATE_COMPLETED" {
		t.Fatalf("SendMessage answered %s", raw)
	}
	return b.String()
}

// requireLinux skips the tests that run a binary on a machine the release
// has no archive of (they run the archive of the machine they are on).
func requireHostTarget(t *testing.T) {
	t.Helper()
	for _, tg := range targets {
		if tg.os == runtime.GOOS && tg.arch == runtime.GOARCH && runtime.GOOS != "windows" {
			return
		}
	}
	t.Skipf("no runnable archive for %s/%s", runtime.GOOS, runtime.GOARCH)
}

// TestArchivesAgenthostServesA2A: the archive of this machine, unpacked,
// is enough to serve A2A — agenthost runs the plugin beside it, answers
// --version with the release's version, and a message gets an answer.
func TestArchivesAgenthostServesA2A(t *testing.T) {
	r := theRelease(t)
	requireHostTarget(t)
	dir := hostArchive(t, r)
	for _, p := range programs {
		out, err := exec.Command(filepath.Join(dir, p), "--version").Output()
		if err != nil {
			t.Fatalf("%s --version: %v", p, err)
		}
		if !strings.HasPrefix(string(out), p+" "+r.version+"\n") || !strings.Contains(string(out), "contract          agentplugin 1.") {
			t.Errorf("%s --version says %q, want its name, %s and the contract", p, out, r.version)
		}
	}
	// As docs/install.md says: the plugin in a plugins directory of its own.
	plugins := filepath.Join(dir, "plugins")
	if err := os.Mkdir(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "a2a-plugin"), filepath.Join(plugins, "a2a-plugin")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(dir, "agenthost"), "run", "--plugins", plugins, "--data", t.TempDir(), "--agent", "echo")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "A2A_PORT=0")
	url := served(t, cmd)
	if name := card(t, url); name == "" {
		t.Error("the agent card has no name")
	}
	if got := ask(t, url, "hello from the release"); !strings.Contains(got, "hello from the release") {
		t.Errorf("the echo agent answered %q", got)
	}
}
