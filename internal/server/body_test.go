package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// failsafe bounds how long a test waits for an answer the server owes,
// so a regression fails the test instead of hanging it. It is not a
// timing assertion: the server answers within Limits.ReadTimeout.
const failsafe = 20 * time.Second

// rawRequest opens a connection to addr and writes head (and nothing
// more); the caller reads the answer.
func rawRequest(t *testing.T, addr, head string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	return c
}

// readAnswer reads one HTTP response from c (within failsafe).
func readAnswer(t *testing.T, c net.Conn, br *bufio.Reader) (*http.Response, string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(failsafe))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// closedAfter reports whether the server closed c once it answered.
func closedAfter(c net.Conn, br *bufio.Reader) bool {
	_ = c.SetReadDeadline(time.Now().Add(failsafe))
	_, err := br.ReadByte()
	return err == io.EOF
}

// TestStalledBodyIsAnsweredNotHeld: a request that announces a body and
// sends nothing (or part of it) is answered with the status it has coming
// — 401 when it may not be served at all, 408 when its body does not
// arrive within the body timeout — and its connection is closed; it never
// holds the connection. A client that sends its body keeps its
// connection.
func TestStalledBodyIsAnsweredNotHeld(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Limits.ReadTimeout = 300 * time.Millisecond })
	base, err := e.srv.Start(context.Background(), "127.0.0.1:0", "", "")
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(base, "http://")
	head := func(method, path, token string, hdr ...string) string {
		h := method + " " + path + " HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\n"
		if token != "" {
			h += "Authorization: Bearer " + token + "\r\n"
		}
		for _, x := range hdr {
			h += x + "\r\n"
		}
		return h + "\r\n"
	}
	cases := []struct {
		name, head string
		status     int
	}{
		{"no token, body announced, nothing sent", head("POST", "/", "", "Content-Length: 100"), http.StatusUnauthorized},
		{"no token, HTTP+JSON route", head("POST", "/message:send", "", "Content-Length: 100"), http.StatusUnauthorized},
		{"bad token", head("POST", "/", "wrong-token-000000", "Content-Length: 100"), http.StatusUnauthorized},
		{"token, body announced, nothing sent", head("POST", "/", tokAlice, "Content-Length: 100"), http.StatusRequestTimeout},
		{"token, part of the body sent", head("POST", "/", tokAlice, "Content-Length: 100") + `{"jsonrpc":"2.0",`, http.StatusRequestTimeout},
		{"token, chunked body stalls", head("POST", "/", tokAlice, "Transfer-Encoding: chunked") + "10\r\n{\"jsonrpc\":\"2.0\"", http.StatusRequestTimeout},
		{"token, body on a route that reads none", head("GET", "/tasks/00000000-0000-4000-8000-000000000000", tokAlice, "Content-Length: 100"), http.StatusNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := rawRequest(t, addr, tc.head)
			br := bufio.NewReader(c)
			resp, body := readAnswer(t, c, br)
			if resp.StatusCode != tc.status {
				t.Fatalf("HTTP %d %s, want %d", resp.StatusCode, body, tc.status)
			}
			if !strings.Contains(body, `"message"`) {
				t.Errorf("the answer says nothing: %s", body)
			}
			if !closedAfter(c, br) {
				t.Error("the connection stayed open after the answer, though the rest of the body never came")
			}
		})
	}
	t.Run("a client that sends its body keeps its connection", func(t *testing.T) {
		t.Parallel()
		body := `{"jsonrpc":"2.0","id":1,"method":"ListTasks"}`
		one := head("POST", "/", "", fmt.Sprintf("Content-Length: %d", len(body))) + body
		c := rawRequest(t, addr, one)
		br := bufio.NewReader(c)
		for i := 0; i < 2; i++ {
			if resp, b := readAnswer(t, c, br); resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("request %d: HTTP %d %s", i, resp.StatusCode, b)
			}
			if i == 0 {
				if _, err := io.WriteString(c, one); err != nil {
					t.Fatalf("the connection was closed after a refusal whose body was sent: %v", err)
				}
			}
		}
	})
}

// TestAnnouncedBodyLengthIsNotAllocatedUpFront: memory follows the bytes
// that arrive, not the Content-Length a client announces. 32 requests
// announcing 4 MiB each and sending 130 bytes must not make the server
// allocate 128 MiB.
func TestAnnouncedBodyLengthIsNotAllocatedUpFront(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Limits.ReadTimeout = 500 * time.Millisecond })
	base, err := e.srv.Start(context.Background(), "127.0.0.1:0", "", "")
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(base, "http://")
	const n, announced = 32, DefaultMaxBodyBytes
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var wg sync.WaitGroup
	statuses := make([]int, n)
	for i := range n {
		c := rawRequest(t, addr, fmt.Sprintf("POST / HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
			addr, tokAlice, announced, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"`+strings.Repeat("x", 40)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.SetReadDeadline(time.Now().Add(failsafe))
			if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
				statuses[i] = resp.StatusCode
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	runtime.ReadMemStats(&after)
	for i, s := range statuses {
		if s != http.StatusRequestTimeout {
			t.Fatalf("request %d: HTTP %d, want 408", i, s)
		}
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d stalled requests announcing %d bytes each: %d KiB allocated in all", n, announced, allocated>>10)
	if limit := uint64(n) << 20; allocated > limit {
		t.Errorf("%d stalled requests announcing %d bytes made the process allocate %d MiB (more than %d MiB): the announced length is allocated up front",
			n, announced, allocated>>20, limit>>20)
	}
}
