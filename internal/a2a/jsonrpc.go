package a2a

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// JSONRPCVersion is the value of the `jsonrpc` member.
const JSONRPCVersion = "2.0"

// utf8BOM is the byte order mark some clients put before a JSON body; it
// is skipped.
var utf8BOM = []byte("\xef\xbb\xbf")

// nullID is the id of a response to a request whose id could not be read.
var nullID = json.RawMessage("null")

// Request is a JSON-RPC 2.0 request object.
type Request struct {
	// JSONRPC is always "2.0".
	JSONRPC string `json:"jsonrpc"`
	// ID is the raw JSON id: a string, a number or null. It is nil for a
	// notification (no id member), which expects no response.
	ID json.RawMessage `json:"id,omitempty"`
	// Method is the method name, e.g. "SendMessage" or "message/send".
	Method string `json:"method"`
	// Params is the raw params object; nil when absent or null.
	Params json.RawMessage `json:"params,omitempty"`
}

// IsNotification reports whether the request has no id member.
func (r *Request) IsNotification() bool { return r.ID == nil }

// ResponseID returns the id to echo in the response: ID, or null for a
// request without one.
func (r *Request) ResponseID() json.RawMessage {
	if r == nil || len(r.ID) == 0 {
		return nullID
	}
	return r.ID
}

// ParseRequest reads one JSON-RPC request from an HTTP body. It returns
// -32700 (ParseError) when the body is not JSON, and -32600
// (InvalidRequest) when it is not a single request object: a batch array,
// another JSON type, `jsonrpc` other than "2.0", a missing or non-string
// `method`, an `id` that is not a string, number or null, or `params`
// that is not an object or array. On -32600 the returned Request, when
// not nil, carries the id to echo (see ResponseID).
//
// A well-formed body takes a fast path that scans the envelope without
// allocating and slices its members out of the body (Params and ID alias
// body); anything unusual — escaped keys or method, an unknown method,
// duplicate members, a member of the wrong type — is left to
// encoding/json, so the result and the errors are exactly the same.
func ParseRequest(body []byte) (*Request, *Error) {
	if req, ok := parseRequestFast(body); ok {
		return req, nil
	}
	return parseRequest(body)
}

