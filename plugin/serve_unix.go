//go:build unix

package plugin

import (
	"os/signal"
	"syscall"
)

func ignoreSIGPIPE() { signal.Ignore(syscall.SIGPIPE) }
