package server

import (
	"encoding/json"
	"strings"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// parseEnvelope reads the JSON-RPC envelope of a request body. Well-formed
// bodies take a fast path that validates the JSON without allocating and
// slices the members out of the body; anything unusual (escaped keys or
// method, duplicate members, a member of the wrong type, invalid JSON)
// goes to a2a.ParseRequest, so errors are exactly its errors. Params and
// ID of the result alias body.
func parseEnvelope(body []byte) (*a2a.Request, *a2a.Error) {
	if req, ok := fastEnvelope(body); ok {
		return req, nil
	}
	return a2a.ParseRequest(body)
}

// knownMethods interns the method names, so that the fast path does not
// allocate a string per request.
var knownMethods = func() map[string]string {
	m := map[string]string{}
	for _, name := range []string{
		a2a.MethodSendMessage, a2a.MethodSendStreamingMessage, a2a.MethodGetTask, a2a.MethodListTasks,
		a2a.MethodCancelTask, a2a.MethodSubscribeToTask, a2a.MethodCreateTaskPushNotificationConfig,
		a2a.MethodGetTaskPushNotificationConfig, a2a.MethodListTaskPushNotificationConfigs,
		a2a.MethodDeleteTaskPushNotificationConfig, a2a.MethodGetExtendedAgentCard,
		"message/send", "message/stream", "tasks/get", "tasks/cancel", "tasks/resubscribe",
		"tasks/pushNotificationConfig/set", "tasks/pushNotificationConfig/get",
		"tasks/pushNotificationConfig/list", "tasks/pushNotificationConfig/delete",
		"agent/getAuthenticatedExtendedCard", "tasks/list", "tasks/subscribe",
	} {
		m[name] = name
	}
	return m
}()

// Members of the envelope, as bits.
const (
	memberJSONRPC = 1 << iota
	memberID
	memberMethod
	memberParams
)

// fastEnvelope is the allocation-light path of parseEnvelope; ok is false
// when the body needs the full parser.
func fastEnvelope(b []byte) (*a2a.Request, bool) {
	if !json.Valid(b) {
		return nil, false
	}
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	i++
	req := &a2a.Request{JSONRPC: a2a.JSONRPCVersion}
	seen := 0
	for {
		i = skipSpace(b, i)
		switch b[i] {
		case '}':
			if seen&memberJSONRPC == 0 || seen&memberMethod == 0 {
				return nil, false
			}
			return req, true
		case ',':
			i++
			continue
		}
		// A member: the JSON is valid, so this is a key string.
		j := i + 1
		for b[j] != '"' {
			if b[j] == '\\' {
				return nil, false
			}
			j++
		}
		key := b[i+1 : j]
		i = skipSpace(b, j+1) + 1 // past the colon
		i = skipSpace(b, i)
		start := i
		i = skipValue(b, i)
		val := b[start:i]
		var bit int
		switch string(key) {
		case "jsonrpc":
			if string(val) != `"2.0"` {
				return nil, false
			}
			bit = memberJSONRPC
		case "id":
			switch c := val[0]; {
			case c == '"', c == '-', c >= '0' && c <= '9':
				req.ID = val
			case string(val) == "null":
				req.ID = val
			default:
				return nil, false
			}
			bit = memberID
		case "method":
			if val[0] != '"' {
				return nil, false
			}
			name, ok := knownMethods[string(val[1:len(val)-1])]
			if !ok {
				return nil, false // unknown or escaped: the full parser decides
			}
			req.Method = name
			bit = memberMethod
		case "params":
			switch val[0] {
			case '{', '[':
				req.Params = val
			case 'n':
				// null: absent
			default:
				return nil, false
			}
			bit = memberParams
		default:
			if foldsToMember(key) {
				return nil, false // encoding/json matches member names case-insensitively
			}
			continue
		}
		if seen&bit != 0 {
			return nil, false // duplicate member: keep the full parser's rule
		}
		seen |= bit
	}
}

// foldsToMember reports whether encoding/json could match key to an
// envelope member: a case-insensitive ASCII match, or any non-ASCII key
// (Unicode case folding maps, e.g., "ſ" to "s").
func foldsToMember(key []byte) bool {
	for _, c := range key {
		if c >= 0x80 {
			return true
		}
	}
	for _, m := range [...]string{"jsonrpc", "id", "method", "params"} {
		if strings.EqualFold(string(key), m) {
			return true
		}
	}
	return false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipValue returns the index just past the JSON value starting at i. b
// must be valid JSON.
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return i
	default:
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}

// skipString returns the index just past the string starting at i.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}
