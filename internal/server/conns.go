package server

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/credentials"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// busyRetryAfter is the Retry-After of the refusals a full server
// answers: past Limits.MaxConnections or Limits.MaxStreams.
const busyRetryAfter = 5 * time.Second

// minIdleToEvict is how long a keep-alive connection must have waited
// between requests before a new connection may take its place: a client
// that is using its connection keeps it, however many others knock.
const minIdleToEvict = 5 * time.Second

// minFreshToEvict is how long a connection that has not yet made its
// first request (its headers not read yet, or, over h2c, no call
// started) must have been open before a new connection may take its
// place when the server is full: none. A flood of connections that send
// nothing (or a few bytes) would otherwise hold every place until its
// header timeout; the oldest of them gives way to each newcomer, so a
// client that speaks at once is served while one source floods, unless
// the flood opens max_connections connections before the client's
// request headers arrive. (A floor here would not protect a slow client:
// the flood's own connections take each place the moment it is free.)
const minFreshToEvict = 0

// maxRefusing bounds the refused connections being answered at once;
// past it a refused connection is closed without an answer, so a flood
// of connections cannot make the refusals themselves a cost.
const maxRefusing = 64

// connLimiter caps the server's open connections at Limits.MaxConnections
// (Start wraps its listener with it; a Handler mounted elsewhere is
// bounded by its own server). A connection past the cap first takes the
// place of the longest-idle keep-alive connection idle for minIdleToEvict
// at least, which is closed (its client reconnects when it needs to);
// else of the oldest connection that has not made its first request
// (one that sent nothing, or part of its headers, or of the HTTP/2
// preface; minFreshToEvict); when there is none, the new one is answered
// HTTP 503 with a JSON-RPC error saying what to do (a gRPC client: the
// status UNAVAILABLE with that message), and closed. So clients that hold and use their
// connections are served however many others knock, and busy connections
// cannot stay forever: header, body and write deadlines end those that
// stall.
type connLimiter struct {
	max int
	log hclog.Logger
	// minIdle is minIdleToEvict, minFresh minFreshToEvict (tests change
	// them).
	minIdle, minFresh time.Duration
	// refusal is the whole HTTP answer written to a refused connection;
	// grpcRefusal the message of the status a refused gRPC call gets.
	refusal     []byte
	grpcRefusal string

	mu    sync.Mutex
	conns map[*limitedConn]struct{}
	// refused counts refusals since the last warning in the log.
	refused  int
	warnedAt time.Time
	// gaveWay counts the connections without a request closed to admit
	// new ones since the last warning about them.
	gaveWay         int
	gaveWayWarnedAt time.Time
	refusing        atomic.Int32
}

func newConnLimiter(max int, log hclog.Logger) *connLimiter {
	e := a2a.NewError(a2a.CodeInternalError, reasonServerBusy, fmt.Sprintf(
		"The agent is serving its maximum of %d connections (max_connections, A2A_MAX_CONNECTIONS) and took no new one; "+
			"retry in a few seconds, and reuse connections (HTTP keep-alive) rather than opening one per request", max)).
		WithMetadata("maxConnections", strconv.Itoa(max))
	body := a2a.EncodeError(nil, e)
	head := "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nCache-Control: no-store\r\n" +
		"Retry-After: " + retryAfter(busyRetryAfter) + "\r\nConnection: close\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
	return &connLimiter{max: max, log: log, minIdle: minIdleToEvict, minFresh: minFreshToEvict,
		refusal: append([]byte(head), body...), grpcRefusal: e.Message, conns: map[*limitedConn]struct{}{}}
}

// limitedConn is one admitted connection.
type limitedConn struct {
	net.Conn
	l    *connLimiter
	once sync.Once
	// idleSince is set while the connection waits between requests
	// (guarded by l.mu).
	idleSince time.Time
	// calls counts the gRPC calls the connection carries (guarded by
	// l.mu): an h2c connection is idle while it carries none.
	calls int
	// fresh: the connection has not made its first request yet (its
	// first request headers not read, no gRPC call started); since is
	// when it was admitted (both guarded by l.mu).
	fresh bool
	since time.Time
}

// callStarted marks the gRPC connection in use for one more call.
func (c *limitedConn) callStarted() {
	c.l.mu.Lock()
	c.calls++
	c.idleSince, c.fresh = time.Time{}, false
	c.l.mu.Unlock()
}

// callEnded marks the gRPC connection idle once its last call ended.
func (c *limitedConn) callEnded() {
	c.l.mu.Lock()
	if c.calls--; c.calls <= 0 {
		c.calls, c.idleSince = 0, time.Now()
	}
	c.l.mu.Unlock()
}

// connCreds is the plaintext gRPC transport of the shared port, whose
// AuthInfo carries the connection's place under the cap (connInfo), so
// that its calls mark it in use and an h2c connection without calls can
// make room as an idle keep-alive connection does. It makes a new
// connection idle at once: its client already spoke (the preface), as a
// keep-alive connection has after its first request.
type connCreds struct {
	credentials.TransportCredentials
}

// connInfo is the AuthInfo of a connection connCreds admitted.
type connInfo struct {
	credentials.AuthInfo
	conn *limitedConn
}

