package server

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// The gRPC binding shares the HTTP port. On a plaintext port a gRPC
// client speaks HTTP/2 with prior knowledge (h2c): its connection opens
// with the HTTP/2 client preface, which no HTTP/1.1 request begins with,
// so connMux hands each connection to the HTTP server or to the gRPC
// server by its first bytes — a plain gRPC client dials host:port and
// reaches the native gRPC transport. Both servers sit behind the one
// connection limiter (Limits.MaxConnections); an h2c connection without
// calls is idle there, as a keep-alive connection between requests is
// (connCreds). Over TLS the HTTP server
// negotiates HTTP/2 (ALPN h2) and passes requests with a gRPC
// Content-Type to the gRPC server (grpc.Server.ServeHTTP), under the same
// certificate.

// h2Preface is what an HTTP/2 client sends first (RFC 9113 §3.4).
var h2Preface = []byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")

// connMux splits the connections of one listener between the HTTP server
// and the gRPC server by their first bytes.
type connMux struct {
	ln net.Listener
	// sniffTimeout bounds the wait for a connection's first bytes.
	sniffTimeout time.Duration
	http, grpc   *chanListener
}

func newConnMux(ln net.Listener, sniffTimeout time.Duration) *connMux {
	return &connMux{ln: ln, sniffTimeout: sniffTimeout, http: newChanListener(ln.Addr()), grpc: newChanListener(ln.Addr())}
}

// serve accepts connections until the listener is closed, then closes
// both sides.
func (m *connMux) serve() {
	defer m.http.Close()
	defer m.grpc.Close()
	for {
		c, err := m.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return
		}
		go m.route(c)
	}
}

// route reads as much of the connection's start as tells the HTTP/2
// preface from anything else, and hands the connection, those bytes
// unread again, to its server.
func (m *connMux) route(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(m.sniffTimeout))
	var buf [24]byte
	n, h2 := 0, true
	for n < len(h2Preface) {
		k, err := c.Read(buf[n:])
		if !bytes.Equal(buf[n:n+k], h2Preface[n:n+k]) {
			h2 = false
		}
		n += k
		if !h2 || err != nil {
			if err != nil && n == 0 {
				_ = c.Close() // nothing came: nothing to answer
				return
			}
			h2 = h2 && err == nil
			break
		}
	}
	_ = c.SetReadDeadline(time.Time{})
	pc := &prefixConn{Conn: c, prefix: append([]byte(nil), buf[:n]...)}
	if h2 {
		m.grpc.put(pc)
	} else {
		m.http.put(pc)
	}
}

// Close closes the listener (the servers' listeners follow).
func (m *connMux) Close() error { return m.ln.Close() }

// chanListener is a net.Listener fed by connMux.
type chanListener struct {
	addr  net.Addr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newChanListener(addr net.Addr) *chanListener {
	return &chanListener{addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
}

// put hands c to the server accepting on l, or closes it when l is
// closed.
func (l *chanListener) put(c net.Conn) {
	select {
	case l.conns <- c:
	case <-l.done:
		_ = c.Close()
	}
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *chanListener) Addr() net.Addr { return l.addr }

// prefixConn is a connection whose first bytes were read to route it:
// they are read again first.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixConn) Read(p []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(p, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// CloseWrite half-closes the connection, as net/http does before closing
// a connection it refused.
func (c *prefixConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

var _ io.Reader = (*prefixConn)(nil)
