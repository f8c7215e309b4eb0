package durability_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/testharness"
)

// seedTasks is how many tasks TestListTasksAt100kTasks stores.
const seedTasks = 100_000

// seedStore fills <dataDir>/a2a/a2a-plugin.db with n tasks through the
// store's API, in a separate process built without the race detector
// (testdata/seed), and returns its summary.
func seedStore(t *testing.T, dataDir string, n int) (summary struct {
	Tasks  int            `json:"tasks"`
	Owners map[string]int `json:"owners"`
	States map[string]int `json:"states"`
}) {
	t.Helper()
	root, err := testharness.ModuleRoot("")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin, err := testharness.BuildBinary(ctx, root, testharness.Binary{Name: "durability-seed", Package: "./testharness/e2e/durability/testdata/seed"})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(dataDir, testharness.A2APluginName)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cmd := exec.CommandContext(ctx, bin, "-db", filepath.Join(dir, "a2a-plugin.db"), "-n", fmt.Sprint(n), "-owners", "alice,bob")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("seeding the store: %v\n%s", err, stderr.String())
	}
	if err := json.Unmarshal(out, &summary); err != nil || summary.Tasks != n {
		t.Fatalf("seed printed %s (%v)", out, err)
	}
	t.Logf("stored %d tasks in %s", n, time.Since(start).Round(time.Millisecond))
	return summary
}

// seedID is the id the seed program gives task i.
func seedID(i int) string { return fmt.Sprintf("seed-%07d", i) }

// TestListTasksAt100kTasks starts the plugin on a store holding 100k tasks
// of two peers and checks that ListTasks pages (first, filtered by state,
// context and status time, deep through page tokens) come back right. It
// logs their times but asserts none (machines are shared and noisy): that
// every ListTasks query runs on an index is checked on its query plan in
// internal/store, and the latency at 100k tasks is measured by make bench
// (-growth).
func TestListTasksAt100kTasks(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("stores 100k tasks")
	}
	dataDir := t.TempDir()
	sum := seedStore(t, dataDir, seedTasks)
	h := launch(t, launchOpts{config: scopedConfig(), env: scopedEnv(), dataDir: dataDir})
	alice, bob := clientOf(h, tokAlice), clientOf(h, tokBob)

	type page struct {
		Tasks         []a2a.Task `json:"tasks"`
		NextPageToken string     `json:"nextPageToken"`
		PageSize      int        `json:"pageSize"`
		TotalSize     int        `json:"totalSize"`
	}
	timed := func(name string, c client, params map[string]any) page {
		t.Helper()
		var times []time.Duration
		var p page
		for range 5 {
			t0 := time.Now()
			res := c.ok(t, "ListTasks", params, "")
			times = append(times, time.Since(t0))
			p = page{}
			if err := json.Unmarshal(res, &p); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		slices.Sort(times)
		t.Logf("ListTasks %-22s %2d tasks of %6d: median %6s, max %6s", name, len(p.Tasks), p.TotalSize,
			times[2].Round(10*time.Microsecond), times[4].Round(10*time.Microsecond))
		return p
	}
	ids := func(p page) []string {
		out := make([]string, len(p.Tasks))
		for i, tk := range p.Tasks {
			out[i] = tk.ID
		}
		return out
	}
	// Alice owns the even tasks, newest last.
	aliceNewest := func(k, from int) []string {
		var out []string
		for i := from; len(out) < k && i >= 0; i -= 2 {
			out = append(out, seedID(i))
		}
		return out
	}

	first := timed("first page", alice, map[string]any{"pageSize": 50})
	if first.TotalSize != sum.Owners["peer:alice"] || !slices.Equal(ids(first), aliceNewest(50, seedTasks-2)) || first.NextPageToken == "" {
		t.Errorf("alice's first page: totalSize %d (want %d), ids %v…", first.TotalSize, sum.Owners["peer:alice"], ids(first)[:min(3, len(first.Tasks))])
	}
	if len(first.Tasks) > 0 && (len(first.Tasks[0].Artifacts) != 0 || len(first.Tasks[0].History) != 2) {
		t.Errorf("first page task: %d artifacts (want none without includeArtifacts), %d history", len(first.Tasks[0].Artifacts), len(first.Tasks[0].History))
	}
	full := timed("100 with artifacts", alice, map[string]any{"pageSize": 100, "includeArtifacts": true, "historyLength": 1})
	if len(full.Tasks) != 100 || len(full.Tasks[0].Artifacts) != 1 || len(full.Tasks[0].History) != 1 {
		t.Errorf("a page with artifacts: %d tasks", len(full.Tasks))
	}
	failed := timed("failed", alice, map[string]any{"status": "TASK_STATE_FAILED", "pageSize": 50})
	if failed.TotalSize != sum.States["TASK_STATE_FAILED"] || len(failed.Tasks) != 50 || failed.Tasks[0].ID != seedID(seedTasks-20) {
		t.Errorf("alice's failed tasks: totalSize %d (want %d)", failed.TotalSize, sum.States["TASK_STATE_FAILED"])
	}
	inCtx := timed("one context", alice, map[string]any{"contextId": "ctx-5000"})
	if !slices.Equal(ids(inCtx), []string{seedID(50008), seedID(50006), seedID(50004), seedID(50002), seedID(50000)}) || inCtx.TotalSize != 5 {
		t.Errorf("alice's tasks in ctx-5000: %v (totalSize %d)", ids(inCtx), inCtx.TotalSize)
	}
	// The status time of task 99000 bounds the newest 1000 tasks, 500 of
	// them alice's.
	cut := alice.getTask(t, seedID(99000))
	after := task(t, cut).Status.Timestamp.Format("2006-01-02T15:04:05.000Z")
	recent := timed("statusTimestampAfter", alice, map[string]any{"statusTimestampAfter": after, "pageSize": 10})
	if recent.TotalSize != 500 {
		t.Errorf("alice's tasks at or after %s: totalSize %d, want 500", after, recent.TotalSize)
	}

	// Twenty pages deep through the tokens, in order.
	token, at := "", seedTasks-2
	var slowest time.Duration
	for range 20 {
		params := map[string]any{"pageSize": 100}
		if token != "" {
			params["pageToken"] = token
		}
		t0 := time.Now()
		res := alice.ok(t, "ListTasks", params, "")
		slowest = max(slowest, time.Since(t0))
		var p page
		if err := json.Unmarshal(res, &p); err != nil {
			t.Fatal(err)
		}
		if want := aliceNewest(100, at); !slices.Equal(ids(p), want) {
			t.Fatalf("page starting at task %d: %v…, want %v…", at, ids(p)[:min(2, len(p.Tasks))], want[:2])
		}
		token, at = p.NextPageToken, at-200
	}
	t.Logf("ListTasks 20 pages deep: slowest page %s", slowest.Round(10*time.Microsecond))

	bobs := timed("bob's first page", bob, map[string]any{"pageSize": 50})
	if bobs.TotalSize != sum.Owners["peer:bob"] || len(bobs.Tasks) != 50 || bobs.Tasks[0].ID != seedID(seedTasks-1) {
		t.Errorf("bob's first page: totalSize %d, first %v", bobs.TotalSize, ids(bobs)[:min(1, len(bobs.Tasks))])
	}
	bob.fails(t, "GetTask", map[string]any{"id": seedID(2)}, -32001)
	if tk := task(t, alice.getTask(t, seedID(2))); tk.Status.State != a2a.TaskStateCompleted || textOf(tk.Artifacts[0].Parts) != "answer 2" {
		t.Errorf("an old task read back as %+v", tk)
	}
}
