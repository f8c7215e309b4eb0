// Command a2a-release packs what make release built into reproducible
// archives and writes the checksums of a release:
//
//	a2a-release archive -o FILE.tar.gz|FILE.zip -root DIR -epoch N SRC[=NAME] …
//	a2a-release sums DIR
//
// archive writes SRC files (a directory's regular files, recursively) under
// DIR/ in the archive, in name order, every entry owned by 0:0 with the
// modification time N (SOURCE_DATE_EPOCH, the commit's time) and mode 0755
// for executables, 0644 otherwise; gzip carries no name and no time. Two
// runs over the same files write the same bytes. sums writes DIR/SHA256SUMS
// for every regular file under DIR (sha256sum -c reads it).
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "a2a-release:", err)
		os.Exit(1)
	}
}

const usage = `usage:
  a2a-release archive -o FILE.tar.gz|FILE.zip -root DIR -epoch N SRC[=NAME] ...
  a2a-release sums DIR`

func run(args []string, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("want a command\n" + usage)
	}
	switch args[0] {
	case "archive":
		fs := flag.NewFlagSet("archive", flag.ContinueOnError)
		fs.SetOutput(stderr)
		out := fs.String("o", "", "the archive to write (.tar.gz, .tgz or .zip)")
		root := fs.String("root", "", "the directory every entry is under in the archive")
		epoch := fs.Int64("epoch", -1, "modification time of every entry, seconds since 1970 (SOURCE_DATE_EPOCH)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *out == "" || *epoch < 0 || fs.NArg() == 0 {
			return errors.New("archive needs -o, -epoch and at least one file\n" + usage)
		}
		entries, err := collect(fs.Args())
		if err != nil {
			return err
		}
		return writeArchive(*out, *root, time.Unix(*epoch, 0).UTC(), entries)
	case "sums":
		if len(args) != 2 {
			return errors.New("sums needs the release directory\n" + usage)
		}
		return writeSums(args[1])
	}
	return fmt.Errorf("unknown command %q\n%s", args[0], usage)
}

// entry is one file of an archive: where it comes from, its name inside.
type entry struct {
	src, name string
	exec      bool
}

// collect expands SRC[=NAME] arguments: a file is one entry (named NAME,
// else its base name); a directory is every regular file under it, named
// NAME/relative path (else relative path), byte-code caches left out.
func collect(args []string) ([]entry, error) {
	var out []entry
	for _, a := range args {
		src, name, _ := strings.Cut(a, "=")
		st, err := os.Stat(src)
		if err != nil {
			return nil, fmt.Errorf("archive %s: %w", a, err)
		}
		if !st.IsDir() {
			if name == "" {
				name = filepath.Base(src)
			}
			out = append(out, entry{src: src, name: name, exec: st.Mode()&0o111 != 0})
			continue
		}
		err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if skipped(d.Name()) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				return nil
			}
			if !d.Type().IsRegular() {
				return fmt.Errorf("archive %s: %s is not a regular file: releases carry files only", a, p)
			}
			rel, err := filepath.Rel(src, p)
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			out = append(out, entry{src: p, name: path.Join(name, filepath.ToSlash(rel)), exec: info.Mode()&0o111 != 0})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	slices.SortFunc(out, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	for i := 1; i < len(out); i++ {
		if out[i].name == out[i-1].name {
			return nil, fmt.Errorf("archive: two files would be %s (%s and %s)", out[i].name, out[i-1].src, out[i].src)
		}
	}
	return out, nil
}

// skipped is what a directory of sources may hold that a release never
// carries: Python's byte-code caches.
func skipped(name string) bool {
	return name == "__pycache__" || strings.HasSuffix(name, ".pyc")
}

func mode(e entry) int64 {
	if e.exec {
		return 0o755
	}
	return 0o644
}

// writeArchive writes entries under root/ to out, with fixed times and
// owners; the format follows out's extension.
func writeArchive(out, root string, mtime time.Time, entries []entry) error {
	var buf bytes.Buffer
	var err error
	switch {
	case strings.HasSuffix(out, ".zip"):
		err = writeZip(&buf, root, mtime, entries)
	case strings.HasSuffix(out, ".tar.gz"), strings.HasSuffix(out, ".tgz"):
		err = writeTarGz(&buf, root, mtime, entries)
	default:
		return fmt.Errorf("archive %s: name it .tar.gz, .tgz or .zip", out)
	}
	if err != nil {
		return fmt.Errorf("archive %s: %w", out, err)
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}

func writeTarGz(w io.Writer, root string, mtime time.Time, entries []entry) error {
	gz, err := gzip.NewWriterLevel(w, gzip.DefaultCompression)
	if err != nil {
		return err
	}
	// No name and a zero time in the gzip header.
	tw := tar.NewWriter(gz)
	dirs := map[string]bool{}
	for _, e := range entries {
		name := path.Join(root, e.name)
		// Parent directories first, once, so tools that need them (and
		// users who list the archive) see a tree.
		for _, d := range parents(name) {
			if dirs[d] {
				continue
			}
			dirs[d] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: mtime, Format: tar.FormatPAX}); err != nil {
				return err
			}
		}
		data, err := os.ReadFile(e.src)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode(e), Size: int64(len(data)), ModTime: mtime, Format: tar.FormatPAX}); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func writeZip(w io.Writer, root string, mtime time.Time, entries []entry) error {
	zw := zip.NewWriter(w)
	zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(out, flate.DefaultCompression)
	})
	for _, e := range entries {
		data, err := os.ReadFile(e.src)
		if err != nil {
			return err
		}
		h := &zip.FileHeader{Name: path.Join(root, e.name), Method: zip.Deflate, Modified: mtime}
		h.SetMode(fs.FileMode(mode(e)))
		f, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := f.Write(data); err != nil {
			return err
		}
	}
	return zw.Close()
}

// parents returns the directories above name, outermost first.
func parents(name string) []string {
	var out []string
	for d := path.Dir(name); d != "." && d != "/"; d = path.Dir(d) {
		out = append(out, d)
	}
	slices.Reverse(out)
	return out
}

// writeSums writes dir/SHA256SUMS: one "hash  name" line per regular file
// under dir (but SHA256SUMS itself), names relative and sorted.
func writeSums(dir string) error {
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "SHA256SUMS" {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		lines = append(lines, hex.EncodeToString(sum[:])+"  "+filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return fmt.Errorf("sums %s: %w", dir, err)
	}
	if len(lines) == 0 {
		return fmt.Errorf("sums %s: no files to sum: run make release first", dir)
	}
	slices.SortFunc(lines, func(a, b string) int { return strings.Compare(a[66:], b[66:]) })
	return os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}
