package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// jsonrpcBinding is the JSON-RPC binding: POST / (and /a2a, /rpc), v1.0
// and 0.3 method names, results in a JSON-RPC envelope, streams as SSE
// events each holding a JSON-RPC response. Its own steps, between the
// handler's: body size, Content-Type, nesting depth, UTF-8, envelope,
// method (between Admit and Authorize), params (between Authorize and the
// operation).
type jsonrpcBinding struct{ httpBinding }

// rpcExchange is what the JSON-RPC binding keeps of one exchange beside
// the Call: the request id its answers echo.
type rpcExchange struct {
	c  *Call
	id json.RawMessage
}

// emptyObject is the v1.0 result of DeleteTaskPushNotificationConfig
// (google.protobuf.Empty).
var emptyObject = json.RawMessage("{}")

func (b *jsonrpcBinding) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, c, err := b.h.Admit(r.Context(), b.peer(r, a2a.BindingJSONRPC))
	defer b.h.Finish(c)
	ex := &rpcExchange{c: c}
	if err != nil {
		b.refuse(w, ex, RefusalOf(err))
		return
	}

	buf := pooledBody()
	defer releaseBody(buf)
	if rf := b.readBody(r, buf); rf != nil {
		b.refuse(w, ex, rf)
		return
	}
	body := buf.Bytes()
	c.BytesIn = int64(len(body))

	if ct := headerValue(r.Header, "Content-Type"); ct != "" && !isJSONContentType(ct) {
		if req, _ := a2a.ParseRequest(body); req != nil {
			ex.id = req.ResponseID()
			c.Method = req.Method
		}
		b.refuse(w, ex, refusal(errContentType(ct)))
		return
	}
	if r := b.checkJSON(body); r != nil {
		b.refuse(w, ex, r)
		return
	}
	req, perr := a2a.ParseRequest(body)
	if perr != nil {
		if req != nil {
			ex.id = req.ResponseID()
		}
		b.refuse(w, ex, refusal(perr))
		return
	}
	// Copy the id: body goes back to the pool when the handler returns.
	ex.id = append(json.RawMessage(nil), req.ResponseID()...)
	c.Method = req.Method
	if req.IsNotification() {
		// JSON-RPC: a notification gets no response. A2A has no
		// notification methods, so nothing is processed (see doc.go).
		c.status = http.StatusNoContent
		w.WriteHeader(http.StatusNoContent)
		return
	}
	op, v03, ok := lookupMethod(req.Method)
	if !ok {
		b.refuse(w, ex, refusal(a2a.ErrMethodNotFound(req.Method)))
		return
	}
	c.Op, c.V03 = op, v03
	if err := routeTenant(ctx, b.h, c, func() string { return paramsTenant(req.Params) }); err != nil {
		b.refuse(w, ex, RefusalOf(err))
		return
	}
	if err := b.h.Authorize(ctx, c); err != nil {
		echoExtensions(w, c)
		b.refuse(w, ex, RefusalOf(err))
		return
	}
	echoExtensions(w, c)
	params, e := decodeParams(op, v03, req.Params)
	if e != nil {
		b.refuse(w, ex, refusal(e))
		return
	}
	b.serve(ctx, w, r, ex, params)
}

// serve runs the operation and writes its answer: the result (in 0.3
// shapes for a 0.3 method), or the stream.
func (b *jsonrpcBinding) serve(ctx context.Context, w http.ResponseWriter, r *http.Request, ex *rpcExchange, params any) {
	c := ex.c
	res, st, err := invoke(ctx, b.h, c, params)
	if err != nil {
		b.refuse(w, ex, RefusalOf(err))
		return
	}
	if st != nil {
		b.stream(ctx, w, st, &sseSink{b: &b.httpBinding, c: c, rpcID: ex.id})
		return
	}
	if c.Op == a2a.OpDeletePushConfig {
		res = emptyObject
	}
	if c.V03 {
		res = v03Result(res)
	}
	// The answer is encoded into a pooled buffer: w.Write has copied or
	// sent it by the time it returns.
	out := pooledBody()
	defer releaseBody(out)
	body, encErr := a2a.AppendResult(out.AvailableBuffer(), ex.id, res)
	if encErr != nil {
		b.log.Error("encoding a response failed", c.logArgs("error", encErr)...)
		b.refuse(w, ex, refusal(errInternal()))
		return
	}
	b.writeBody(w, c, nil, body)
	if cap(body) > out.Cap() {
		// It grew past the pooled buffer: keep the larger one for next time.
		*out = *bytes.NewBuffer(body[:0])
	}
}

// refuse answers with a JSON-RPC error (0.3 data shape for a 0.3 method),
// with the HTTP status of the refusal's class, and records it.
func (b *jsonrpcBinding) refuse(w http.ResponseWriter, ex *rpcExchange, r *Refusal) {
	ex.c.Refused(r)
	refusalHeaders(w, r)
	ex.c.BytesOut += int64(writeJSONRPCBody(w, r.Status, encodeRPCError(ex.id, r.Err, ex.c.V03)))
}
