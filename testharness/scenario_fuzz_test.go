package testharness

import (
	"os"
	"testing"
)

// FuzzParseScenario checks that no input makes the parser panic and that
// whatever it accepts is a valid scenario.
func FuzzParseScenario(f *testing.F) {
	for _, name := range []string{"testdata/demo.yaml", "testdata/demo.json"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, name)
	}
	f.Add([]byte("default: [echo]"), "x.yaml")
	f.Add([]byte(`{"rules":[{"match":{"text":{"regexp":"a+"}},"actions":[{"wait":"1s"}]}]}`), "x.json")
	f.Add([]byte("rules:\n  - &r {match: {text: a}, actions: [{reply: b}]}\n  - *r\n"), "alias.yaml")
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		s, err := ParseScenario(data, name)
		if err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("ParseScenario accepted an invalid scenario: %v", err)
		}
	})
}