// parseRequest is ParseRequest through encoding/json.
func parseRequest(body []byte) (*Request, *Error) {
	b := bytes.TrimSpace(bytes.TrimPrefix(body, utf8BOM))
	if len(b) == 0 {
		return nil, ErrParse("the body is empty")
	}
	if b[0] != '{' {
		if !json.Valid(b) {
			return nil, ErrParse("")
		}
		if b[0] == '[' {
			return nil, ErrInvalidRequest("batch requests are not supported: send one request object per HTTP request")
		}
		return nil, ErrInvalidRequest("the body must be a JSON-RPC 2.0 request object")
	}
	var w struct {
		JSONRPC json.RawMessage `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, ErrParse(fmt.Sprintf("syntax error at byte %d", se.Offset))
		}
		return nil, ErrParse(err.Error())
	}
	req := &Request{JSONRPC: JSONRPCVersion}
	if w.ID != nil {
		switch c := w.ID[0]; {
		case c == '"', c == '-', c >= '0' && c <= '9', string(w.ID) == "null":
			req.ID = w.ID
		default:
			return nil, ErrInvalidRequest("id must be a string, a number or null")
		}
	}
	if string(w.JSONRPC) != `"2.0"` {
		return req, ErrInvalidRequest(`jsonrpc must be the string "2.0"`)
	}
	if len(w.Method) == 0 || string(w.Method) == "null" {
		return req, ErrInvalidRequest("method is missing: name the operation, e.g. \"method\": \"SendMessage\"")
	}
	if w.Method[0] != '"' {
		return req, ErrInvalidRequest("method must be a string, e.g. \"SendMessage\"")
	}
	var method string
	if err := json.Unmarshal(w.Method, &method); err != nil || method == "" {
		return req, ErrInvalidRequest("method must be a non-empty string, e.g. \"SendMessage\"")
	}
	req.Method = method
	if len(w.Params) > 0 && string(w.Params) != "null" {
		if w.Params[0] != '{' && w.Params[0] != '[' {
			return req, ErrInvalidRequest("params must be an object")
		}
		req.Params = w.Params
	}
	return req, nil
}

// Members of the envelope, as bits.
const (
	memberJSONRPC = 1 << iota
	memberID
	memberMethod
	memberParams
)

// envelopeMembers are the members' names, for foldsToAny.
var envelopeMembers = [...]string{"jsonrpc", "id", "method", "params"}

// parseRequestFast is ParseRequest's allocation-light path; ok is false
// when the body needs encoding/json.
func parseRequestFast(b []byte) (*Request, bool) {
	if !json.Valid(b) {
		return nil, false
	}
	req := &Request{JSONRPC: JSONRPCVersion}
	seen := 0
	handled, _ := objectMembers(b, func(key, val []byte) (bool, error) {
		var bit int
		switch string(key) {
		case "jsonrpc":
			if string(val) != `"2.0"` {
				return false, nil
			}
			bit = memberJSONRPC
		case "id":
			switch c := val[0]; {
			case c == '"', c == '-', c >= '0' && c <= '9', string(val) == "null":
				req.ID = val
			default:
				return false, nil
			}
			bit = memberID
		case "method":
			if val[0] != '"' {
				return false, nil
			}
			name := val[1 : len(val)-1]
			if e, ok := methodTable[string(name)]; ok {
				req.Method = e.name
			} else if plainName(name) {
				req.Method = string(name) // a 0.3 name (package a2av03) or unknown
			} else {
				return false, nil // empty, escaped or not UTF-8: encoding/json decides
			}
			bit = memberMethod
		case "params":
			switch val[0] {
			case '{', '[':
				req.Params = val
			case 'n':
				// null: absent
			default:
				return false, nil
			}
			bit = memberParams
		default:
			// encoding/json matches member names case-insensitively.
			return !foldsToAny(key, envelopeMembers[:]), nil
		}
		if seen&bit != 0 {
			return false, nil // a duplicate member: encoding/json's rule
		}
		seen |= bit
		return true, nil
	})
	if !handled || seen&memberJSONRPC == 0 || seen&memberMethod == 0 {
		return nil, false
	}
	return req, true
}

// plainName reports whether the contents of a JSON string decode to
// themselves: non-empty, no escape, valid UTF-8 (encoding/json replaces
// invalid bytes).
func plainName(b []byte) bool {
	return len(b) > 0 && bytes.IndexByte(b, '\\') < 0 && utf8.Valid(b)
}

// DecodeParams decodes the params leniently (see Unmarshal) into v;
// absent params decode as {}. A failure is a -32602 error naming the
// offending field where encoding/json reports one.
func (r *Request) DecodeParams(v any) *Error {
	p := r.Params
	if len(p) == 0 {
		p = json.RawMessage("{}")
	}
	if err := Unmarshal(p, v); err != nil {
		return paramsDecodeError(err)
	}
	return nil
}

// paramsDecodeError turns a decoding error into -32602.
func paramsDecodeError(err error) *Error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		// Custom decoders embed their struct as "plain"; drop that level.
		field := strings.TrimPrefix(strings.ReplaceAll(te.Field, ".plain.", "."), "plain.")
		if field == "" {
			field = "params"
		}
		switch te.Type {
		case reflect.TypeFor[TaskState](), reflect.TypeFor[Role](), reflect.TypeFor[flexInt32](), reflect.TypeFor[Timestamp](), reflect.TypeFor[Part]():
			return ErrInvalidParams(field, te.Value)
		}
		return ErrInvalidParams(field, fmt.Sprintf("expected %s, got JSON %s", jsonTypeName(te.Type), te.Value))
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return ErrInvalidParams("params", fmt.Sprintf("not valid JSON (syntax error at byte %d)", se.Offset))
	}
	return ErrInvalidParams("params", err.Error())
}

// MarshalRequest encodes a request with the given id (string, integer or
// json.RawMessage), method and params (nil for none).
func MarshalRequest(id any, method string, params any) ([]byte, error) {
	var rawID json.RawMessage
	switch v := id.(type) {
	case json.RawMessage:
		rawID = v
	case int:
		rawID = strconv.AppendInt(nil, int64(v), 10)
	case int64:
		rawID = strconv.AppendInt(nil, v, 10)
	case nil:
	default:
		b, err := marshalPlain(v)
		if err != nil {
			return nil, err
		}
		rawID = b
	}
	var rawParams json.RawMessage
	if params != nil {
		b, err := marshalPlain(params)
		if err != nil {
			return nil, fmt.Errorf("encode params of %s: %w", method, err)
		}
		rawParams = b
	}
	return marshalPlain(Request{JSONRPC: JSONRPCVersion, ID: rawID, Method: method, Params: rawParams})
}

// Response is a JSON-RPC 2.0 response object: exactly one of Result and
// Error is meaningful.
//
// To send, set Result to any value (a *Task, a SendMessageResponse, a
// json.RawMessage, or nil for a JSON null) or set Error, and encode with
// Marshal or EncodeResult/EncodeError, which write the envelope around
// the result in one pass. A decoded Response holds Result as a
// json.RawMessage; read it with DecodeResult.
type Response struct {
	// JSONRPC is always "2.0" (ignored when encoding).
	JSONRPC string `json:"jsonrpc"`
	// ID echoes the request id; nil is encoded as null.
	ID json.RawMessage `json:"id"`
	// Result is the success value.
	Result any `json:"result,omitempty"`
	// Error is the failure, if any.
	Error *Error `json:"error,omitempty"`
}

// MarshalJSON encodes the envelope; `result` is emitted (null when nil)
// unless Error is set.
func (r Response) MarshalJSON() ([]byte, error) {
	return r.appendJSON(nil)
}

// appendJSON writes the envelope by hand so the result is encoded once.
func (r *Response) appendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	if len(r.ID) == 0 {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, r.ID...)
	}
	if r.Error != nil {
		dst = append(dst, `,"error":`...)
		b, err := r.Error.MarshalJSON()
		if err != nil {
			return nil, err
		}
		dst = append(dst, b...)
		return append(dst, '}'), nil
	}
	dst = append(dst, `,"result":`...)
	switch v := r.Result.(type) {
	case nil:
		dst = append(dst, "null"...)
	case json.RawMessage:
		if len(v) == 0 {
			dst = append(dst, "null"...)
		} else {
			dst = append(dst, v...)
		}
	default:
		var err error
		if dst, err = appendPlain(dst, v); err != nil {
			return nil, fmt.Errorf("encode JSON-RPC result: %w", err)
		}
	}
	return append(dst, '}'), nil
}

// UnmarshalJSON decodes a response, keeping the result as a
// json.RawMessage in Result.
func (r *Response) UnmarshalJSON(b []byte) error {
	var w struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   *Error          `json:"error"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = Response{JSONRPC: w.JSONRPC, ID: w.ID, Error: w.Error}
	if w.Result != nil {
		r.Result = w.Result
	}
	return nil
}

// DecodeResult returns the response's error if it has one, else decodes
// the result leniently (see Unmarshal) into v.
func (r *Response) DecodeResult(v any) error {
	if r.Error != nil {
		return r.Error
	}
	var raw []byte
	switch res := r.Result.(type) {
	case json.RawMessage:
		raw = res
	case nil:
		raw = nullID
	default:
		b, err := marshalPlain(res)
		if err != nil {
			return err
		}
		raw = b
	}
	return Unmarshal(raw, v)
}

// ParseResponse decodes a JSON-RPC response received from a peer and
// checks the envelope: an object with jsonrpc "2.0" and a result or an
// error.
func ParseResponse(body []byte) (*Response, error) {
	var r Response
	if err := json.Unmarshal(bytes.TrimPrefix(body, utf8BOM), &r); err != nil {
		return nil, fmt.Errorf("response is not a JSON-RPC object: %w", err)
	}
	if r.JSONRPC != JSONRPCVersion {
		return nil, fmt.Errorf("response has jsonrpc %q, want \"2.0\"", r.JSONRPC)
	}
	if r.Result == nil && r.Error == nil {
		return nil, errors.New("response has neither result nor error")
	}
	return &r, nil
}

// EncodeResult encodes a success response with the given request id
// (nil → null) and result.
func EncodeResult(id json.RawMessage, result any) ([]byte, error) {
	return AppendResult(make([]byte, 0, 256), id, result)
}

// AppendResult is EncodeResult appending to dst, so that a caller with a
// reused buffer encodes a response without allocating one.
func AppendResult(dst []byte, id json.RawMessage, result any) ([]byte, error) {
	r := Response{ID: id, Result: result}
	return r.appendJSON(dst)
}

// EncodeError encodes an error response with the given request id
// (nil → null).
func EncodeError(id json.RawMessage, e *Error) []byte {
	r := Response{ID: id, Error: e}
	b, err := r.appendJSON(nil)
	if err != nil {
		// Error's fields are strings and string maps plus caller-supplied
		// details; if a detail cannot be encoded, drop the details.
		r.Error = &Error{Code: e.Code, Message: e.Message, Reason: e.Reason, Metadata: e.Metadata}
		b, _ = r.appendJSON(nil)
	}
	return b
}

// jsonTypeName describes a Go type in JSON terms for error messages.
func jsonTypeName(t reflect.Type) string {
	if t == nil {
		return "a different value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a base64 string"
		}
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return jsonTypeName(t.Elem())
	}
	return "a different value"
}
