package tools

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/config"
)

// TestFilePathsMustLieInsideTheAttachmentRoots: a2a_call's files[].path
// reads only files that resolve (after symlinks) inside the configured
// attachment roots; anything else — no roots configured, a path outside,
// ".." out of a root, a symlink out of a root, a directory, a FIFO — is
// refused with a message naming the setting, and nothing reaches the peer.
func TestFilePathsMustLieInsideTheAttachmentRoots(t *testing.T) {
	c := newCapture(t)
	root, outside := t.TempDir(), t.TempDir()
	write := func(dir, name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	inside := write(root, "docs/report.txt", "the report")
	secret := write(outside, "id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----")
	if err := os.Symlink(secret, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "docs"), filepath.Join(outside, "into-root")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	call := func(ts *Toolset, path string) (string, bool) {
		r := callTool(t, ts, ToolCall, map[string]any{"agent": "cap", "message": "see attached", "files": []any{map[string]any{"path": path}}}, nil)
		return r.Content, r.IsError
	}

	none, _ := newToolset(t, Config{Agents: []config.Peer{{Name: "cap", URL: c.srv.URL}}}, nil)
	if out, isErr := call(none, inside); !isErr || !strings.Contains(out, "attachment_roots") || !strings.Contains(out, "A2A_ATTACHMENT_ROOTS") {
		t.Errorf("without attachment roots a path was not refused naming the setting: %s", out)
	}

	ts, _ := newToolset(t, Config{Agents: []config.Peer{{Name: "cap", URL: c.srv.URL}}, AttachmentRoots: []string{root}}, nil)
	for _, ok := range []string{inside, "docs/report.txt", filepath.Join(outside, "into-root", "report.txt")} {
		if out, isErr := call(ts, ok); isErr || !strings.Contains(out, "got it") {
			t.Errorf("path %s inside the root was refused: %s", ok, out)
		}
	}
	for _, bad := range []string{secret, filepath.Join(root, "escape"), "../" + filepath.Base(outside) + "/id_rsa",
		filepath.Join(root, "docs", "..", "..", filepath.Base(outside), "id_rsa"), filepath.Join(root, "docs"), filepath.Join(root, "fifo")} {
		out, isErr := call(ts, bad)
		if !isErr || !strings.Contains(out, "files[0]") {
			t.Errorf("path %s was not refused: %s", bad, out)
		}
		if strings.Contains(out, "OPENSSH") {
			t.Errorf("the refusal of %s shows the file: %s", bad, out)
		}
	}
	if out, _ := call(ts, secret); !strings.Contains(out, "attachment_roots") {
		t.Errorf("the refusal of a path outside the roots does not name the setting: %s", out)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, txt := range c.text {
		if strings.Contains(txt, "OPENSSH") {
			t.Fatalf("a file outside the roots reached the peer: %q", txt)
		}
	}
	if len(c.text) != 3 {
		t.Errorf("the peer got %d messages, want the 3 with files inside the root", len(c.text))
	}
}

// TestAttachmentRootsAreChecked: a root that does not exist or is not a
// directory fails New, naming the setting.
func TestAttachmentRootsAreChecked(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{filepath.Join(t.TempDir(), "missing"), file, "relative/dir"} {
		if _, err := New(Config{AttachmentRoots: []string{bad}}, Deps{}); err == nil || !strings.Contains(err.Error(), "attachment_roots") {
			t.Errorf("root %q: err = %v, want one naming attachment_roots", bad, err)
		}
	}
}
