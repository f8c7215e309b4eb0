package release_test

import (
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEveryBinaryIsOfItsTargetsFormat reads each binary's headers: ELF for
// linux, Mach-O for darwin, PE for windows, with the target's CPU, and the
// release version the linker stamped (the darwin and windows binaries
// cannot run here; docs/install.md says so).
func TestEveryBinaryIsOfItsTargetsFormat(t *testing.T) {
	r := theRelease(t)
	elfMachine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}
	machoCPU := map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64}
	peMachine := map[string]uint16{"amd64": pe.IMAGE_FILE_MACHINE_AMD64, "arm64": pe.IMAGE_FILE_MACHINE_ARM64}
	for _, tg := range targets {
		files := readArchive(t, r.archive(tg.os, tg.arch))
		for _, p := range programs {
			name := fmt.Sprintf("a2a-plugin_%s_%s_%s/%s", r.version, tg.os, tg.arch, exe(p, tg.os))
			t.Run(tg.os+"-"+tg.arch+"-"+p, func(t *testing.T) {
				data := files[name].data
				rd := bytes.NewReader(data)
				switch tg.os {
				case "linux":
					f, err := elf.NewFile(rd)
					if err != nil {
						t.Fatalf("%s is not ELF: %v", name, err)
					}
					if f.Machine != elfMachine[tg.arch] {
						t.Errorf("%s is for %v, want %v", name, f.Machine, elfMachine[tg.arch])
					}
				case "darwin":
					f, err := macho.NewFile(rd)
					if err != nil {
						t.Fatalf("%s is not Mach-O: %v", name, err)
					}
					if f.Cpu != machoCPU[tg.arch] || f.Type != macho.TypeExec {
						t.Errorf("%s is %v %v, want an executable for %v", name, f.Type, f.Cpu, machoCPU[tg.arch])
					}
				case "windows":
					f, err := pe.NewFile(rd)
					if err != nil {
						t.Fatalf("%s is not PE: %v", name, err)
					}
					if f.Machine != peMachine[tg.arch] {
						t.Errorf("%s is for machine %#x, want %#x", name, f.Machine, peMachine[tg.arch])
					}
					if f.Characteristics&pe.IMAGE_FILE_EXECUTABLE_IMAGE == 0 {
						t.Errorf("%s is not an executable image", name)
					}
				}
				bi, err := buildinfo.Read(rd)
				if err != nil {
					t.Fatalf("%s has no Go build information: %v", name, err)
				}
				got := map[string]string{}
				for _, s := range bi.Settings {
					got[s.Key] = s.Value
				}
				if got["GOOS"] != tg.os || got["GOARCH"] != tg.arch || got["CGO_ENABLED"] != "0" || got["-trimpath"] != "true" {
					t.Errorf("%s was built with %v, want GOOS=%s GOARCH=%s CGO_ENABLED=0 -trimpath", name, got, tg.os, tg.arch)
				}
				// -trimpath keeps -ldflags out of the build information;
				// the version the linker stamped is in the data.
				if !bytes.Contains(data, []byte(r.version)) {
					t.Errorf("%s does not hold its version %s", name, r.version)
				}
			})
		}
	}
}

// TestSBOMListsTheModulesEachBinaryLinks compares each CycloneDX SBOM with
// the Go build information of its binary: the same modules at the same
// versions, and the main module at the release version.
func TestSBOMListsTheModulesEachBinaryLinks(t *testing.T) {
	r := theRelease(t)
	for _, tg := range targets {
		files := readArchive(t, r.archive(tg.os, tg.arch))
		for _, p := range programs {
			t.Run(tg.os+"-"+tg.arch+"-"+p, func(t *testing.T) {
				bin := files[fmt.Sprintf("a2a-plugin_%s_%s_%s/%s", r.version, tg.os, tg.arch, exe(p, tg.os))].data
				bi, err := buildinfo.Read(bytes.NewReader(bin))
				if err != nil {
					t.Fatal(err)
				}
				var want []string
				for _, d := range bi.Deps {
					m := d
					if d.Replace != nil {
						m = d.Replace
					}
					want = append(want, "pkg:golang/"+m.Path+"@"+m.Version)
				}
				raw, err := os.ReadFile(filepath.Join(r.dir, "sbom", fmt.Sprintf("%s_%s_%s_%s.cdx.json", p, r.version, tg.os, tg.arch)))
				if err != nil {
					t.Fatal(err)
				}
				var bom struct {
					BOMFormat string `json:"bomFormat"`
					Metadata  struct {
						Component struct {
							Version string `json:"version"`
						} `json:"component"`
					} `json:"metadata"`
					Components []struct {
						Purl string `json:"purl"`
					} `json:"components"`
				}
				if err := json.Unmarshal(raw, &bom); err != nil {
					t.Fatal(err)
				}
				if bom.BOMFormat != "CycloneDX" || bom.Metadata.Component.Version != r.version {
					t.Errorf("SBOM is %q of version %q, want CycloneDX of %s", bom.BOMFormat, bom.Metadata.Component.Version, r.version)
				}
				var got []string
				for _, c := range bom.Components {
					if c.Purl == "" || strings.HasPrefix(c.Purl, "pkg:golang/std@") {
						continue
					}
					// pkg:golang/PATH@VERSION?goarch=…&goos=…&type=module
					base, query, _ := strings.Cut(c.Purl, "?")
					if !strings.Contains(query, "goos="+tg.os) || !strings.Contains(query, "goarch="+tg.arch) {
						t.Errorf("%s is not for %s/%s", c.Purl, tg.os, tg.arch)
					}
					got = append(got, base)
				}
				slices.Sort(got)
				slices.Sort(want)
				got = slices.Compact(got)
				if len(want) < 10 || !slices.Equal(got, want) {
					t.Errorf("the SBOM's modules differ from what the binary links:\n got  %v\n want %v", got, want)
				}
			})
		}
	}
}
