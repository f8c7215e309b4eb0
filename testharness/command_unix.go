//go:build unix

package testharness

import (
	"os/exec"
	"syscall"
)

// killGroup makes the command the leader of a new process group and makes
// cancellation kill the whole group, so children of the shell die too.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
