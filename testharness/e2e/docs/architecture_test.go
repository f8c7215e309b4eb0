package docs_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/testharness"
)

const module = "github.com/a2a-plugin/a2a-plugin/"

// TestArchitecturePackageMapMatchesTheCode keeps docs/architecture.md's
// package map true: every package of the module is in it, in a layer, and
// imports only packages of its own or an earlier layer; every file:function
// hop of the request paths exists.
func TestArchitecturePackageMapMatchesTheCode(t *testing.T) {
	root, err := testharness.ModuleRoot("")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	layers := packageLayers(t, string(doc))

	var out []byte
	for _, dir := range goModules(t, root) {
		cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...")
		cmd.Dir = dir
		o, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list in %s: %v", dir, err)
		}
		out = append(out, o...)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		if helperPackage(pkg) {
			continue
		}
		layer, ok := layers[pkg]
		if !ok {
			t.Errorf("docs/architecture.md's package map lacks %s", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			dep, ours := strings.CutPrefix(imp, module)
			if !ours || helperPackage(dep) {
				continue
			}
			if dl, ok := layers[dep]; ok && dl > layer {
				t.Errorf("%s (layer %d) imports %s (layer %d): the package map's layers are wrong", pkg, layer, dep, dl)
			}
		}
	}

	// Every "`path/file.go: Type.Method`" (or "Func") hop names a function
	// that exists in that file.
	hop := regexp.MustCompile(`([a-z0-9_\-/]+\.go):\s+([A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z_][A-Za-z0-9_]*))?`)
	n := 0
	for _, m := range hop.FindAllStringSubmatch(string(doc), -1) {
		file, typ, fn := m[1], m[2], m[3]
		if fn == "" {
			typ, fn = "", typ
		}
		src, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Errorf("docs/architecture.md names %s, which does not exist", file)
			continue
		}
		var def *regexp.Regexp
		if typ == "" {
			def = regexp.MustCompile(`(?m)^func ` + fn + `[\[(]`)
		} else {
			def = regexp.MustCompile(`(?m)^func \(\w+ \*?` + typ + `(\[[^\]]*\])?\) ` + fn + `\(`)
		}
		if !def.Match(src) {
			t.Errorf("docs/architecture.md names %s: %s, which %s does not define", file, strings.Trim(typ+"."+fn, "."), file)
		}
		n++
	}
	if n < 20 {
		t.Fatalf("found only %d file:function hops in docs/architecture.md", n)
	}
}

// goModules returns the directories of the repository's Go modules (the
// plugin's and any nested one, such as cmd/a2a-bench's).
func goModules(t *testing.T, root string) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata" || d.Name() == "bin") {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "go.mod" {
			dirs = append(dirs, filepath.Dir(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 2 {
		t.Fatalf("found the Go modules %v; want the plugin's and cmd/a2a-bench's", dirs)
	}
	return dirs
}

// helperPackage is a package that exists for tests or tools only and is
// not part of the map.
func helperPackage(pkg string) bool {
	for _, p := range []string{"/e2e/", "testplugin", "sdkclient", "oidcop", "testcert", "testclock", "storetest", "clienttest", "a2atest", "e2etest", "loadresult", "durability/testdata"} {
		if strings.Contains(pkg, p) {
			return true
		}
	}
	return strings.HasSuffix(pkg, "/e2e")
}

// packageLayers reads the package map: "| N name | `pkg` | … |" rows, where
// a row with an empty first cell is of the layer above it.
func packageLayers(t *testing.T, doc string) map[string]int {
	row := regexp.MustCompile("(?m)^\\| *([0-9]*)[^|]*\\| *(`[^|]+`) *\\|")
	out := map[string]int{}
	layer := -1
	for _, m := range row.FindAllStringSubmatch(doc, -1) {
		if m[1] != "" {
			layer, _ = strconv.Atoi(m[1])
		}
		if layer < 0 {
			continue
		}
		for _, name := range strings.Split(m[2], ",") {
			name = strings.Trim(strings.TrimSpace(name), "`")
			out[name] = layer
		}
	}
	if len(out) < 20 {
		t.Fatalf("read only %d packages from the package map: %v", len(out), out)
	}
	return out
}
