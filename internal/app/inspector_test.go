package app_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	hostsdk "github.com/a2a-plugin/a2a-plugin/host-sdk"
)

func getStatus(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestInspectorIsOffByDefault(t *testing.T) {
	p := serve(t, `{"port":0,"store":"memory"}`, nil, hostsdk.InProcessOptions{})
	if eps := p.Endpoints(); len(eps) != 1 {
		t.Fatalf("endpoints = %v, want only the A2A URL", eps)
	}
	if code, _ := getStatus(t, p.Endpoints()[0]+"/inspector/", ""); code != http.StatusNotFound {
		t.Fatalf("GET /inspector/ with the inspector off: %d, want 404", code)
	}
}

func TestInspectorServesTheLocalOperatorAndIsAnEndpoint(t *testing.T) {
	p := serve(t, `{"port":0,"store":"memory","inspector":true,"agent_name":"Inspected"}`, nil, hostsdk.InProcessOptions{})
	eps := p.Endpoints()
	if len(eps) != 2 || eps[1] != eps[0]+"/inspector/" {
		t.Fatalf("endpoints = %v, want the A2A URL and its /inspector/", eps)
	}
	code, body := getStatus(t, eps[1], "")
	if code != 200 || !strings.Contains(body, "Inspected") || !strings.Contains(body, `id="agent-card"`) {
		t.Fatalf("GET /inspector/: %d %.300s", code, body)
	}
}

func TestInspectorRefusesCallersThatAreNotLocal(t *testing.T) {
	const token = "shared-token-of-trusted-callers"
	// With loopback_is_local off, the test's loopback requests are remote
	// callers: anonymous, or trusted with the shared token.
	p := serve(t, `{"port":0,"store":"memory","inspector":true,"loopback_is_local":false,"bearer_token":"`+token+`"}`, nil, hostsdk.InProcessOptions{})
	url := p.Endpoints()[0] + "/inspector/"
	for _, tc := range []struct {
		name, token string
		want        int
	}{
		{"anonymous", "", http.StatusForbidden},
		{"trusted token holder", token, http.StatusForbidden},
		{"bad token", "wrong", http.StatusUnauthorized},
	} {
		code, body := getStatus(t, url, tc.token)
		if code != tc.want || strings.Contains(body, "Inspector") {
			t.Errorf("%s: %d %.120q, want %d without the page", tc.name, code, body, tc.want)
		}
	}
	// The API routes and the assets too.
	for _, path := range []string{"api/events", "api/metrics", "static/inspector.js", "tasks"} {
		if code, _ := getStatus(t, url+path, token); code != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", path, code)
		}
	}
}
