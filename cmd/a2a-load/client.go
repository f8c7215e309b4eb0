package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// client sends one JSON-RPC POST at a time on its own connection. A
// response body must be read (or abandoned with release(false)) before the
// next send.
type client interface {
	send(body []byte) (response, error)
	release(reusable bool)
	abort() // from another goroutine: unblock and refuse further sends
}

// response is the part of an HTTP response the load tool looks at.
type response struct {
	status int
	sse    bool // Content-Type: text/event-stream
	body   io.Reader
}

// ---- net/http ---------------------------------------------------------

// stdClient goes through a shared http.Transport. Each request is a copy
// of a template with its own copy of the body: the transport's write loop
// may still be finishing with a request when its response has arrived, so
// neither can be reused safely.
type stdClient struct {
	tr   *http.Transport
	tmpl *http.Request
	resp *http.Response
}

func newStdTransport(cfg Config) *http.Transport {
	return &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          cfg.Concurrency + 16,
		MaxIdleConnsPerHost:   cfg.Concurrency + 16,
		IdleConnTimeout:       90 * time.Second,
		DisableCompression:    true,
		ResponseHeaderTimeout: cfg.Timeout,
		WriteBufferSize:       8 << 10,
		ReadBufferSize:        16 << 10,
	}
}

func newStdClient(ctx context.Context, tr *http.Transport, u *url.URL, h http.Header) *stdClient {
	c := &stdClient{tr: tr}
	c.tmpl = (&http.Request{
		Method:     http.MethodPost,
		URL:        u,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     h.Clone(),
		Host:       u.Host,
	}).WithContext(ctx)
	return c
}

func (c *stdClient) send(body []byte) (response, error) {
	req := new(http.Request)
	*req = *c.tmpl
	req.Body = io.NopCloser(bytes.NewReader(bytes.Clone(body)))
	req.ContentLength = int64(len(body))
	resp, err := c.tr.RoundTrip(req)
	if err != nil {
		return response{}, err
	}
	c.resp = resp
	ct := resp.Header.Get("Content-Type")
	return response{status: resp.StatusCode, sse: hasPrefixFold([]byte(ct), eventStream), body: resp.Body}, nil
}

func (c *stdClient) release(bool) {
	if c.resp != nil {
		c.resp.Body.Close()
		c.resp = nil
	}
}

func (c *stdClient) abort() {} // the request context does it

// ---- raw HTTP/1.1 -----------------------------------------------------

// rawClient speaks just enough HTTP/1.1 for this tool over one keep-alive
// connection: one write per request, responses with Content-Length, chunked
// bodies (SSE) or bodies up to EOF. It does in one goroutine what net/http
// does in three (caller, read loop, write loop), which on a two-core box
// halves the load tool's CPU per request and leaves it to the server.
type rawClient struct {
	addr    string
	head    []byte // request line and fixed headers, up to Content-Length
	timeout time.Duration

	mu      sync.Mutex // guards conn against abort
	conn    net.Conn
	aborted atomic.Bool

	br     *bufio.Reader
	wbuf   []byte
	lr     io.LimitedReader
	cr     chunkedReader
	eof    eofReader
	closeC bool // the server asked to close after this response
}

func newRawClient(u *url.URL, h http.Header, timeout time.Duration) *rawClient {
	path := u.RequestURI()
	head := []byte("POST " + path + " HTTP/1.1\r\nHost: " + u.Host + "\r\n")
	for k, vs := range h {
		for _, v := range vs {
			head = append(head, k+": "+v+"\r\n"...)
		}
	}
	head = append(head, "Content-Length: "...)
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	return &rawClient{addr: addr, head: head, timeout: timeout, br: bufio.NewReaderSize(nil, 16<<10)}
}

var errAborted = errors.New("run ended")

func (c *rawClient) dial() error {
	conn, err := net.DialTimeout("tcp", c.addr, 5*time.Second)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.aborted.Load() {
		conn.Close()
		return errAborted
	}
	c.conn = conn
	c.br.Reset(conn)
	return nil
}

func (c *rawClient) closeConn() {
	c.mu.Lock()
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
	c.mu.Unlock()
}

func (c *rawClient) abort() {
	c.aborted.Store(true)
	c.mu.Lock()
	if c.conn != nil {
		c.conn.SetDeadline(time.Unix(1, 0))
	}
	c.mu.Unlock()
}

func (c *rawClient) send(body []byte) (response, error) {
	if c.conn == nil {
		if err := c.dial(); err != nil {
			return response{}, err
		}
	}
	w := append(c.wbuf[:0], c.head...)
	w = strconv.AppendInt(w, int64(len(body)), 10)
	w = append(w, "\r\n\r\n"...)
	w = append(w, body...)
	c.wbuf = w
	if err := c.conn.SetDeadline(time.Now().Add(c.timeout)); err != nil {
		c.closeConn()
		return response{}, err
	}
	if c.aborted.Load() { // abort's past deadline may have been overwritten
		return response{}, errAborted
	}
	if _, err := c.conn.Write(w); err != nil {
		c.closeConn()
		return response{}, err
	}
	resp, err := c.readHead()
	if err != nil {
		c.closeConn()
		return response{}, err
	}
	return resp, nil
}

