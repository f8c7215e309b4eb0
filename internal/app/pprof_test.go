package app_test

import (
	"net/http"
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
	p := serve(t, `{"port":0,"store":"memory","pprof":true}`, nil, hostsdk.InProcessOptions{})
	base := p.Endpoints()[0] + "/debug/pprof/"
	if code, body := getStatus(t, base, ""); code != 200 || !strings.Contains(body, "heap") {
		t.Fatalf("GET /debug/pprof/: %d %.200s", code, body)
	}
	if code, body := getStatus(t, base+"heap?debug=1", ""); code != 200 || !strings.Contains(body, "heap profile") {
		t.Fatalf("GET /debug/pprof/heap: %d %.200s", code, body)
	}

	const token = "shared-token-of-trusted-callers"
	remote := serve(t, `{"port":0,"store":"memory","pprof":true,"loopback_is_local":false,"bearer_token":"`+token+`"}`, nil, hostsdk.InProcessOptions{})
	for _, path := range []string{"", "heap", "goroutine?debug=2", "cmdline"} {
		if code, body := getStatus(t, remote.Endpoints()[0]+"/debug/pprof/"+path, token); code != http.StatusForbidden {
			t.Errorf("trusted remote caller, /debug/pprof/%s: %d %.100q, want 403", path, code, body)
		}
	}
}
