package hostsdk

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	hclog "github.com/hashicorp/go-hclog"
)

// Candidate is an executable that may be a plugin; only the handshake tells.
type Candidate struct {
	// Name is the file name, used as the plugin's name until Describe
	// gives the real one.
	Name string
	// Path is the absolute path of the executable.
	Path string
}

// Discover lists the executables in dir, sorted by name. It does not run
// them. It logs every entry it skips and why: hidden (a leading dot; debug
// level), a directory (info), not a regular file or not executable (warn —
// probably a mistake). Symbolic links are followed. An unreadable dir is an
// error.
func Discover(dir string, log hclog.Logger) ([]Candidate, error) {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("resolve plugins directory %q: %w", dir, err)
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil, fmt.Errorf("read plugins directory %s: %w (create it or point the host at the right directory)", abs, err)
	}
	var out []Candidate
	for _, e := range entries { // os.ReadDir sorts by name
		name := e.Name()
		path := filepath.Join(abs, name)
		if strings.HasPrefix(name, ".") {
			log.Debug("skipping hidden file in plugins directory", "path", path)
			continue
		}
		info, err := os.Stat(path) // follows symlinks
		if err != nil {
			log.Warn("skipping plugin candidate: cannot stat it (a dangling symlink?)", "path", path, "error", err)
			continue
		}
		switch {
		case info.IsDir():
			log.Info("skipping directory in plugins directory (plugins are single executables)", "path", path)
			continue
		case !info.Mode().IsRegular():
			log.Warn("skipping plugin candidate: not a regular file", "path", path, "mode", info.Mode().String())
			continue
		case !isExecutable(name, info.Mode()):
			log.Warn("skipping plugin candidate: not executable (chmod +x it if it is a plugin)",
				"path", path, "mode", info.Mode().String())
			continue
		}
		out = append(out, Candidate{Name: name, Path: path})
	}
	return out, nil
}

func isExecutable(name string, mode fs.FileMode) bool {
	if runtime.GOOS == "windows" {
		return strings.EqualFold(filepath.Ext(name), ".exe")
	}
	return mode.Perm()&0o111 != 0
}
