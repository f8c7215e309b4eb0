package app_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	hostsdk "github.com/a2a-plugin/a2a-plugin/host-sdk"
	"github.com/a2a-plugin/a2a-plugin/internal/app"
	pb "github.com/a2a-plugin/a2a-plugin/proto/agentplugin/v1"
)

// pprofApp is an App that counts the calls of its PprofOn hook.
func pprofApp(env map[string]string) (*app.App, *atomic.Int32) {
	a := app.New(nil, "test", func(k string) string { return env[k] })
	var calls atomic.Int32
	a.PprofOn = func() { calls.Add(1) }
	return a, &calls
}

func TestPprofIsOffByDefault(t *testing.T) {
	a, calls := pprofApp(nil)
	p := serveApp(t, a, `{"port":0,"store":"memory"}`, hostsdk.InProcessOptions{})
	if code, _ := getStatus(t, p.Endpoints()[0]+"/debug/pprof/", ""); code != http.StatusNotFound {
		t.Fatalf("GET /debug/pprof/ with pprof off: %d, want 404", code)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("PprofOn called %d times with pprof off", n)
	}
}

func TestPprofOnIsCalledOnlyWhenConfigureSucceeds(t *testing.T) {
	// A Configure that asks for pprof (here through the environment) and
	// fails late — the store open and the parts built, then no host
	// callback service — does not turn profiling on.
	a, calls := pprofApp(map[string]string{"A2A_PPROF": "true"})
	req := &pb.ConfigureRequest{ConfigJson: []byte(`{"port":0,"store":"memory"}`)}
	if _, err := a.Configure(context.Background(), req, nil); err == nil || !strings.Contains(err.Error(), "HostService") {
		t.Fatalf("Configure without a host: %v", err)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("PprofOn called %d times by a failed Configure", n)
	}
	// Retried with a host, it succeeds and turns profiling on once.
	serveApp(t, a, `{"port":0,"store":"memory"}`, hostsdk.InProcessOptions{})
	if n := calls.Load(); n != 1 {
		t.Errorf("PprofOn called %d times after a successful Configure, want 1", n)
	}
}

func TestPprofServesLocalCallersOnly(t *testing.T) {
	a, calls := pprofApp(nil)
	p := serveApp(t, a, `{"port":0,"store":"memory","pprof":true}`, hostsdk.InProcessOptions{})
	if n := calls.Load(); n != 1 {
		t.Errorf("PprofOn called %d times, want 1", n)
	}
	base := p.Endpoints()[0] + "/debug/pprof/"
	if code, body := getStatus(t, base, ""); code != 200 || !strings.Contains(body, "heap") {
		t.Fatalf("GET /debug/pprof/: %d %.200s", code, body)
	}
	if code, body := getStatus(t, base+"heap?debug=1", ""); code != 200 || !strings.Contains(body, "heap profile") {
		t.Fatalf("GET /debug/pprof/heap: %d %.200s", code, body)
	}

	// A web page in the operator's browser reaches loopback as Local too:
	// by DNS rebinding (a foreign Host) or by a cross-site request.
	for _, tc := range []struct {
		name   string
		set    func(*http.Request)
		status int
	}{
		{"DNS-rebinding Host", func(r *http.Request) { r.Host = "attacker.example" }, http.StatusMisdirectedRequest},
		{"cross-site Origin", func(r *http.Request) { r.Header.Set("Origin", "https://attacker.example") }, http.StatusForbidden},
		{"cross-site fetch metadata", func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "cross-site") }, http.StatusForbidden},
	} {
		req, _ := http.NewRequest(http.MethodGet, base+"cmdline", nil)
		tc.set(req)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		refused := strings.HasPrefix(string(b), "forbidden:") || strings.HasPrefix(string(b), "misdirected request:")
		if resp.StatusCode != tc.status || !refused {
			t.Errorf("%s: %d %.120q, want %d without the profile", tc.name, resp.StatusCode, b, tc.status)
		}
	}

	const token = "shared-token-of-trusted-callers"
	remote := serve(t, `{"port":0,"store":"memory","pprof":true,"loopback_is_local":false,"bearer_token":"`+token+`"}`, nil, hostsdk.InProcessOptions{})
	for _, path := range []string{"", "heap", "goroutine?debug=2", "cmdline"} {
		if code, body := getStatus(t, remote.Endpoints()[0]+"/debug/pprof/"+path, token); code != http.StatusForbidden {
			t.Errorf("trusted remote caller, /debug/pprof/%s: %d %.100q, want 403", path, code, body)
		}
	}
}
