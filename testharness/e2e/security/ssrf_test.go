package security_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestOutboundURLsGoThroughTheSSRFGuard: without A2A_ALLOW_LOOPBACK_URLS
// and A2A_ALLOW_PRIVATE_URLS, webhook URLs (push-config methods and inline
// configs) and a2a_call URLs that point at loopback, private, link-local or
// metadata addresses are refused with a message naming the setting, before
// anything reaches the host or the network.
func TestOutboundURLsGoThroughTheSSRFGuard(t *testing.T) {
	t.Parallel()
	h := startHost(t, hostOpts{config: map[string]any{"allow_unconfigured_urls": true}})
	ep := h.Endpoint("a2a")
	ctx := ctxFor(t, 30*time.Second)
	c := newClient(ep, "") // a local caller: every permission

	tk := c.mustSend(t, ctx, "a task to watch")
	hook := newWebhook(t) // a real receiver on loopback: it must never be called
	for _, tc := range []struct{ url, setting string }{
		{hook.srv.URL + "/hook", "A2A_ALLOW_LOOPBACK_URLS"},
		{"http://localhost:" + portOf(t, hook.srv.URL) + "/hook", "A2A_ALLOW_LOOPBACK_URLS"},
		{"http://[::1]:9/hook", "A2A_ALLOW_LOOPBACK_URLS"},
		{"http://10.1.2.3/hook", "A2A_ALLOW_PRIVATE_URLS"},
		{"http://169.254.169.254/latest/meta-data/", "A2A_ALLOW_PRIVATE_URLS"},
	} {
		r := c.mustCall(t, ctx, "CreateTaskPushNotificationConfig", map[string]any{"taskId": tk.ID, "url": tc.url})
		wantRefusal(t, r, http.StatusOK, -32602, tc.setting)
	}
	before := len(h.Recorder().CallsOf("HandleMessage"))
	params := sendParams(message("notify my loopback"))
	params["configuration"] = map[string]any{"taskPushNotificationConfig": map[string]any{"url": hook.srv.URL + "/inline"}}
	wantRefusal(t, c.mustCall(t, ctx, "SendMessage", params), http.StatusOK, -32602, "A2A_ALLOW_LOOPBACK_URLS")
	if after := len(h.Recorder().CallsOf("HandleMessage")); after != before {
		t.Error("a send with a refused webhook reached the host")
	}

	for _, u := range []string{ep, "http://localhost:" + portOf(t, ep) + "/", "http://169.254.169.254/"} {
		args, _ := json.Marshal(map[string]any{"agent": u, "message": "hello"})
		res, _, err := h.CallTool(ctx, "a2a_call", string(args))
		if err != nil {
			t.Fatal(err)
		}
		if !res.GetIsError() || !strings.Contains(res.GetContent(), "SSRF") {
			t.Errorf("a2a_call to %s: %q, want a refusal by the SSRF guard", u, res.GetContent())
		}
	}
	time.Sleep(200 * time.Millisecond)
	if n := len(hook.all()); n > 0 {
		t.Errorf("the loopback webhook was called %d time(s)", n)
	}
}