func (cc connCreds) ServerHandshake(raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info, err := cc.TransportCredentials.ServerHandshake(raw)
	if pc, ok := raw.(*prefixConn); ok && err == nil {
		if lc, ok := pc.Conn.(*limitedConn); ok {
			lc.callEnded()
			info = connInfo{AuthInfo: info, conn: lc}
		}
	}
	return conn, info, err
}

func (cc connCreds) Clone() credentials.TransportCredentials {
	return connCreds{cc.TransportCredentials.Clone()}
}

// Close frees the connection's place.
func (c *limitedConn) Close() error {
	c.once.Do(func() { c.l.remove(c) })
	return c.Conn.Close()
}

// CloseWrite half-closes a TCP connection: net/http does so before it
// closes a connection it refused (431, 400), so that the client reads the
// answer instead of a reset.
func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// listener wraps ln so that every accepted connection passes admit.
func (l *connLimiter) listener(ln net.Listener, tlsOn bool) net.Listener {
	return &limitListener{Listener: ln, l: l, tls: tlsOn}
}

type limitListener struct {
	net.Listener
	l   *connLimiter
	tls bool
}

// Accept returns the next admitted connection; refused ones are answered
// (or closed) on the side and never reach the HTTP server.
func (ll *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := ll.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if lc := ll.l.admit(c); lc != nil {
			return lc, nil
		}
		ll.l.refuse(c, ll.tls)
	}
}

// admit takes a place for c, making room when the server is full by
// closing the longest-idle connection, else the oldest one without a
// request; nil means there is none.
func (l *connLimiter) admit(c net.Conn) *limitedConn {
	var evict *limitedConn
	l.mu.Lock()
	if len(l.conns) >= l.max {
		now := time.Now()
		for other := range l.conns {
			if !other.idleSince.IsZero() && now.Sub(other.idleSince) >= l.minIdle && (evict == nil || other.idleSince.Before(evict.idleSince)) {
				evict = other
			}
		}
		if evict == nil {
			// A connection that has not asked for anything yet gives way
			// (its client, if it is one, reconnects).
			for other := range l.conns {
				if other.fresh && now.Sub(other.since) >= l.minFresh && (evict == nil || other.since.Before(evict.since)) {
					evict = other
				}
			}
			if evict != nil {
				l.gaveWay++
				if now.Sub(l.gaveWayWarnedAt) > 10*time.Second {
					l.log.Warn("connection limit reached: closing connections that made no request to admit new ones (many clients connecting without sending, or a flood of idle connections; raise max_connections if this is legitimate load)",
						"max_connections", l.max, "closed", l.gaveWay)
					l.gaveWayWarnedAt, l.gaveWay = now, 0
				}
			}
		}
		if evict == nil {
			l.refused++
			if now.Sub(l.warnedAt) > 10*time.Second {
				l.log.Warn("connection limit reached: refusing new connections with HTTP 503 (raise max_connections if this is legitimate load)",
					"max_connections", l.max, "refused", l.refused)
				l.warnedAt, l.refused = now, 0
			}
			l.mu.Unlock()
			return nil
		}
		delete(l.conns, evict)
	}
	lc := &limitedConn{Conn: c, l: l, fresh: true, since: time.Now()}
	l.conns[lc] = struct{}{}
	l.mu.Unlock()
	if evict != nil {
		_ = evict.Close()
	}
	return lc
}

func (l *connLimiter) remove(c *limitedConn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
}

// refuse answers a connection past the cap with HTTP 503 and closes it,
// in the background and bounded: the client's request is read (up to a
// little) after the answer so that closing does not reset the connection
// before the client has read why.
func (l *connLimiter) refuse(c net.Conn, tlsOn bool) {
	if tlsOn || l.refusing.Add(1) > maxRefusing {
		if !tlsOn {
			l.refusing.Add(-1)
		}
		_ = c.Close() // no HTTP before a TLS handshake, which would cost more
		return
	}
	go func() {
		defer l.refusing.Add(-1)
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(time.Second))
		// A gRPC client opens with the HTTP/2 preface and cannot read an
		// HTTP/1.1 answer ("frame too large"): it gets a gRPC status.
		if _, h2 := readStart(c); h2 {
			refuseH2(c, l.grpcRefusal)
			return
		}
		if _, err := c.Write(l.refusal); err != nil {
			return
		}
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		var buf [4096]byte
		for range 4 {
			if _, err := c.Read(buf[:]); err != nil {
				return
			}
		}
	}()
}

// track follows the HTTP server's view of each connection (its
// ConnState hook): idle connections may make room for new ones.
func (l *connLimiter) track(c net.Conn, st http.ConnState) {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if pc, ok := c.(*prefixConn); ok {
		c = pc.Conn
	}
	lc, ok := c.(*limitedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if st == http.StateActive || st == http.StateIdle {
		lc.fresh = false // its first request's headers are read
	}
	if st == http.StateIdle {
		lc.idleSince = time.Now()
	} else {
		lc.idleSince = time.Time{}
	}
}

// open is the number of admitted connections.
func (l *connLimiter) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

// idle is the number of admitted connections waiting between requests.
func (l *connLimiter) idle() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for c := range l.conns {
		if !c.idleSince.IsZero() {
			n++
		}
	}
	return n
}
