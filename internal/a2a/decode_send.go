package a2a

import "encoding/json"

// SendMessage's params are decoded on every send, so their common shape
// takes a hand-written path, like parts and the send configuration do
// (scan.go): encoding/json's reflection over the request and its message
// was most of a send's decoding (docs/performance.md, "The plugin's CPU
// outside the store"). Anything unusual — a key seen twice, a key that
// matches a field only case-insensitively, a value of an unexpected type —
// goes to encoding/json, which also produces every error; the fast path
// never reports one of its own. FuzzSendRequestFastDecoding checks that both
// paths decode alike.

// sendRequestKeys and messageKeys are the keys the fast path understands.
var (
	sendRequestKeys = [...]string{"tenant", "message", "configuration", "metadata"}
	messageKeys     = [...]string{"messageId", "contextId", "taskId", "role", "parts", "metadata", "extensions", "referenceTaskIds"}
)

// decodeSendFast decodes normalized (camelCase) SendMessage params into r
// and reports whether it could; r is untouched when it could not.
func decodeSendFast(data []byte, r *SendMessageRequest) bool {
	// encoding/json checks the whole document before it decodes any of it;
	// the scanner below is loose about what it skips.
	if !json.Valid(data) {
		return false
	}
	var out SendMessageRequest
	var seen uint8
	handled, err := objectMembers(data, func(key, val []byte) (bool, error) {
		bit, ok := keyBit(key, sendRequestKeys[:])
		if !ok {
			return !foldsToAny(key, sendRequestKeys[:]), nil
		}
		if seen&bit != 0 {
			return false, nil
		}
		seen |= bit
		isNull := string(val) == "null"
		switch string(key) {
		case "tenant":
			if isNull {
				return true, nil
			}
			s, ok := plainString(val)
			out.Tenant = s
			return ok, nil
		case "message":
			if isNull {
				return true, nil
			}
			return decodeMessageFast(val, &out.Message), nil
		case "configuration":
			if isNull {
				return true, nil
			}
			c := new(SendMessageConfiguration)
			if handled, err := c.decodeFast(val); !handled || err != nil {
				return false, nil
			}
			out.Configuration = c
			return true, nil
		default: // metadata
			m, ok := decodeMetadata(val)
			out.Metadata = m
			return ok, nil
		}
	})
	if !handled || err != nil {
		return false
	}
	*r = out
	return true
}

// decodeMessageFast decodes a message object into m (zero on entry).
func decodeMessageFast(data []byte, m *Message) bool {
	var seen uint8
	handled, err := objectMembers(data, func(key, val []byte) (bool, error) {
		bit, ok := keyBit(key, messageKeys[:])
		if !ok {
			return !foldsToAny(key, messageKeys[:]), nil
		}
		if seen&bit != 0 {
			return false, nil
		}
		seen |= bit
		isNull := string(val) == "null"
		switch string(key) {
		case "messageId", "contextId", "taskId":
			if isNull {
				return true, nil
			}
			s, ok := plainString(val)
			switch string(key) {
			case "messageId":
				m.MessageID = s
			case "contextId":
				m.ContextID = s
			default:
				m.TaskID = s
			}
			return ok, nil
		case "role":
			return m.Role.UnmarshalJSON(val) == nil, nil
		case "parts":
			if isNull {
				return true, nil
			}
			parts, ok := decodePartsFast(val)
			m.Parts = parts
			return ok, nil
		case "metadata":
			md, ok := decodeMetadata(val)
			m.Metadata = md
			return ok, nil
		case "extensions":
			s, ok := plainStrings(val)
			m.Extensions = s
			return ok, nil
		default: // referenceTaskIds
			s, ok := plainStrings(val)
			m.ReferenceTaskIDs = s
			return ok, nil
		}
	})
	return handled && err == nil
}

// decodePartsFast decodes a JSON array of parts through Part's own fast
// path; ok is false if any part needs encoding/json.
func decodePartsFast(val []byte) ([]Part, bool) {
	out := []Part{}
	ok := arrayElems(val, func(v []byte) bool {
		var p Part
		if string(v) != "null" {
			if handled, err := p.decodeFast(v); !handled || err != nil {
				return false
			}
		}
		out = append(out, p)
		return true
	})
	if !ok {
		return nil, false
	}
	return out, true
}

// decodeMetadata decodes a free-form object (null: nil) with encoding/json.
func decodeMetadata(val []byte) (map[string]any, bool) {
	if string(val) == "null" {
		return nil, true
	}
	if val[0] != '{' {
		return nil, false
	}
	var m map[string]any
	if json.Unmarshal(val, &m) != nil {
		return nil, false
	}
	return m, true
}

// keyBit returns the bit of key among keys (at most 8), matched exactly.
func keyBit(key []byte, keys []string) (uint8, bool) {
	for i, k := range keys {
		if string(key) == k {
			return 1 << i, true
		}
	}
	return 0, false
}
