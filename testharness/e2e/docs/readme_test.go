package docs_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/push"
	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// readmes are the files whose commands must run as written.
var readmes = []string{"README.md", "testharness/README.md", "docs/mcp.md"}

// TestREADMECommands runs every shell command of the READMEs, in order, in
// a fresh copy of the repository, as a new user would, and checks the
// output the README documents. A README edit that breaks a command, or a
// code change that changes documented output, fails here.
func TestREADMECommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the project and runs agents")
	}
	root, err := testharness.ModuleRoot("")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range readmes {
		t.Run(name, func(t *testing.T) {
			var run []*block
			for _, b := range readmeBlocks(t, root, name) {
				if b.runnable() {
					run = append(run, b)
				}
			}
			if len(run) == 0 {
				t.Fatalf("%s has no shell block", name)
			}
			s := newSession(t, root, run)
			for _, b := range run {
				s.run(b)
			}
			s.checkClean()
		})
	}
}

// TestREADMEDirectivesAreKnown: a misspelled directive would silently stop
// a command from running as meant.
func TestREADMEDirectivesAreKnown(t *testing.T) {
	root, err := testharness.ModuleRoot("")
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{"background": true, "until": true, "output": true, "exit": true, "setup": true, "check": true, "skip": true}
	for _, name := range readmes {
		for _, b := range readmeBlocks(t, root, name) {
			for _, bb := range []*block{b, b.output} {
				if bb == nil {
					continue
				}
				for k := range bb.dir {
					if !known[k] {
						t.Errorf("%s: unknown directive %q (known: background, until, output, exit, setup, check, skip)", bb.where(), k)
					}
				}
			}
			if b.lang == "" && b.output == nil && len(b.dir) > 0 {
				t.Errorf("%s: directives on a block without a language", b.where())
			}
		}
	}
}

// readmeBlocks reads and parses the README name of the repository.
func readmeBlocks(t *testing.T, root, name string) []*block {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := parseBlocks(name, src)
	if err != nil {
		t.Fatal(err)
	}
	return blocks
}

func TestMatchOutput(t *testing.T) {
	got := "go build …\na2a: serving at http://127.0.0.1:5\ntools: a, b\n"
	for want, ok := range map[string]bool{
		"a2a: serving at http://127.0.0.1:5\ntools: a, b": true,
		"a2a: serving at …\n\ntools: …":                   true,
		"tools: a, b\na2a: serving at …":                  false, // out of order
		"a2a: serving at http://127.0.0.1:6":              false,
		"serving at":                                      false, // a whole line, not a part of one
	} {
		if err := matchOutput(want, got); (err == nil) != ok {
			t.Errorf("matchOutput(%q) = %v, want ok=%v", want, err, ok)
		}
	}
}

