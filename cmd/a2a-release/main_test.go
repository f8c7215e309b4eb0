package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tree writes a small source tree: an executable, a plain file, a nested
// file and a byte-code cache that no release carries.
func tree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, mode := range map[string]os.FileMode{"bin/tool": 0o700, "README.md": 0o600, "pkg/a/b.py": 0o664, "pkg/__pycache__/b.pyc": 0o644} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(name), mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestArchivesAreTheSameBytesWhateverTheFilesTimesAndModes(t *testing.T) {
	for _, ext := range []string{".tar.gz", ".zip"} {
		t.Run(ext, func(t *testing.T) {
			var outs [][]byte
			for i := range 2 {
				src := tree(t)
				// The second tree's files are newer and group-writable: nothing of it may show.
				if i == 1 {
					later := time.Now().Add(time.Hour)
					os.Chtimes(filepath.Join(src, "README.md"), later, later)
					os.Chmod(filepath.Join(src, "README.md"), 0o664)
				}
				out := filepath.Join(t.TempDir(), "x"+ext)
				if err := run([]string{"archive", "-o", out, "-root", "r", "-epoch", "1700000000", filepath.Join(src, "bin", "tool"), filepath.Join(src, "README.md"), filepath.Join(src, "pkg") + "=lib"}, io.Discard); err != nil {
					t.Fatal(err)
				}
				data, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				outs = append(outs, data)
			}
			if !bytes.Equal(outs[0], outs[1]) {
				t.Fatal("two archives of the same files differ")
			}
			got := entries(t, ext, outs[0])
			want := map[string]int64{"r/README.md": 0o644, "r/lib/a/b.py": 0o644, "r/tool": 0o755}
			if len(got) != len(want) {
				t.Errorf("entries %v, want %v", got, want)
			}
			for name, mode := range want {
				if got[name] != mode {
					t.Errorf("%s: mode %o, want %o (all: %v)", name, got[name], mode, got)
				}
			}
		})
	}
}

// entries lists an archive's regular files and their modes, checking the
// fixed time and owner on the way.
func entries(t *testing.T, ext string, data []byte) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	want := time.Unix(1700000000, 0).UTC()
	if ext == ".zip" {
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range zr.File {
			if !f.Modified.Equal(want) {
				t.Errorf("%s: time %v, want %v", f.Name, f.Modified, want)
			}
			out[f.Name] = int64(f.Mode().Perm())
		}
		return out
	}
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if gz.Name != "" || !gz.ModTime.IsZero() {
		t.Errorf("gzip header carries name %q and time %v", gz.Name, gz.ModTime)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !h.ModTime.Equal(want) || h.Uid != 0 || h.Gid != 0 || h.Uname != "" {
			t.Errorf("%s: time %v owner %d:%d %q", h.Name, h.ModTime, h.Uid, h.Gid, h.Uname)
		}
		if h.Typeflag == tar.TypeReg {
			out[h.Name] = h.Mode
		}
	}
	return out
}

func TestSumsListEveryFileSortedInSha256sumForm(t *testing.T) {
	dir := tree(t)
	if err := run([]string{"sums", dir}, io.Discard); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 4 || !strings.HasSuffix(lines[0], "  README.md") || !strings.HasSuffix(lines[1], "  bin/tool") {
		t.Errorf("SHA256SUMS:\n%s", data)
	}
	if err := run([]string{"sums", t.TempDir()}, io.Discard); err == nil || !strings.Contains(err.Error(), "run make release") {
		t.Errorf("an empty directory gave %v", err)
	}
}
