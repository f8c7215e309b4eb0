package replicas_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// clockTick is the unit of utime and stime in /proc/<pid>/stat (USER_HZ,
// 100 on Linux).
const clockTick = 10 * time.Millisecond

// procCPU is the CPU time (user + system) a process has used so far, read
// from /proc; 0 when it cannot be read (not Linux, process gone).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name is in parentheses and may hold spaces: fields
	// count from after its closing parenthesis.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * clockTick
}

// postgresCPU is the CPU time used so far by every PostgreSQL server
// process on the machine (the postmaster and its backends; a backend that
// exited meanwhile is not counted, so measure while connections stay open).
func postgresCPU() time.Duration {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	var total time.Duration
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, err := os.ReadFile("/proc/" + e.Name() + "/comm")
		if err != nil || strings.TrimSpace(string(comm)) != "postgres" {
			continue
		}
		total += procCPU(pid)
	}
	return total
}

// pluginsCPU is the CPU time used so far by the plugin processes of rs.
func pluginsCPU(tb testing.TB, rs []*replica) time.Duration {
	var total time.Duration
	for _, r := range rs {
		if p := r.h.Plugin(testharness.A2APluginName); p != nil {
			total += procCPU(p.Pid())
		}
	}
	return total
}
