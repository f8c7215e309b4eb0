package cardsign

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gowebpki/jcs"

	"github.com/a2a-plugin/a2a-plugin/internal/a2a"
)

// Form is one reading of which bytes an agent-card signature covers; see
// the package documentation.
type Form int

// The payload forms, in the order VerifyDocument tries them.
const (
	// FormV1 is the v1.0 projection with proto presence rules (primary).
	FormV1 Form = iota
	// FormPruned is FormV1 with empty values pruned recursively.
	FormPruned
	// FormServed is the served document with proto presence rules, unknown
	// members kept.
	FormServed
)

// Forms lists every form.
var Forms = []Form{FormV1, FormPruned, FormServed}

// String names the form for messages.
func (f Form) String() string {
	switch f {
	case FormV1:
		return "v1.0 projection"
	case FormPruned:
		return "pruned v1.0 projection"
	case FormServed:
		return "served document"
	}
	return fmt.Sprintf("Form(%d)", int(f))
}

// signaturesKey is the member excluded from every payload.
const signaturesKey = "signatures"

// Canonicalize returns the RFC 8785 canonical form of a JSON document. It
// refuses invalid JSON and duplicate member names (RFC 8785 requires
// I-JSON input).
func Canonicalize(doc []byte) ([]byte, error) {
	out, err := jcs.Transform(doc)
	if err != nil {
		return nil, fmt.Errorf("JSON canonicalization (RFC 8785): %w", err)
	}
	return out, nil
}

// CardPayload returns the canonical payload of card in the given form: the
// card as this package's a2a model encodes it (v1.0 keys only), without
// signatures.
func CardPayload(card *a2a.AgentCard, form Form) ([]byte, error) {
	doc, err := encodeUnsigned(card)
	if err != nil {
		return nil, err
	}
	return Payload(doc, form)
}

// encodeUnsigned encodes card without its signatures.
func encodeUnsigned(card *a2a.AgentCard) ([]byte, error) {
	if card == nil {
		return nil, errors.New("cardsign: no card")
	}
	c := *card
	c.Signatures = nil
	doc, err := a2a.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("cardsign: encoding the card: %w", err)
	}
	return doc, nil
}

// Payload returns the canonical payload of a card document (the JSON as
// served; its signatures, if any, are ignored) in the given form.
func Payload(doc []byte, form Form) ([]byte, error) {
	obj, err := decodeObject(doc)
	if err != nil {
		return nil, err
	}
	return payloadOf(obj, form)
}

// payloads returns the distinct payloads of a decoded document, in Forms
// order, each with the first form that yields it.
func payloads(obj map[string]any) ([]formPayload, error) {
	var out []formPayload
	for _, f := range Forms {
		p, err := payloadOf(obj, f)
		if err != nil {
			return nil, err
		}
		dup := false
		for _, q := range out {
			if bytes.Equal(q.payload, p) {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, formPayload{form: f, payload: p})
		}
	}
	return out, nil
}

// formPayload is one canonical payload and the form that produced it.
type formPayload struct {
	form    Form
	payload []byte
}

func payloadOf(obj map[string]any, form Form) ([]byte, error) {
	var v map[string]any
	var err error
	switch form {
	case FormV1:
		v, err = stripMessage(obj, agentCardDesc, false, true)
	case FormPruned:
		v, err = stripMessage(obj, agentCardDesc, false, true)
		if err == nil {
			pruned, _ := prune(v).(map[string]any)
			v = pruned
			if v == nil {
				v = map[string]any{}
			}
		}
	case FormServed:
		v, err = stripMessage(obj, agentCardDesc, true, true)
	default:
		return nil, fmt.Errorf("cardsign: unknown payload form %d", int(form))
	}
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("cardsign: encoding the payload: %w", err)
	}
	return Canonicalize(raw)
}

