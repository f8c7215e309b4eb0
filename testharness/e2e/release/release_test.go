// Package release_test checks a release that make release wrote (make
// test-release builds one, twice, and points A2A_RELEASE_DIST at it): every
// archive and package is there with the checksum SHA256SUMS gives, each
// binary is of its target's format, the SBOMs list what the binaries link,
// and each host package installs and runs from the release alone, in a
// temporary directory, with no checkout.
package release_test

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// targets are the GOOS/GOARCH pairs every release covers.
var targets = []struct{ os, arch string }{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// programs are the binaries every archive must carry (cmd/a2a-mcp joins
// them when it exists: release.sh's PROGRAMS).
var programs = []string{"a2a-plugin", "agenthost"}

// release is the release under test: its directory and version.
type release struct {
	dir, version string
}

// theRelease returns the release make test-release built, or skips: these
// tests check a release, and building one (six targets, every package)
// is make test-release's job, not go test's.
func theRelease(t *testing.T) release {
	t.Helper()
	dir, version := os.Getenv("A2A_RELEASE_DIST"), os.Getenv("A2A_RELEASE_VERSION")
	if dir == "" || version == "" {
		t.Skip("A2A_RELEASE_DIST and A2A_RELEASE_VERSION are not set: make test-release builds a release and runs these tests on it")
	}
	return release{dir: dir, version: version}
}

func (r release) archive(goos, goarch string) string {
	ext := ".tar.gz"
	if goos == "windows" {
		ext = ".zip"
	}
	return filepath.Join(r.dir, fmt.Sprintf("a2a-plugin_%s_%s_%s%s", r.version, goos, goarch, ext))
}

// sums reads SHA256SUMS: name → hex digest.
func (r release) sums(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(r.dir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != 64 {
			t.Fatalf("SHA256SUMS line %q is not `sha256sum` form", sc.Text())
		}
		out[name] = sum
	}
	return out
}

func TestChecksumsCoverEveryFileOfTheRelease(t *testing.T) {
	r := theRelease(t)
	sums := r.sums(t)
	want := []string{"SHA256SUMS"}
	for _, tg := range targets {
		want = append(want, filepath.Base(r.archive(tg.os, tg.arch)))
		for _, p := range programs {
			want = append(want, fmt.Sprintf("sbom/%s_%s_%s_%s.cdx.json", p, r.version, tg.os, tg.arch))
		}
	}
	v := strings.TrimPrefix(r.version, "v")
	want = append(want, "a2a-plugin-hermes_"+r.version+".tar.gz", "a2a-plugin-openclaw-"+v+".tgz", "a2a-plugin-host-sdk-"+v+".tgz")
	seen := map[string]bool{}
	err := filepath.WalkDir(r.dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(r.dir, p)
		rel = filepath.ToSlash(rel)
		seen[rel] = true
		if rel == "SHA256SUMS" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		got := sha256.Sum256(data)
		switch sum, ok := sums[rel]; {
		case !ok:
			t.Errorf("%s is not in SHA256SUMS", rel)
		case sum != hex.EncodeToString(got[:]):
			t.Errorf("%s: SHA256SUMS says %s, the file is %x", rel, sum, got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		if !seen[w] {
			t.Errorf("the release lacks %s", w)
		}
	}
	var wheel, sdist bool
	for name := range seen {
		wheel = wheel || strings.HasPrefix(name, "agentplugin_host-") && strings.HasSuffix(name, "-py3-none-any.whl")
		sdist = sdist || strings.HasPrefix(name, "agentplugin-host-") && strings.HasSuffix(name, ".tar.gz")
	}
	if !wheel || !sdist {
		t.Errorf("the release lacks the Python wheel (%v) or sdist (%v)", wheel, sdist)
	}
	for name := range sums {
		if !seen[name] {
			t.Errorf("SHA256SUMS names %s, which the release does not hold", name)
		}
	}
}

func TestEveryArchiveHoldsTheProgramsAndTheDocuments(t *testing.T) {
	r := theRelease(t)
	for _, tg := range targets {
		t.Run(tg.os+"-"+tg.arch, func(t *testing.T) {
			files := readArchive(t, r.archive(tg.os, tg.arch))
			root := fmt.Sprintf("a2a-plugin_%s_%s_%s/", r.version, tg.os, tg.arch)
			want := []string{"LICENSE", "README.md", "CHANGELOG.md"}
			for _, p := range programs {
				want = append(want, exe(p, tg.os))
			}
			for _, w := range want {
				f, ok := files[root+w]
				if !ok {
					t.Errorf("lacks %s%s (has %v)", root, w, names(files))
					continue
				}
				if strings.HasPrefix(w, "a2a-plugin") || strings.HasPrefix(w, "agenthost") {
					if f.mode&0o111 == 0 {
						t.Errorf("%s is not executable (mode %o)", w, f.mode)
					}
				}
			}
		})
	}
}

func exe(name, goos string) string {
	if goos == "windows" {
		return name + ".exe"
	}
	return name
}

// file is one file of an archive.
type file struct {
	data []byte
	mode int64
}

func names(m map[string]file) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// readArchive returns the regular files of a .tar.gz, .tgz or .zip.
func readArchive(t *testing.T, path string) map[string]file {
	t.Helper()
	out := map[string]file{}
	if strings.HasSuffix(path, ".zip") {
		zr, err := zip.OpenReader(path)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		for _, f := range zr.File {
			if f.FileInfo().IsDir() {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatal(err)
			}
			out[f.Name] = file{data: data, mode: int64(f.Mode().Perm())}
		}
		return out
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = file{data: data, mode: h.Mode}
	}
	return out
}

// unpack writes an archive's files under dir and returns dir.
func unpack(t *testing.T, archive, dir string) string {
	t.Helper()
	for name, f := range readArchive(t, archive) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.data, os.FileMode(f.mode)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// hostArchive is the archive of this machine's target, unpacked into a
// temporary directory; it returns the directory holding the binaries.
func hostArchive(t *testing.T, r release) string {
	t.Helper()
	dir := unpack(t, r.archive(runtime.GOOS, runtime.GOARCH), t.TempDir())
	return filepath.Join(dir, fmt.Sprintf("a2a-plugin_%s_%s_%s", r.version, runtime.GOOS, runtime.GOARCH))
}
