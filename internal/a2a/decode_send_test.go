package a2a

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// sendParamSamples are SendMessage params the fast path takes, those it
// must leave to encoding/json, and malformed ones.
var sendParamSamples = []string{
	`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello"}]}}`,
	`{"tenant":"t","message":{"messageId":"m1","contextId":"c","taskId":"t1","role":"user","parts":[{"text":"a","metadata":{"k":1}},{"raw":"AAEC","mediaType":"x/y","filename":"f"},{"url":"https://x"},{"data":{"a":[1,2]}},null],"metadata":{"x":{"y":null}},"extensions":["e1"],"referenceTaskIds":["r1","r2"],"kind":"message"},"configuration":{"acceptedOutputModes":["text/plain"],"historyLength":"3","blocking":false},"metadata":{"m":"v"}}`,
	`{"message":{"messageId":"m1","role":1,"parts":[]},"configuration":null,"metadata":null,"tenant":null}`,
	`{"message":null}`,
	`{}`,
	`{"message":{"parts":null,"extensions":null,"referenceTaskIds":[],"metadata":null,"messageId":null}}`,
	`  {"message" : { "messageId" : "m" , "role" : "ROLE_AGENT" } , "unknown" : [1, {"a": "b"}] }  `,
	// Left to encoding/json: duplicates, case-folded keys, escapes, odd types.
	`{"message":{"messageId":"a"},"message":{"role":"ROLE_USER"}}`,
	`{"message":{"messageId":"a","messageId":"b"}}`,
	`{"Message":{"messageId":"m1"}}`,
	`{"message":{"MessageID":"m1","ROLE":"ROLE_USER"}}`,
	`{"message":{"messageId":"m\u0031","parts":[{"text":"\"q\" \n"}]}}`,
	`{"message":{"messageId":"m1","parts":[{"file":{"bytes":"AAE=","name":"f"}}]}}`,
	`{"message":{"messageId":"m1","parts":[{"kind":"text","text":"0.3"}]}}`,
	`{"message":{"messageId":"m1","parts":[{"raw":"!!"}]}}`,
	`{"message":{"messageId":"m1","role":"ROLE_NOBODY"}}`,
	`{"message":{"messageId":1}}`,
	`{"message":"text"}`,
	`{"message":{"messageId":"m1"},"configuration":{"returnImmediately":"yes"}}`,
	`{"message":{"messageId":"m1"},"metadata":[1]}`,
	`{"message":{"messageId":"m1","extensions":"e"}}`,
	`{"message":{"messageId":"m1","parts":{}}}`,
	`[]`,
	`{"message":{"messageId":"m1"}`,
	`{"message":{"messageId":"m1"},"x":tru}`,
	`{"message":{"messageId":"m1"},"x":1.2.3}`,
	`{"message":{"messageId":"m1","parts":[{"text":"a"} {"text":"b"}]}}`,
	`{"message_id":"x","message":{"message_id":"m1","context_id":"c","parts":[{"text":"snake"}]}}`,
}

// decodeSendBoth decodes params through DecodeParams (fast path first)
// and through encoding/json alone, and fails if they disagree.
func decodeSendBoth(t *testing.T, params string) {
	t.Helper()
	if params == "" || params == "null" {
		return // DecodeParams reads these as {}
	}
	got, gotErr := DecodeParams(OpSendMessage, json.RawMessage(params))
	var want SendMessageRequest
	var wantErr *Error
	if err := Unmarshal([]byte(params), &want); err != nil {
		wantErr = paramsDecodeError(err)
	} else if err := want.Validate(); err != nil {
		wantErr = err.(*Error)
	}
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("%s: fast path error %v, encoding/json error %v", params, gotErr, wantErr)
	}
	if gotErr != nil {
		if gotErr.Error() != wantErr.Error() {
			t.Fatalf("%s: error %q, encoding/json's %q", params, gotErr.Error(), wantErr.Error())
		}
		return
	}
	if !reflect.DeepEqual(got, &want) {
		t.Fatalf("%s:\n got %#v\nwant %#v", params, got, &want)
	}
}

func TestSendRequestFastDecodingMatchesEncodingJSON(t *testing.T) {
	for _, p := range sendParamSamples {
		decodeSendBoth(t, p)
	}
	// The fast path takes the common shape (and so is what runs).
	var r SendMessageRequest
	if !decodeSendFast([]byte(sendParamSamples[1]), &r) || len(r.Message.Parts) != 5 || r.Configuration == nil {
		t.Fatalf("fast path did not take the common shape: %#v", r)
	}
	if decodeSendFast([]byte(`{"message":{"messageId":"a"},"message":{}}`), &r) {
		t.Fatal("fast path took a duplicate key")
	}
}

func FuzzSendRequestFastDecoding(f *testing.F) {
	for _, p := range sendParamSamples {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, params string) {
		decodeSendBoth(t, params)
	})
}

// loadSendParams is what a2a-load sends: one text part, no metadata.
var loadSendParams = []byte(`{"message":{"messageId":"load-1234-42","role":"ROLE_USER","parts":[{"text":"hello from a2a-load #load-1234-42"}]}}`)

func BenchmarkDecodeSendParams(b *testing.B) {
	for _, c := range []struct {
		name   string
		params []byte
	}{{"typical", sendMessageBody}, {"a2a-load", loadSendParams}} {
		b.Run(c.name+"/fast", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, e := DecodeParams(OpSendMessage, c.params); e != nil {
					b.Fatal(e)
				}
			}
		})
		b.Run(c.name+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var r SendMessageRequest
				if err := Unmarshal(c.params, &r); err != nil {
					b.Fatal(err)
				}
				if err := r.Validate(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSendRequestFastDecodingKnowsEveryField fails when SendMessageRequest
// or Message gains a field: decode_send.go must then read it too.
func TestSendRequestFastDecodingKnowsEveryField(t *testing.T) {
	for typ, keys := range map[reflect.Type][]string{
		reflect.TypeFor[SendMessageRequest](): sendRequestKeys[:],
		reflect.TypeFor[Message]():            messageKeys[:],
	} {
		var tags []string
		for i := range typ.NumField() {
			tags = append(tags, strings.Split(typ.Field(i).Tag.Get("json"), ",")[0])
		}
		if got, want := strings.Join(tags, " "), strings.Join(keys, " "); got != want {
			t.Errorf("%s has the keys %q; the fast path reads %q", typ.Name(), got, want)
		}
	}
}
