package push

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/a2a-plugin/a2a-plugin/internal/security"
)

func TestBackoffUsesTheDispatchersBounds(t *testing.T) {
	d := &Dispatcher{base: time.Second, max: 5 * time.Minute}
	if got := d.backoff(3); got < 2*time.Second || got > 4*time.Second {
		t.Errorf("backoff(3) with base 1s = %s, want within [2s, 4s]", got)
	}
	if got := d.backoff(40); got < 150*time.Second || got > 5*time.Minute {
		t.Errorf("backoff(40) = %s, want within [2m30s, 5m]", got)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"":                              0,
		"120":                           120 * time.Second,
		" 5 ":                           5 * time.Second,
		"0":                             0,
		"-3":                            0,
		"soon":                          0,
		"999999999999":                  time.Hour,
		"Sun, 01 Mar 2026 12:01:30 GMT": 90 * time.Second,
		"Sun, 01 Mar 2026 11:00:00 GMT": 0,
		"Mon, 02 Mar 2026 12:00:00 GMT": time.Hour,
	} {
		if got := retryAfter(v, now); got != want {
			t.Errorf("retryAfter(%q) = %s, want %s", v, got, want)
		}
	}
}

func TestSafeURLDropsCredentialsAndQuery(t *testing.T) {
	for raw, want := range map[string]string{
		"https://hooks.example/a2a":                    "https://hooks.example/a2a",
		"https://user:pw@hooks.example:8443/a/b?t=s#f": "https://hooks.example:8443/a/b?…",
		"http://[::1]:9/x%20y":                         "http://[::1]:9/x%20y",
		"not a url":                                    "(invalid URL)",
		"http://%zz":                                   "(invalid URL)",
	} {
		if got := safeURL(raw); got != want {
			t.Errorf("safeURL(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestErrTextHidesTheRawURL(t *testing.T) {
	raw := "http://u:pw@127.0.0.1:1/hook?token=query-secret"
	shown := safeURL(raw)
	for _, err := range []error{
		&url.Error{Op: "Post", URL: raw, Err: errors.New("connection refused")},
		fmt.Errorf("wrapped: %w", &security.SSRFError{URL: raw, Host: "127.0.0.1", Reason: "a loopback address"}),
		fmt.Errorf("security: invalid URL %q", raw),
	} {
		got := errText(err, raw, shown)
		if strings.Contains(got, "query-secret") || strings.Contains(got, "pw@") {
			t.Errorf("errText(%v) = %q leaks the URL", err, got)
		}
	}
}
