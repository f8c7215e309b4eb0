package docs_test

// The runner of the commands in README files, as docs/readme-commands.md
// describes them: every ```sh block runs, in order, in a fresh copy of the
// repository, and the output block that follows it is checked. An HTML
// comment on the line before a fence changes what the runner does with it:
//
//	<!-- readme-test: background -->        serve in the background until the end of the file
//	<!-- readme-test: until="TEXT" -->      (background) ready once TEXT was printed
//	<!-- readme-test: output -->            the block is the expected output of the block before
//	<!-- readme-test: exit=N -->            the block must exit with status N (default 0)
//	<!-- readme-test: setup=NAME -->        run the setup NAME first (files, variables)
//	<!-- readme-test: check=NAME -->        a non-shell snippet checked by the checker NAME
//	<!-- readme-test: skip="REASON" -->     not run (the reason is logged)

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// block is one fenced block of a README.
type block struct {
	file    string
	line    int    // of the opening fence
	section string // the heading above it
	lang    string // first word of the info string
	code    string
	dir     map[string]string // directives of the comment before the fence
	output  *block            // the expected output, when an output block follows
}

func (b *block) where() string { return fmt.Sprintf("%s:%d (%s)", b.file, b.line, b.section) }

var (
	directiveLine = regexp.MustCompile(`^\s*<!--\s*readme-test:\s*(.*?)\s*-->\s*$`)
	directiveWord = regexp.MustCompile(`([a-z]+)(?:=("[^"]*"|\S+))?`)
	headingLine   = regexp.MustCompile(`^#{1,6}\s+(.*)$`)
)

// parseBlocks reads the fenced blocks of a Markdown file, with their
// directives; an output block is attached to the block before it.
func parseBlocks(file string, src []byte) ([]*block, error) {
	var out []*block
	var pending map[string]string
	section := ""
	lines := strings.Split(string(src), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if m := directiveLine.FindStringSubmatch(l); m != nil {
			pending = map[string]string{}
			for _, w := range directiveWord.FindAllStringSubmatch(m[1], -1) {
				pending[w[1]] = strings.Trim(w[2], `"`)
			}
			continue
		}
		if m := headingLine.FindStringSubmatch(l); m != nil {
			section = m[1]
		}
		trimmed := strings.TrimLeft(l, " ")
		if !strings.HasPrefix(trimmed, "```") {
			if strings.TrimSpace(l) != "" {
				pending = nil // a directive applies to the fence right after it
			}
			continue
		}
		indent := len(l) - len(trimmed)
		fence := trimmed[:len(trimmed)-len(strings.TrimLeft(trimmed, "`"))]
		info := strings.Fields(strings.TrimPrefix(trimmed, fence))
		b := &block{file: file, line: i + 1, section: section, dir: pending}
		if b.dir == nil {
			b.dir = map[string]string{}
		}
		if len(info) > 0 {
			b.lang = info[0]
		}
		pending = nil
		var code []string
		for i++; i < len(lines); i++ {
			if closes(lines[i], fence) {
				break
			}
			c := lines[i]
			if len(c) >= indent && strings.TrimSpace(c[:indent]) == "" {
				c = c[indent:]
			}
			code = append(code, c)
		}
		if i == len(lines) {
			return nil, fmt.Errorf("%s:%d: the fence is never closed", file, b.line)
		}
		b.code = strings.Join(code, "\n") + "\n"
		if _, ok := b.dir["output"]; ok {
			if len(out) == 0 {
				return nil, fmt.Errorf("%s:%d: an output block needs a command block before it", file, b.line)
			}
			out[len(out)-1].output = b
			continue
		}
		out = append(out, b)
	}
	return out, nil
}

// closes reports whether line closes a block opened with fence: a fence of
// at least as many backticks and nothing else, as in CommonMark, so a
// ````markdown block may show a ```sh block without it being run.
func closes(line, fence string) bool {
	t := strings.TrimSpace(line)
	return strings.HasPrefix(t, fence) && strings.Trim(t, "`") == ""
}

// runnable reports whether the runner runs or checks b.
func (b *block) runnable() bool {
	_, check := b.dir["check"]
	return b.lang == "sh" || check
}

// docPorts are the ports the READMEs name; each is replaced by a free port
// in commands and outputs (and PORT, make run's knob, is set to the first).
var docPorts = regexp.MustCompile(`\b4124[0-9]\b`)

