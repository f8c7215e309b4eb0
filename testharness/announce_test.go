package testharness

import (
	"os/exec"
	"testing"
)

func TestStartAnnouncedDecodesTheFirstLineAndStopsTheProcess(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	// Announces, prints more (drained), then runs until its stdin closes.
	cmd := exec.Command("sh", "-c", `echo '{"endpoints":["http://127.0.0.1:1/"]}'; echo more; cat >/dev/null`)
	var up struct {
		Endpoints []string `json:"endpoints"`
	}
	t.Run("start", func(t *testing.T) {
		StartAnnounced(t, cmd, &up, nil)
		if len(up.Endpoints) != 1 || up.Endpoints[0] != "http://127.0.0.1:1/" {
			t.Errorf("decoded %+v", up)
		}
	})
	// The subtest's clean-up closed stdin and waited for the exit.
	if cmd.ProcessState == nil || !cmd.ProcessState.Exited() {
		t.Errorf("the process still runs after the clean-up: %v", cmd.ProcessState)
	}
}
