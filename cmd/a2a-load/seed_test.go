package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
	"github.com/a2a-plugin/a2a-plugin/internal/store"
)

func TestSeedFillsAStoreTheLoopbackCallerOwns(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a2a", "a2a-plugin.db")
	var out, errb bytes.Buffer
	if code := seedMain([]string{"-db", db, "-n", "300"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	// A second seed adds to the first, with other ids.
	if code := seedMain([]string{"-db", db, "-n", "200", "-from", "300"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var res seedResult
	if err := json.NewDecoder(&out).Decode(&res); err != nil || res.Tasks != 300 {
		t.Fatalf("first result %+v, %v", res, err)
	}
	st, err := store.OpenSQLite(db, store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	page, err := st.ListTasks(ctx, store.TaskQuery{Owner: seedOwner, PageSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	if page.TotalSize != 500 || len(page.Tasks) != 10 {
		t.Fatalf("total %d, page %d; want 500 and 10", page.TotalSize, len(page.Tasks))
	}
	// Newest first: the last task of the second seed.
	if got := page.Tasks[0].Task.ID; got != "seed-00000499" {
		t.Errorf("newest task %s, want seed-00000499", got)
	}
	rec, err := st.GetTask(ctx, "seed-00000007", seedOwner)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Task.Status.State != a2a.TaskStateCompleted || len(rec.Task.History) != 2 || len(rec.Task.Artifacts) != 1 || rec.Task.ContextID != "seed-ctx-0000000" {
		t.Errorf("task %+v", rec.Task)
	}
}

func TestSeedRefusesBadArguments(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-db", "x.db", "-postgres", "postgres://h/db"},
		{"-db", "x.db", "-n", "0"},
		{"-db", "x.db", "-from", "-1"},
		{"-db", "x.db", "extra"},
	} {
		var out, errb bytes.Buffer
		if code := seedMain(args, &out, &errb); code != exitUsage {
			t.Errorf("%q: exit %d, stderr %s", args, code, errb.String())
		}
	}
}

func TestSeveralURLsShareTheWorkers(t *testing.T) {
	var hits [3]atomic.Int64
	var urls []string
	// Each server holds its first answers until every URL has had a
	// request (or 5 s): the workers share one budget of requests, so on a
	// busy machine the first worker could otherwise spend all of it
	// before the others have dialled.
	allHit := make(chan struct{})
	var once sync.Once
	for i := range hits {
		fs := &fakeServer{}
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits[i].Add(1)
			if hits[0].Load() > 0 && hits[1].Load() > 0 && hits[2].Load() > 0 {
				once.Do(func() { close(allHit) })
			}
			select {
			case <-allHit:
			case <-time.After(5 * time.Second):
			}
			fs.ServeHTTP(w, r)
		}))
		t.Cleanup(ts.Close)
		urls = append(urls, ts.URL+"/")
	}
	res, err := Run(context.Background(), Config{URL: strings.Join(urls, ","), Mode: "send", Concurrency: 6, Requests: 60,
		Timeout: 10 * time.Second, PageSize: 50, Client: "raw", Text: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK != 60 || res.ErrorsTotal != 0 {
		t.Fatalf("ok %d, errors %v", res.OK, res.Errors)
	}
	for i := range hits {
		if hits[i].Load() == 0 {
			t.Errorf("URL %d got no request", i)
		}
	}
	for _, bad := range []string{"http://x/,ftp://y/", "http://x/,", "http://x/, not a url"} {
		if _, err := parseURLs(bad); err == nil {
			t.Errorf("parseURLs(%q) accepted", bad)
		}
	}
	if us, err := parseURLs("http://a/, http://b/x/"); err != nil || len(us) != 2 || us[1].Path != "/x/" {
		t.Errorf("parseURLs: %v, %v", us, err)
	}
}
