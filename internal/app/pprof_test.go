package app_test

import (
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	hostsdk "github.com/a2a-plugin/a2a-plugin/host-sdk"
)

func TestPprofIsOffByDefault(t *testing.T) {
	p := serve(t, `{"port":0,"store":"memory"}`, nil, hostsdk.InProcessOptions{})
	if code, _ := getStatus(t, p.Endpoints()[0]+"/debug/pprof/", ""); code != http.StatusNotFound {
		t.Fatalf("GET /debug/pprof/ with pprof off: %d, want 404", code)
	}
}

func TestPprofServesLocalCallersOnly(t *testing.T) {
	// cmd/a2a-plugin starts with heap profiling off; pprof turns it on.
	saved := runtime.MemProfileRate
	runtime.MemProfileRate = 0
	t.Cleanup(func() { runtime.MemProfileRate = saved })
	p := serve(t, `{"port":0,"store":"memory","pprof":true}`, nil, hostsdk.InProcessOptions{})
	if runtime.MemProfileRate == 0 {
		t.Errorf("pprof on, but heap profiling still off (MemProfileRate 0)")
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
