package store

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// crashChildEnv switches the test binary into the child role of
// TestCrashLosesNothingAcknowledged; its value is the database path.
const crashChildEnv = "A2A_STORE_CRASH_CHILD"

// crashRecord is the task the child saves as number i of writer w.
func crashRecord(round, w, i int) *TaskRecord {
	id := fmt.Sprintf("r%d-w%d-%05d", round, w, i)
	return &TaskRecord{
		Task: a2a.Task{
			ID: id, ContextID: fmt.Sprintf("ctx-%d", i%7),
			Status:  a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: a2a.NewTimestamp(time.UnixMilli(int64(i)))},
			History: []a2a.Message{{MessageID: "m-" + id, Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart(strings.Repeat("payload of "+id+" ", 20))}}},
		},
		Owner:     "peer:crash",
		UpdatedAt: time.UnixMilli(int64(i)),
	}
}

// crashChild saves tasks from several goroutines until killed, printing
// each id once SaveTask has returned.
func crashChild(path string, round int, stalled bool) {
	s, err := OpenSQLite(path, SQLiteOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if stalled {
		// Nothing reaches SQLite: every save acknowledged is in the
		// journal only.
		stall(s)
	}
	var mu sync.Mutex
	for w := range 8 {
		go func() {
			for i := 0; ; i++ {
				rec := crashRecord(round, w, i)
				if err := s.SaveTask(context.Background(), rec, nil); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(2)
				}
				mu.Lock()
				fmt.Fprintln(os.Stdout, rec.Task.ID) // os.Stdout is unbuffered
				mu.Unlock()
			}
		}()
	}
	select {}
}

// TestCrashLosesNothingAcknowledged kills a process that is writing with
// SIGKILL, several times over, and checks after each crash that the
// database is intact and holds every task whose save had returned.
func TestCrashLosesNothingAcknowledged(t *testing.T) {
	if path := os.Getenv(crashChildEnv); path != "" {
		var round int
		fmt.Sscan(os.Getenv(crashChildEnv+"_ROUND"), &round)
		crashChild(path, round, os.Getenv(crashChildEnv+"_STALL") != "")
		return
	}
	path := filepath.Join(t.TempDir(), "a2a-plugin.db")
	acked := map[string][3]int{}
	// The last round stalls the applier, so that the saves it kills are
	// in the task journal only.
	const rounds = 4
	for round := range rounds {
		stalled := round == rounds-1
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashLosesNothingAcknowledged$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+path, fmt.Sprintf("%s_ROUND=%d", crashChildEnv, round))
		if stalled {
			cmd.Env = append(cmd.Env, crashChildEnv+"_STALL=1")
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		n := 0
		// Kill mid-stream, at a different point each round.
		for sc.Scan() {
			var w, i int
			if _, err := fmt.Sscanf(sc.Text(), fmt.Sprintf("r%d-w%%d-%%d", round), &w, &i); err != nil {
				continue // not an id
			}
			acked[sc.Text()] = [3]int{round, w, i}
			if n++; n == 400+300*round {
				if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
			}
		}
		_ = cmd.Wait()
		if n < 400+300*round {
			t.Fatalf("round %d: the child acknowledged only %d saves before it stopped: %s", round, n, stderr.String())
		}
		t.Logf("round %d: killed after %d acknowledged saves", round, n)

		db, err := sql.Open("sqlite", "file:"+path)
		if err != nil {
			t.Fatal(err)
		}
		var check string
		if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
			t.Fatalf("round %d: integrity_check = %q, %v", round, check, err)
		}
		var inDB int
		if err := db.QueryRow("SELECT count(*) FROM tasks WHERE id LIKE ?", fmt.Sprintf("r%d-%%", round)).Scan(&inDB); err != nil {
			t.Fatal(err)
		}
		db.Close()
		if stalled && inDB != 0 {
			t.Fatalf("round %d: %d tasks reached SQLite with the applier stalled", round, inDB)
		}
		t.Logf("round %d: %d of the round's saves were in SQLite, the rest in the journal only", round, inDB)

		logs := &logSink{}
		s, err := OpenSQLite(path, SQLiteOptions{Logf: logs.logf})
		if err != nil {
			t.Fatalf("round %d: reopen after the crash: %v", round, err)
		}
		if stalled && !logs.has("replayed") {
			t.Errorf("round %d: nothing replayed from the journal: %q", round, logs.lines)
		}
		for id, k := range acked {
			got, err := s.GetTask(context.Background(), id, "peer:crash")
			if err != nil {
				t.Errorf("round %d: acknowledged task %s: %v", round, id, err)
				continue
			}
			want := crashRecord(k[0], k[1], k[2])
			g, _ := a2a.Marshal(&got.Task)
			w, _ := a2a.Marshal(&want.Task)
			if string(g) != string(w) {
				t.Errorf("round %d: task %s damaged:\n got  %s\n want %s", round, id, g, w)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
