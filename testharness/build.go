package testharness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// Binary is a Go main package to build into a plugins directory.
type Binary struct {
	// Name is the executable's file name in the plugins directory.
	Name string
	// Package is the package to build: a path relative to the module root
	// ("./cmd/a2a-plugin") or an import path.
	Package string
}

// PluginBinary is the A2A plugin binary, which Start builds by default.
var PluginBinary = Binary{Name: "a2a-plugin", Package: "./cmd/a2a-plugin"}

// TestPluginBinary is the tiny platform+toolset plugin for testing hosts
// without the A2A plugin: host-sdk/internal/testplugin, the one test
// plugin host-sdk's own tests use too. See that package's doc for its
// tools.
var TestPluginBinary = Binary{Name: "testplugin", Package: "./host-sdk/internal/testplugin/cmd/testplugin"}

// ModuleRoot finds the directory of the go.mod that contains dir (the
// current directory when dir is empty).
func ModuleRoot(dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod in %s or any parent directory", dir)
		}
	}
}

// builds remembers, per process, which binaries were built already, so a
// test binary builds each plugin once however many tests start a Host.
// Shared on purpose: building is the slow part of starting a harness host.
var builds struct {
	mu   sync.Mutex
	done map[string]*buildResult
}

type buildResult struct {
	once sync.Once
	path string
	err  error
}

// BuildBinary builds b once per process (with the given extra go build
// flags) and returns the path of the executable. The executables live in a
// directory under os.TempDir() named after the module root, reused across
// runs so "go build" stays incremental; they are written atomically, so
// test binaries of several packages may build concurrently.
func BuildBinary(ctx context.Context, moduleRoot string, b Binary, flags ...string) (string, error) {
	key := moduleRoot + "\x00" + b.Package + "\x00" + strings.Join(flags, "\x00")
	builds.mu.Lock()
	if builds.done == nil {
		builds.done = map[string]*buildResult{}
	}
	r := builds.done[key]
	if r == nil {
		r = &buildResult{}
		builds.done[key] = r
	}
	builds.mu.Unlock()
	r.once.Do(func() { r.path, r.err = buildOnce(ctx, moduleRoot, b, flags) })
	if r.err != nil {
		// Let a later caller retry (e.g. after fixing a compile error in a
		// long-running host).
		builds.mu.Lock()
		delete(builds.done, key)
		builds.mu.Unlock()
	}
	return r.path, r.err
}

func buildOnce(ctx context.Context, root string, b Binary, flags []string) (string, error) {
	if b.Name == "" || b.Package == "" {
		return "", fmt.Errorf("binary %+v: Name and Package are required", b)
	}
	sum := sha256.Sum256([]byte(root + "\x00" + strings.Join(flags, "\x00")))
	dir := filepath.Join(os.TempDir(), "agentplugin-testharness-"+hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	final := filepath.Join(dir, b.Name)
	tmp, err := os.CreateTemp(dir, b.Name+".build-*")
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	args := append([]string{"build", "-o", tmp.Name()}, flags...)
	args = append(args, b.Package)
	cmd := exec.CommandContext(ctx, goTool(), args...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build %s (in %s): %w\n%s", b.Package, root, err, out)
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		return "", err
	}
	return final, nil
}

// goTool finds the go command: $GOROOT/bin/go of the running toolchain
// when there, else "go" from PATH.
func goTool() string {
	if root := os.Getenv("GOROOT"); root != "" {
		p := filepath.Join(root, "bin", "go")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "go"
}

// InstallBinary places a built executable into a plugins directory under
// name, as a hard link when possible, else a copy.
func InstallBinary(src, pluginsDir, name string) (string, error) {
	if err := os.MkdirAll(pluginsDir, 0o755); err != nil {
		return "", err
	}
	dst := filepath.Join(pluginsDir, name)
	_ = os.Remove(dst)
	if err := os.Link(src, dst); err == nil {
		return dst, nil
	}
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return "", err
	}
	return dst, errors.Join(out.Close(), os.Chmod(dst, 0o755))
}
