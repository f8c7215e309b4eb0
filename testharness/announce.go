package testharness

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"
)

// StartAnnounced starts cmd, a process that announces itself with one JSON
// line on stdout (the Hermes stand-in's gateway, the release tests'
// OpenClaw gateway) and stops when its stdin closes, and decodes that
// line into v. At the end of the test its stdin is closed; a process still
// running 30 s later is sent stuck (when not nil: standin_main.py dumps
// its threads' stacks on SIGUSR1), killed, and fails the test. Its stderr
// is logged when the test failed.
func StartAnnounced(t testing.TB, cmd *exec.Cmd, v any, stuck os.Signal) {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr SyncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			if stuck != nil {
				_ = cmd.Process.Signal(stuck)
				time.Sleep(time.Second)
			}
			_ = cmd.Process.Kill()
			<-done
			t.Errorf("%s did not stop within 30s of its stdin closing", cmd.Path)
		}
		if t.Failed() {
			t.Logf("%s stderr:\n%s", cmd.Path, stderr.String())
		}
	})
	lines := make(chan string, 1)
	go func() { // ends when the process exits
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		if sc.Scan() {
			lines <- sc.Text()
		}
		for sc.Scan() {
		}
		done <- cmd.Wait()
	}()
	select {
	case l := <-lines:
		if err := json.Unmarshal([]byte(l), v); err != nil {
			t.Fatalf("%s printed %q, not its JSON announcement: %v\n%s", cmd.Path, l, err, stderr.String())
		}
	case err := <-done:
		done <- err // for the clean-up
		t.Fatalf("%s exited before announcing itself (%v):\n%s", cmd.Path, err, stderr.String())
	case <-time.After(5 * time.Minute):
		t.Fatalf("%s printed nothing within 5 minutes:\n%s", cmd.Path, stderr.String())
	}
}