// session runs the blocks of one file.
type session struct {
	t     *testing.T
	root  string // the copy of the repository
	cwd   string
	ports map[string]string
	env   []string
	bg    []*background
	made  map[string]bool // files setups wrote, which the README has the reader make
}

// newSession copies the repository's working tree (tracked and untracked
// files that git does not ignore) into a fresh git repository.
func newSession(t *testing.T, moduleRoot string, blocks []*block) *session {
	t.Helper()
	tmp := t.TempDir()
	root := filepath.Join(tmp, "repo")
	copyTree(t, moduleRoot, root)
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=readme-test", "-c", "user.email=readme-test@localhost", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-qm", "the working tree, for the README commands")

	s := &session{t: t, root: root, cwd: root, ports: map[string]string{}, made: map[string]bool{}}
	for _, b := range blocks {
		for _, text := range []string{b.code, outputOf(b)} {
			for _, p := range docPorts.FindAllString(text, -1) {
				if s.ports[p] == "" {
					s.ports[p] = freePort(t)
				}
			}
		}
	}
	s.env = append(os.Environ(), "PORT="+s.port("41241"))
	t.Cleanup(s.stopAll)
	return s
}

func outputOf(b *block) string {
	if b.output == nil {
		return ""
	}
	return b.output.code
}

func (s *session) port(p string) string {
	if s.ports[p] == "" {
		s.ports[p] = freePort(s.t)
	}
	return s.ports[p]
}

// subst is the only change made to a README's text before it runs: its
// ports become free ports, and "<this repository>" the copy's path.
func (s *session) subst(text string) string {
	text = docPorts.ReplaceAllStringFunc(text, s.port)
	return strings.ReplaceAll(text, "<this repository>", s.root)
}

// run runs one block: a shell block in the foreground or background, or a
// check of another snippet.
func (s *session) run(b *block) {
	t := s.t
	t.Helper()
	if reason, ok := b.dir["skip"]; ok {
		if reason == "" {
			t.Fatalf("%s: skip needs a reason: skip=\"why\"", b.where())
		}
		t.Logf("%s: not run: %s", b.where(), reason)
		return
	}
	env := s.env
	if name, ok := b.dir["setup"]; ok {
		setup := setups[name]
		if setup == nil {
			t.Fatalf("%s: unknown setup %q", b.where(), name)
		}
		vars, files := setup(t, s.cwd)
		for _, f := range files {
			s.made[filepath.Join(s.cwd, f)] = true
		}
		env = append(append([]string(nil), env...), vars...)
	}
	if name, ok := b.dir["check"]; ok {
		check := checkers[name]
		if check == nil {
			t.Fatalf("%s: unknown checker %q", b.where(), name)
		}
		check(t, b.code)
		t.Logf("%s: checked by %s", b.where(), name)
		return
	}
	if _, ok := b.dir["background"]; ok {
		s.background(b, env)
		return
	}
	s.foreground(b, env)
}

// shell is the script a block runs as: in the working directory the
// blocks before it left, which it records in turn.
func (s *session) shell(b *block, cwdFile string) string {
	return fmt.Sprintf("set -e\ncd %q\n%s\n", s.cwd, func() string {
		if cwdFile == "" {
			return ""
		}
		return fmt.Sprintf("trap 'pwd > %q' EXIT", cwdFile)
	}()) + s.subst(b.code)
}

func (s *session) foreground(b *block, env []string) {
	t := s.t
	cwdFile := filepath.Join(t.TempDir(), "cwd")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", s.shell(b, cwdFile))
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", b.where(), err)
	}
	want := 0
	if w, ok := b.dir["exit"]; ok {
		want, _ = strconv.Atoi(w)
	}
	t.Logf("%s:\n$ %s%s", b.where(), strings.ReplaceAll(s.subst(b.code), "\n", "\n  "), out)
	if code != want {
		t.Fatalf("%s: exit status %d, want %d:\n%s\noutput:\n%s", b.where(), code, want, b.code, out)
	}
	if b.output != nil {
		if err := matchOutput(s.subst(b.output.code), string(out)); err != nil {
			t.Fatalf("%s: the output documented at %s:%d does not match: %v\noutput:\n%s", b.where(), b.output.file, b.output.line, err, out)
		}
	}
	if cwd, err := os.ReadFile(cwdFile); err == nil {
		s.cwd = strings.TrimSpace(string(cwd))
	}
}

