package a2av03

import (
	"encoding/json"
	"testing"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// FuzzV03Decoders feeds what a 0.3 peer sends — a stream event or send
// result a client reads, the params of a 0.3 method a server reads — to
// the decoders: they never panic, a decoded event is exactly one kind, a
// refused params is -32602, and an accepted one is the request type of
// its operation and encodes.
func FuzzV03Decoders(f *testing.F) {
	for _, s := range []string{
		`{"kind":"task","id":"t","contextId":"c","status":{"state":"working"}}`,
		`{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"text","text":"x"},{"kind":"file","file":{"bytes":"aGk="}}]}`,
		`{"kind":"status-update","task_id":"t","status":{"state":"input-required"},"final":true}`,
		`{"taskId":"t","artifact":{"artifactId":"a","parts":[{"kind":"data","data":{"k":1}}]}}`,
		`{"statusUpdate":{"taskId":"t","status":{"state":"TASK_STATE_WORKING"}}}`,
		`{"id":"t","pushNotificationConfigId":"p","historyLength":"3"}`,
		`{"taskId":"t","pushNotificationConfig":{"url":"https://h","authentication":{"schemes":["Bearer"]}}}`,
		`{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]},"configuration":{"blocking":false}}`,
		`[1]`, `null`, `{"kind":"task","status":{"state":"bogus"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if r, _, err := ParseStreamEvent(data); err == nil {
			n := 0
			for _, set := range []bool{r.Task != nil, r.Message != nil, r.StatusUpdate != nil, r.ArtifactUpdate != nil} {
				if set {
					n++
				}
			}
			if n > 1 {
				t.Fatalf("%s decoded as %d kinds at once", data, n)
			}
		}
		_, _ = ParseSendResult(data)
		for op := a2a.OpSendMessage; op <= a2a.OpGetExtendedCard; op++ {
			v, e := DecodeParams(op, json.RawMessage(data))
			if e != nil {
				if e.Code != a2a.CodeInvalidParams {
					t.Fatalf("%v %s: code %d", op, data, e.Code)
				}
				continue
			}
			if v == nil {
				t.Fatalf("%v %s: accepted as nothing", op, data)
			}
			if _, err := a2a.Marshal(v); err != nil {
				t.Fatalf("%v %s: accepted %T does not encode: %v", op, data, v, err)
			}
		}
	})
}
