package security

import "testing"

func TestSafeLocalHostRefusesNamesARebindingPageWouldSend(t *testing.T) {
	extra := map[string]bool{"agent.example.com": true}
	for host, want := range map[string]bool{
		"127.0.0.1:41241": true, "[::1]:41241": true, "localhost:8080": true, "app.localhost": true,
		"AGENT.example.com:443": true, "10.1.2.3": true,
		"rebind.evil.example:41241": false, "localhost.evil.example": false, "": false, "evil": false,
	} {
		if got := SafeLocalHost(host, extra); got != want {
			t.Errorf("SafeLocalHost(%q) = %v, want %v", host, got, want)
		}
	}
}