// checkClean fails when the commands left files that git would show as
// untracked in the checkout they ran in (state belongs under bin/).
func (s *session) checkClean() {
	t := s.t
	s.stopAll()
	cmd := exec.Command("git", "status", "--porcelain", "--untracked-files=all")
	cmd.Dir = s.cwd
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git status in %s: %v", s.cwd, err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l == "" {
			continue
		}
		if strings.HasPrefix(l, "?? ") && s.made[filepath.Join(s.cwd, strings.TrimPrefix(l, "?? "))] {
			continue
		}
		t.Errorf("the README's commands left %q in the checkout (git status)", l)
	}
}

// background is a block that serves until the end of its file.
type background struct {
	b    *block
	cmd  *exec.Cmd
	out  *testharness.SyncBuffer
	done chan struct{}
}

func (s *session) background(b *block, env []string) {
	t := s.t
	if b.output == nil && b.dir["until"] == "" {
		t.Fatalf("%s: a background block needs an output block or until=\"TEXT\" to know when it is ready", b.where())
	}
	cmd := exec.Command("bash", "-c", s.shell(b, ""))
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &testharness.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", b.where(), err)
	}
	bg := &background{b: b, cmd: cmd, out: out, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(bg.done) }()
	s.bg = append(s.bg, bg)
	ready := func() bool {
		if u := b.dir["until"]; u != "" && !strings.Contains(out.String(), s.subst(u)) {
			return false
		}
		return b.output == nil || matchOutput(s.subst(b.output.code), out.String()) == nil
	}
	deadline := time.Now().Add(3 * time.Minute)
	for !ready() {
		select {
		case <-bg.done:
			t.Fatalf("%s: ended before it was ready (%v):\n%s", b.where(), cmd.ProcessState, out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not ready after 3 minutes:\n%s", b.where(), out.String())
		}
	}
	t.Logf("%s: serving in the background:\n$ %s%s", b.where(), s.subst(b.code), out.String())
}

// stopAll interrupts the background blocks (Ctrl-C, as a user would) and
// kills what is left after 30 seconds.
func (s *session) stopAll() {
	for i := len(s.bg) - 1; i >= 0; i-- {
		bg := s.bg[i]
		_ = syscall.Kill(-bg.cmd.Process.Pid, syscall.SIGINT)
		select {
		case <-bg.done:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-bg.cmd.Process.Pid, syscall.SIGKILL)
			<-bg.done
			s.t.Errorf("%s: still running 30 s after Ctrl-C; killed:\n%s", bg.b.where(), bg.out.String())
		}
	}
	s.bg = nil
}

// matchOutput checks documented output against what a command printed:
// every documented line must be printed, in order (other lines may come
// between them); "…" in a documented line stands for any text, and
// surrounding spaces are ignored.
func matchOutput(want, got string) error {
	lines := strings.Split(strings.ReplaceAll(got, "\r\n", "\n"), "\n")
	i := 0
	for _, w := range strings.Split(want, "\n") {
		w = strings.TrimSpace(w)
		if w == "" {
			continue
		}
		parts := strings.Split(w, "…")
		for j := range parts {
			parts[j] = regexp.QuoteMeta(parts[j])
		}
		re := regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
		for ; i < len(lines) && !re.MatchString(strings.TrimSpace(lines[i])); i++ {
		}
		if i == len(lines) {
			return fmt.Errorf("no line (after the lines matched before it) is %q", w)
		}
		i++
	}
	return nil
}

// freePort returns a port that was free on 127.0.0.1 a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// copyTree copies the files git tracks or would track under root to dst.
func copyTree(t *testing.T, root, dst string) {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	names := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	sort.Strings(names)
	for _, name := range names {
		src := filepath.Join(root, name)
		info, err := os.Lstat(src)
		if err != nil {
			continue // deleted in the working tree
		}
		to := filepath.Join(dst, name)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if info.Mode()&os.ModeSymlink != 0 {
			target, err := os.Readlink(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, to); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := copyFile(src, to, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
}

func copyFile(src, dst string, perm os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, bufio.NewReader(in)); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