var (
	hdrContentLength = []byte("Content-Length")
	hdrTransferEnc   = []byte("Transfer-Encoding")
	hdrContentType   = []byte("Content-Type")
	hdrConnection    = []byte("Connection")
	chunkedToken     = []byte("chunked")
	closeToken       = []byte("close")
	httpPrefix       = []byte("HTTP/1.")
)

// readHead reads the status line and headers and sets up the body reader.
func (c *rawClient) readHead() (response, error) {
	for {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return response{}, err
		}
		// "HTTP/1.1 200 OK"
		if len(line) < 12 || !bytes.HasPrefix(line, httpPrefix) {
			return response{}, fmt.Errorf("malformed status line %q", line)
		}
		status, ok := parseUint(line[9:12], 10)
		if !ok {
			return response{}, fmt.Errorf("malformed status line %q", line)
		}
		resp := response{status: int(status)}
		length, chunked := int64(-1), false
		c.closeC = line[7] == '0' // HTTP/1.0
		for {
			h, err := c.br.ReadSlice('\n')
			if err != nil {
				return response{}, err
			}
			h = bytes.TrimRight(h, "\r\n")
			if len(h) == 0 {
				break
			}
			name, value, ok := bytes.Cut(h, []byte(":"))
			if !ok {
				continue
			}
			value = bytes.TrimSpace(value)
			switch {
			case bytes.EqualFold(name, hdrContentLength):
				n, ok := parseUint(value, 10)
				if !ok {
					return response{}, fmt.Errorf("bad Content-Length %q", value)
				}
				length = n
			case bytes.EqualFold(name, hdrTransferEnc):
				chunked = hasPrefixFold(value, chunkedToken)
			case bytes.EqualFold(name, hdrContentType):
				resp.sse = hasPrefixFold(value, eventStream)
			case bytes.EqualFold(name, hdrConnection):
				if bytes.EqualFold(value, closeToken) {
					c.closeC = true
				}
			}
		}
		if status >= 100 && status < 200 {
			continue // an interim response; the real one follows
		}
		switch {
		case chunked:
			c.cr = chunkedReader{br: c.br}
			resp.body = &c.cr
		case length >= 0:
			c.lr = io.LimitedReader{R: c.br, N: length}
			resp.body = &c.lr
		default:
			c.closeC = true
			c.eof = eofReader{br: c.br}
			resp.body = &c.eof
		}
		return resp, nil
	}
}

// release keeps the connection for the next request only when the whole
// body was read and the server did not ask to close.
func (c *rawClient) release(reusable bool) {
	if !reusable || c.closeC || c.lr.N > 0 || (c.cr.br != nil && !c.cr.done) {
		c.closeConn()
	}
	c.lr = io.LimitedReader{}
	c.cr = chunkedReader{}
}

// chunkedReader decodes a chunked body from br (RFC 9112 §7.1).
type chunkedReader struct {
	br   *bufio.Reader
	left int64 // bytes left in the current chunk
	done bool
	err  error
}

func (r *chunkedReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if r.done {
		return 0, io.EOF
	}
	if r.left == 0 {
		line, err := r.br.ReadSlice('\n')
		if err != nil {
			r.err = err
			return 0, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		n, ok := parseUint(bytes.TrimSpace(line), 16)
		if !ok {
			r.err = fmt.Errorf("bad chunk size %q", line)
			return 0, r.err
		}
		if n == 0 {
			// Trailers, then the blank line that ends the body.
			for {
				t, err := r.br.ReadSlice('\n')
				if err != nil {
					r.err = err
					return 0, err
				}
				if len(bytes.TrimRight(t, "\r\n")) == 0 {
					break
				}
			}
			r.done = true
			return 0, io.EOF
		}
		r.left = n
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.br.Read(p)
	r.left -= int64(n)
	if err != nil {
		r.err = err
		return n, err
	}
	if r.left == 0 {
		if _, err := r.br.Discard(2); err != nil { // the CRLF after the data
			r.err = err
			return n, err
		}
	}
	return n, nil
}

// eofReader reads a body that ends when the server closes the connection.
type eofReader struct{ br *bufio.Reader }

func (r *eofReader) Read(p []byte) (int, error) { return r.br.Read(p) }

func hasPrefixFold(b, prefix []byte) bool {
	return len(b) >= len(prefix) && bytes.EqualFold(b[:len(prefix)], prefix)
}

// parseUint parses a decimal or hexadecimal number without allocating.
func parseUint(b []byte, base int64) (int64, bool) {
	if len(b) == 0 || len(b) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		var d int64
		switch {
		case '0' <= c && c <= '9':
			d = int64(c - '0')
		case base == 16 && 'a' <= c && c <= 'f':
			d = int64(c-'a') + 10
		case base == 16 && 'A' <= c && c <= 'F':
			d = int64(c-'A') + 10
		default:
			return 0, false
		}
		n = n*base + d
	}
	return n, true
}