// decodeObject decodes a card document into generic JSON values, keeping
// numbers exact. Duplicate member names are refused: the canonical form
// of such a document is undefined, and two parsers could read different
// cards from it.
func decodeObject(doc []byte) (map[string]any, error) {
	doc = bytes.TrimPrefix(doc, []byte("\xef\xbb\xbf"))
	if _, err := jcs.Transform(doc); err != nil {
		return nil, fmt.Errorf("the card is not canonicalizable JSON (RFC 8785 needs valid JSON without duplicate member names): %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("the card is not a JSON object: %w", err)
	}
	if obj == nil {
		return nil, errors.New("the card is not a JSON object")
	}
	return obj, nil
}

// stripMessage applies proto presence rules to one message object. With
// served false it projects onto the schema: unknown members are dropped and
// fields are renamed to their JSON names (a field given under both names is
// refused). With served true unknown members and spellings are kept.
func stripMessage(obj map[string]any, m *msgDesc, served, top bool) (map[string]any, error) {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if top && k == signaturesKey {
			continue
		}
		f := m.lookup(k)
		if f == nil {
			if served {
				out[k] = v
			}
			continue
		}
		if v == nil {
			continue // null is "unset" in ProtoJSON
		}
		name := f.json
		if served {
			name = k
		} else if _, dup := out[name]; dup {
			return nil, fmt.Errorf("the card gives %q under both its JSON name and its proto name %q", f.json, f.proto)
		}
		sv, keep, err := stripField(v, f, served)
		if err != nil {
			return nil, err
		}
		if keep {
			out[name] = sv
		}
	}
	return out, nil
}

// stripField applies presence rules to one field's value. Values of the
// wrong JSON type pass through untouched: they then fail verification or
// parsing, never canonicalisation.
func stripField(v any, f *fieldDesc, served bool) (any, bool, error) {
	switch f.kind {
	case kindOptional, kindOpaque:
		return v, true, nil
	case kindScalar:
		if f.required {
			return v, true, nil
		}
		return v, !isScalarDefault(v), nil
	case kindMessage:
		obj, ok := v.(map[string]any)
		if !ok {
			return v, true, nil
		}
		s, err := stripMessage(obj, f.msg, served, false)
		return s, true, err // a present message field has presence
	case kindRepeatedScalar, kindMapScalar:
		return v, f.required || !isEmptyContainer(v), nil
	case kindRepeatedMessage:
		list, ok := v.([]any)
		if !ok {
			return v, true, nil
		}
		if len(list) == 0 {
			return v, f.required, nil
		}
		out := make([]any, len(list))
		for i, item := range list {
			out[i] = item
			if obj, ok := item.(map[string]any); ok {
				s, err := stripMessage(obj, f.msg, served, false)
				if err != nil {
					return nil, false, err
				}
				out[i] = s
			}
		}
		return out, true, nil
	case kindMapMessage:
		m, ok := v.(map[string]any)
		if !ok {
			return v, true, nil
		}
		if len(m) == 0 {
			return v, f.required, nil
		}
		out := make(map[string]any, len(m))
		for k, item := range m {
			out[k] = item
			if obj, ok := item.(map[string]any); ok {
				s, err := stripMessage(obj, f.msg, served, false)
				if err != nil {
					return nil, false, err
				}
				out[k] = s
			}
		}
		return out, true, nil
	}
	return v, true, nil
}

// isScalarDefault reports the proto3 default of a string or bool field.
func isScalarDefault(v any) bool {
	switch x := v.(type) {
	case string:
		return x == ""
	case bool:
		return !x
	case json.Number:
		return x == "0"
	}
	return false
}

func isEmptyContainer(v any) bool {
	switch x := v.(type) {
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// prune removes null, empty strings and (after pruning their contents)
// empty lists and objects, recursively, returning nil for a value that
// disappears. false and 0 stay.
func prune(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		if x == "" {
			return nil
		}
		return x
	case []any:
		out := make([]any, 0, len(x))
		for _, item := range x {
			if p := prune(item); p != nil {
				out = append(out, p)
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, item := range x {
			if p := prune(item); p != nil {
				out[k] = p
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	}
	return v
}
