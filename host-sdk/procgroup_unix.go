//go:build unix

package hostsdk

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup starts the plugin in a process group of its own, so that
// killing it also kills the children it started. Without that, a child that
// inherited the plugin's stdout or stderr (e.g. `sleep` under a shell script
// posing as a plugin) keeps go-plugin waiting for EOF. It also keeps a
// terminal's Ctrl-C away from plugins: the host stops them in order.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killProcessGroup kills every process in the plugin's group.
func killProcessGroup(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