func TestParseBlocks(t *testing.T) {
	src := "# T\n\n<!-- readme-test: background until=\"ready now\" -->\n```sh\nmake run\n```\n\ntext\n\n" +
		"<!-- readme-test: output -->\n```\nline\n```\n\n- item:\n\n  ```sh\n  echo hi\n  ```\n"
	blocks, err := parseBlocks("x.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 2 || blocks[0].code != "make run\n" || blocks[0].dir["until"] != "ready now" || blocks[0].output == nil ||
		blocks[0].output.code != "line\n" || blocks[1].code != "echo hi\n" || len(blocks[1].dir) != 0 || blocks[1].section != "T" {
		t.Fatalf("blocks = %+v", blocks)
	}
}

// setups prepare files and variables for a block (setup=NAME): they get
// the block's working directory and return NAME=value variables for it and
// the files they wrote there.
var setups = map[string]func(t *testing.T, cwd string) (vars, files []string){
	// A HERMES_HOME of the test's own, so make hermes-plugin installs
	// there and not into the machine's ~/.hermes.
	"hermes-home": func(t *testing.T, cwd string) ([]string, []string) {
		return []string{"HERMES_HOME=" + t.TempDir()}, nil
	},
	// A webhook notification as the plugin signs one: body.json, its
	// timestamp in TS, its signature in SIG, the key in A2A_PUSH_SECRET.
	"signed-delivery": func(t *testing.T, cwd string) ([]string, []string) {
		secret, body := "s3cret-push-key", []byte(`{"statusUpdate":{"taskId":"t1","status":{"state":"TASK_STATE_COMPLETED"}}}`)
		if err := os.WriteFile(filepath.Join(cwd, "body.json"), body, 0o644); err != nil {
			t.Fatal(err)
		}
		ts := time.Now().Unix()
		return []string{"TS=" + strconv.FormatInt(ts, 10), "SIG=" + push.Sign([]byte(secret), ts, body), "A2A_PUSH_SECRET=" + secret}, []string{"body.json"}
	},
}

// checkers check a snippet that is not shell (check=NAME).
var checkers = map[string]func(t *testing.T, code string){
	"webhook-verify-go":     checkGoVerifier,
	"webhook-verify-python": checkPythonVerifier,
}

// signedCases are notifications signed by the plugin's signer (push.Sign)
// and whether a verifier must accept them.
func signedCases() (secret string, cases []verifyCase) {
	secret = "s3cret-push-key"
	body := `{"statusUpdate":{"taskId":"t1","status":{"state":"TASK_STATE_COMPLETED"}}}`
	now := time.Now().Unix()
	sign := func(ts int64, b string) string { return push.Sign([]byte(secret), ts, []byte(b)) }
	return secret, []verifyCase{
		{"signed now", now, sign(now, body), body, true},
		{"one of two signatures (a key rotation)", now, "v1=00ff, " + sign(now, body), body, true},
		{"modified body", now, sign(now, body), strings.Replace(body, "COMPLETED", "FAILED", 1), false},
		{"other key", now, push.Sign([]byte("other"), now, []byte(body)), body, false},
		{"replayed after 10 minutes", now - 600, sign(now-600, body), body, false},
		{"no signature", now, "", body, false},
	}
}

type verifyCase struct {
	name  string
	ts    int64
	sig   string
	body  string
	valid bool
}

func checkGoVerifier(t *testing.T, code string) {
	dir := t.TempDir()
	secret, cases := signedCases()
	var test strings.Builder
	fmt.Fprintf(&test, "package webhook\n\nimport (\n\t\"net/http\"\n\t\"testing\"\n\t\"time\"\n)\n\nfunc TestVerify(t *testing.T) {\n")
	for _, c := range cases {
		fmt.Fprintf(&test, "\t{\n\t\th := http.Header{}\n\t\th.Set(\"X-A2A-Timestamp\", %q)\n\t\tif %q != \"\" {\n\t\t\th.Set(\"X-A2A-Signature\", %q)\n\t\t}\n", strconv.FormatInt(c.ts, 10), c.sig, c.sig)
		fmt.Fprintf(&test, "\t\tif err := VerifyA2APush([]byte(%q), h, []byte(%q), time.Now()); (err == nil) != %t {\n\t\t\tt.Errorf(\"%s: %%v\", err)\n\t\t}\n\t}\n", secret, c.body, c.valid, c.name)
	}
	test.WriteString("}\n")
	files := map[string]string{"go.mod": "module example.com/webhook\n\ngo 1.22\n", "verify.go": code, "verify_test.go": test.String()}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "test", "-count=1", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the README's Go verifier, compiled on its own, fails: %v\n%s\n%s", err, out, code)
	}
}

func checkPythonVerifier(t *testing.T, code string) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is needed to check the README's Python verifier: %v", err)
	}
	secret, cases := signedCases()
	var driver strings.Builder
	driver.WriteString(code + "\nimport sys\nfailed = 0\n")
	for _, c := range cases {
		headers := fmt.Sprintf("{%q: %q}", "X-A2A-Timestamp", strconv.FormatInt(c.ts, 10))
		if c.sig != "" {
			headers = fmt.Sprintf("{%q: %q, %q: %q}", "X-A2A-Timestamp", strconv.FormatInt(c.ts, 10), "X-A2A-Signature", c.sig)
		}
		want := "False"
		if c.valid {
			want = "True"
		}
		fmt.Fprintf(&driver, "if verify(%q.encode(), %s, %q.encode()) != %s:\n    print(%q); failed += 1\n", secret, headers, c.body, want, "wrong answer: "+c.name)
	}
	driver.WriteString("sys.exit(1 if failed else 0)\n")
	cmd := exec.Command(python, "-c", driver.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the README's Python verifier fails: %v\n%s", err, out)
	}
}

// TestMakeRunKnobs: make run hands PORT, NAME and PEER to run.yaml, passes
// --data only when DATA is given (so HOSTCFG's data_dir applies), and AGENT
// as written.
func TestMakeRunKnobs(t *testing.T) {
	root, err := testharness.ModuleRoot("")
	if err != nil {
		t.Fatal(err)
	}
	dry := func(args ...string) string {
		cmd := exec.Command("make", append([]string{"-n", "--no-print-directory", "run"}, args...)...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "MAKEFLAGS=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make -n run %v: %v\n%s", args, err, out)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		return lines[len(lines)-1]
	}
	if got := dry(); strings.Contains(got, "--data") || !strings.Contains(got, `--agent "$RUN_AGENT"`) {
		t.Errorf("make run: %s", got)
	}
	if got := dry("DATA=bin/alice", "HOSTCFG=my.yaml"); !strings.Contains(got, "--data 'bin/alice'") || !strings.Contains(got, "--config 'my.yaml'") {
		t.Errorf("make run DATA=bin/alice HOSTCFG=my.yaml: %s", got)
	}
}
