package a2a

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`,
		`{"jsonrpc":"2.0","id":"x","method":"tasks/get","params":{"id":"t"}}`,
		`{"jsonrpc":"2.0","method":"GetTask"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"GetTask"}]`,
		`{"jsonrpc":"2.0","id":{},"method":"GetTask"}`,
		`{"jsonrpc":"1.0","id":1,"method":5,"params":"x"}`,
		`{"jsonrpc":"2.0","id":1,"method":"a\u0000b"}`,
		``, `null`, `{`, `"`, `{"id":1e999}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, e := ParseRequest(body)
		if e == nil {
			if r == nil || r.Method == "" {
				t.Fatalf("accepted without a method: %+v", r)
			}
			if r.Params != nil && !json.Valid(r.Params) {
				t.Fatalf("invalid params kept: %q", r.Params)
			}
		} else if e.Code != CodeParseError && e.Code != CodeInvalidRequest {
			t.Fatalf("unexpected code %d", e.Code)
		}
		// The error response must always be valid JSON.
		if e != nil && !json.Valid(EncodeError(r.ResponseID(), e)) {
			t.Fatalf("invalid error response for %q", body)
		}
	})
}

func FuzzUnmarshalSendMessage(f *testing.F) {
	for _, s := range []string{
		string(sendMessageBody),
		string(sendMessageBodySnake),
		`{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"file","file":{"bytes":"aGk=","mimeType":"text/plain"}},{"kind":"data","data":{"a_b":[1,{"c_d":null}]}}]},"configuration":{"blocking":false,"pushNotificationConfig":{"url":"https://h","authentication":{"schemes":["Bearer"]}}}}`,
		`{"message":{"messageId":"m","role":2,"parts":[{"data":null},{"raw":"-_8"},{"url":"https://x"}]},"configuration":{"historyLength":"7"},"metadata":{"x_y":{"z_w":1}}}`,
		`{"message":null,"configuration":null}`,
		`{"message":{"parts":[{"text":"\ud800"}]}}`,
		`{"security_schemes":{"a_b":{"type":"http"}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var r SendMessageRequest
		if err := Unmarshal(data, &r); err != nil {
			_ = paramsDecodeError(err) // must not panic either
			return
		}
		err := r.Validate()
		if err != nil {
			if e, ok := err.(*Error); !ok || e.Code != CodeInvalidParams {
				t.Fatalf("Validate returned %v", err)
			}
		}
		// Whatever decodes must encode, and a valid request must survive
		// a second round unchanged.
		b, err := Marshal(&r)
		if err != nil {
			t.Fatalf("Marshal after Unmarshal: %v", err)
		}
		var again SendMessageRequest
		if err := Unmarshal(b, &again); err != nil {
			t.Fatalf("re-decode of %s: %v", b, err)
		}
		b2, err := Marshal(&again)
		if err != nil || string(b2) != string(b) {
			t.Fatalf("not stable:\n%s\n%s", b, b2)
		}
		// The normaliser never breaks valid JSON.
		if json.Valid(data) && !json.Valid(normalizeKeys(data)) {
			t.Fatalf("normalizeKeys broke %q", data)
		}
	})
}

// FuzzPartDecodersAgree checks that the hand-written part decoder, when it
// takes a part, yields exactly what the encoding/json path yields.
func FuzzPartDecodersAgree(f *testing.F) {
	for _, s := range []string{
		`{"text":"hi"}`, `{"text":"h\u00e9","mediaType":"text/plain","metadata":{"a":[1,{"b":null}]}}`,
		`{"raw":"aGk=","filename":"a.txt"}`, `{"raw":"-_8","mimeType":"x/y"}`, `{"url":"https://x","kind":"file"}`,
		`{"data":null}`, `{"data":[1,"}",{"x":"]"}],"bogus":{"text":1}}`, `{"Text":"case"}`, `{"text":5}`,
		`{"file":{"uri":"u"}}`, `{"text":"a","text":"b"}`, `{"text":"\xff"}`, `{}`, `{"raw":null,"url":null}`,
		`{"metadata":"x"}`, `{"raw":"!!"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return // encoding/json validates before calling UnmarshalJSON
		}
		var fast Part
		handled, ferr := fast.decodeFast(b)
		if !handled {
			return
		}
		var slow Part
		serr := slow.decodeSlow(b)
		if (ferr == nil) != (serr == nil) {
			t.Fatalf("%s: fast err %v, slow err %v", b, ferr, serr)
		}
		if ferr == nil && !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%s:\nfast %#v\nslow %#v", b, fast, slow)
		}
	})
}

// FuzzSendConfigDecodersAgree checks the hand-written configuration decoder
// against the encoding/json path.
func FuzzSendConfigDecodersAgree(f *testing.F) {
	for _, s := range []string{
		`{"acceptedOutputModes":["text/plain","application/json"],"historyLength":10,"returnImmediately":false}`,
		`{"blocking":false,"pushNotificationConfig":{"url":"https://h","authentication":{"schemes":["Bearer"]}}}`,
		`{"historyLength":"3","returnImmediately":null,"blocking":true,"taskPushNotificationConfig":null}`,
		`{"acceptedOutputModes":[],"historyLength":1.0}`, `{"acceptedOutputModes":null}`, `{"AcceptedOutputModes":["x"]}`,
		`{"historyLength":1.5}`, `{"blocking":"yes"}`, `{"acceptedOutputModes":["\u0041"]}`, `{}`, `{"x":{"y":[1]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		var fast SendMessageConfiguration
		handled, ferr := fast.decodeFast(b)
		if !handled {
			return
		}
		var slow SendMessageConfiguration
		serr := slow.decodeSlow(b)
		if (ferr == nil) != (serr == nil) {
			t.Fatalf("%s: fast err %v, slow err %v", b, ferr, serr)
		}
		if ferr == nil && !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%s:\nfast %#v\nslow %#v", b, fast, slow)
		}
	})
}

// FuzzEnvelopeMatchesParseRequest checks ParseRequest's fast path against
// encoding/json's: whenever the fast path accepts a body, the full parser
// accepts it too and reads the same members.
func FuzzEnvelopeMatchesParseRequest(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"message/send","params":{"message":{"kind":"message","messageId":"m3","role":"user","parts":[{"kind":"text","text":"hi"}]}}}`,
		`{"jsonrpc":"2.0","id":"x","method":"tasks/pushNotificationConfig/create","params":{"taskId":"t","url":"https://h/"}}`,
		`{"method":"GetTask","jsonrpc":"2.0","extra":{"a":[1,"}"]},"id":"x\"y","params":null}`,
		`{"jsonrpc":"2.0","id":1,"method":"GetTask","method":"ListTasks"}`,
		`{"jsonrpc":"2.0","id":1,"method":"Get\u0054ask"}`,
		`{"jsonrpc":"2.0","id":1,"Method":"GetTask"}`,
		"\ufeff{\"jsonrpc\":\"2.0\",\"method\":\"GetTask\"}",
		`{"jsonrpc":"2.0","id":3,"method":"tasks/no-such-method ü"}`,
		"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"b\xffad\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fast, ok := parseRequestFast(body)
		if !ok {
			return
		}
		full, err := parseRequest(body)
		if err != nil {
			t.Fatalf("fast path accepted what encoding/json refuses (%v): %q", err, body)
		}
		if fast.Method != full.Method || string(fast.ID) != string(full.ID) || (fast.ID == nil) != (full.ID == nil) ||
			!bytes.Equal(fast.Params, full.Params) {
			t.Fatalf("fast %+v != full %+v for %q", fast, full, body)
		}
	})
}
