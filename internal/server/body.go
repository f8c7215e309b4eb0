package server

import (
	"io"
	"net/http"
	"time"
)

// maxDrain bounds how long net/http may wait for the rest of a body the
// handler did not read before it answers (see guardBody).
const maxDrain = 2 * time.Second

// guardBody puts a deadline on every read of a request body, so that a
// client announcing a body and then sending nothing (or part of it) is
// answered within the body timeout instead of holding its connection:
//
//   - from the start of the request the body must arrive within
//     Limits.ReadTimeout (readBody answers 408 otherwise);
//   - once the handler answers without having read the whole body (a 401
//     before the body is looked at, a route that takes none), net/http
//     drains what is left, up to 256 KiB, before it writes the answer;
//     that drain gets at most maxDrain (and never more than the body
//     timeout left), after which net/http closes the connection after the
//     answer rather than reuse it;
//   - once the body has been read to its end the deadline is lifted, so
//     that a stream or a long blocking send is not cut by it.
//
// Requests without a body are not touched.
func (s *Server) guardBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		g := &bodyGuard{ResponseWriter: w, rc: *http.NewResponseController(w), body: r.Body,
			deadline: time.Now().Add(s.opts.Limits.ReadTimeout)}
		_ = g.rc.SetReadDeadline(g.deadline)
		// A shallow copy carries the guarded body: net/http keeps looking
		// at the original one (whose type tells it how much is unread).
		r2 := r.WithContext(r.Context())
		r2.Body = (*guardedBody)(g)
		next.ServeHTTP(g, r2)
	})
}

// bodyGuard is the response side of guardBody; guardedBody, the same
// value, is the request body side.
type bodyGuard struct {
	http.ResponseWriter
	rc       http.ResponseController // a value: one allocation less per request
	body     io.ReadCloser
	deadline time.Time
	// read: the body was read to its end (or failed); lifted: the deadline
	// is off.
	read, answered, lifted bool
}

// guardedBody is the request body as the handler reads it.
type guardedBody bodyGuard

func (b *guardedBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if err != nil && !b.read {
		b.read = true
		if err == io.EOF {
			// All of it arrived: no deadline for the rest of the exchange.
			(*bodyGuard)(b).lift()
		}
	}
	return n, err
}

func (b *guardedBody) Close() error { return b.body.Close() }

// answer runs before the first byte of the answer: when the body is not
// read yet, net/http is about to drain it, within maxDrain.
func (g *bodyGuard) answer() {
	if g.answered {
		return
	}
	g.answered = true
	if g.read {
		return
	}
	if d := time.Now().Add(maxDrain); d.Before(g.deadline) {
		_ = g.rc.SetReadDeadline(d)
	}
}

// lift takes the deadline off the connection, once.
func (g *bodyGuard) lift() {
	if !g.lifted {
		g.lifted = true
		_ = g.rc.SetReadDeadline(time.Time{})
	}
}

func (g *bodyGuard) WriteHeader(code int) {
	g.answer()
	g.ResponseWriter.WriteHeader(code)
}

func (g *bodyGuard) Write(b []byte) (int, error) {
	g.answer()
	return g.ResponseWriter.Write(b)
}

// Flush sends the header (and with it net/http's drain of an unread body)
// now; after it the deadline has done its work and is lifted, so a stream
// is not cut by it even when its handler did not read its body to the
// end.
func (g *bodyGuard) Flush() {
	g.answer()
	if f, ok := g.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
	g.lift()
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (g *bodyGuard) Unwrap() http.ResponseWriter { return g.ResponseWriter }
