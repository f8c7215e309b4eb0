package a2av03

import (
	"encoding/json"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// errorWire is the 0.3 JSON form of an a2a.Error: `data` is one object,
// not the v1.0 array of @type objects.
type errorWire struct {
	Code    int        `json:"code"`
	Message string     `json:"message"`
	Data    *errorData `json:"data,omitempty"`
}

// errorData is the `data` object of a 0.3 error.
type errorData struct {
	Reason   string            `json:"reason,omitempty"`
	Domain   string            `json:"domain,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`
	Details  []any             `json:"details,omitempty"`
}

// toErrorWire returns the 0.3 form of e; data is nil when there is
// nothing to say.
func toErrorWire(e *a2a.Error, details []any) errorWire {
	w := errorWire{Code: e.Code, Message: e.Message}
	if e.Reason != "" || len(details) > 0 {
		w.Data = &errorData{Reason: e.Reason, Metadata: e.Metadata, Details: details}
		if e.Reason != "" {
			w.Data.Domain = a2a.ErrorDomain
		}
	}
	return w
}

// EncodeError encodes a JSON-RPC error response to a 0.3 method with the
// given request id (nil → null). `data` is encoded as 0.3 clients decode
// it: one JSON object, not the v1.0 array of @type objects (the official
// a2a-go 0.3 client, for one, reads `data` into a map and fails on an
// array). The object carries the ErrorInfo's reason, domain and metadata
// as members, and the other details under "details":
//
//	{"code": -32001, "message": "...", "data": {"reason": "TASK_NOT_FOUND",
//	  "domain": "a2a-protocol.org", "metadata": {"taskId": "t1"}}}
//
// The envelope is a2a.EncodeError's; a peer's 0.3 error reads back with
// a2a.Error's UnmarshalJSON.
func EncodeError(id json.RawMessage, e *a2a.Error) []byte {
	b, err := a2a.Marshal(toErrorWire(e, e.Details))
	if err != nil {
		// Error's fields are strings and string maps plus caller-supplied
		// details; if a detail cannot be encoded, drop the details.
		b, _ = a2a.Marshal(toErrorWire(e, nil))
	}
	out := make([]byte, 0, len(b)+len(id)+32)
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	if len(id) == 0 {
		out = append(out, "null"...)
	} else {
		out = append(out, id...)
	}
	out = append(out, `,"error":`...)
	out = append(out, b...)
	return append(out, '}')
}
