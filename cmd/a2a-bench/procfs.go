package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Linux /proc readings: CPU time, resident memory and child processes of
// the servers under test. USER_HZ is 100 on every Linux architecture Go
// supports (it is fixed by the kernel ABI, unlike CONFIG_HZ).
const userHZ = 100

// procCPU is the user+system CPU time process pid has used.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	f, err := statFields(b)
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	// After "pid (comm)": state ppid pgrp session tty_nr tpgid flags minflt
	// cminflt majflt cmajflt utime stime …
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: bad utime/stime %q %q", pid, f[11], f[12])
	}
	return time.Duration(ut+st) * time.Second / userHZ, nil
}

// statFields splits /proc/<pid>/stat after the command name, which may
// itself hold spaces and parentheses.
func statFields(b []byte) ([]string, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 > len(b) {
		return nil, fmt.Errorf("malformed stat %q", b)
	}
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 13 {
		return nil, fmt.Errorf("short stat %q", b)
	}
	return f, nil
}

// memKB is a process's resident set now (VmRSS) and at its peak (VmHWM).
type memKB struct {
	RSS int64 `json:"rss_kb"`
	HWM int64 `json:"hwm_kb"`
}

func procMem(pid int) (memKB, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memKB{}, err
	}
	defer f.Close()
	return parseStatus(f)
}

// parseStatus reads VmRSS and VmHWM (in kB) from /proc/<pid>/status text.
// A line that does not parse is an error, not a zero that would pass for a
// measurement.
func parseStatus(r io.Reader) (memKB, error) {
	var m memKB
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		var dst *int64
		switch {
		case strings.HasPrefix(line, "VmRSS:"):
			dst = &m.RSS
		case strings.HasPrefix(line, "VmHWM:"):
			dst = &m.HWM
		default:
			continue
		}
		fs := strings.Fields(line)
		if len(fs) != 3 || fs[2] != "kB" {
			return m, fmt.Errorf("status: unexpected line %q", line)
		}
		n, err := strconv.ParseInt(fs[1], 10, 64)
		if err != nil || n < 0 {
			return m, fmt.Errorf("status: unexpected line %q", line)
		}
		*dst = n
	}
	return m, sc.Err()
}

// children lists the direct children of pid.
func children(pid int) []int {
	// Fast path: the kernel's list (CONFIG_PROC_CHILDREN), per thread.
	var out []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	found := false
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		found = true
		for _, s := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(s); err == nil {
				out = append(out, c)
			}
		}
	}
	if found {
		return out
	}
	// Slow path: every process's parent.
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, s := range stats {
		b, err := os.ReadFile(s)
		if err != nil {
			continue
		}
		f, err := statFields(b)
		if err != nil {
			continue
		}
		if pp, _ := strconv.Atoi(f[1]); pp == pid {
			if c, err := strconv.Atoi(filepath.Base(filepath.Dir(s))); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// childNamed returns the child of pid whose command is name, or 0.
func childNamed(pid int, name string) int {
	for _, c := range children(pid) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", c))
		if err == nil && strings.TrimSpace(string(b)) == name {
			return c
		}
	}
	return 0
}

// dbFile is the plugin's SQLite task database in its data directory
// (internal/app.DatabaseFile).
const dbFile = "a2a-plugin.db"

// dbBytes is the size of the task database in the plugin's data directory
// dir: the database file with its WAL and shared-memory files, not the
// audit log or anything else the plugin keeps there.
func dbBytes(dir string) int64 {
	var n int64
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if info, err := os.Stat(filepath.Join(dir, dbFile+suffix)); err == nil {
			n += info.Size()
		}
	}
	return n
}

// loadAvg is the first field of /proc/loadavg: how busy the machine was.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// cpuModel is the processor's name from /proc/cpuinfo.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
