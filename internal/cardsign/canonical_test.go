package cardsign

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"testing"
)

// The examples of RFC 8785: §3.2.2 (values), §3.2.3 (sorting by UTF-16
// code units) and Appendix B (number serialization).
func TestCanonicalizeRFC8785Examples(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{
			name: "section 3.2.2",
			in: `{
  "numbers": [333333333.33333329, 1E30, 4.50,
              2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`,
			want: `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
		},
		{
			name: "section 3.2.3 sorting",
			in: `{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}`,
			want: "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\",\"€\":\"Euro Sign\",\"😀\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}",
		},
		{name: "whitespace and nesting", in: " [ { \"b\" : [ ] , \"a\" : { } } ] ", want: `[{"a":{},"b":[]}]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Canonicalize([]byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Fatalf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestCanonicalizeNumbersAppendixB(t *testing.T) {
	cases := []struct{ bits, want string }{
		{"0000000000000000", "0"},
		{"8000000000000000", "0"},
		{"0000000000000001", "5e-324"},
		{"8000000000000001", "-5e-324"},
		{"7fefffffffffffff", "1.7976931348623157e+308"},
		{"ffefffffffffffff", "-1.7976931348623157e+308"},
		{"4340000000000000", "9007199254740992"},
		{"c340000000000000", "-9007199254740992"},
		{"4430000000000000", "295147905179352830000"},
		{"44b52d02c7e14af5", "9.999999999999997e+22"},
		{"44b52d02c7e14af6", "1e+23"},
		{"44b52d02c7e14af7", "1.0000000000000001e+23"},
		{"444b1ae4d6e2ef4e", "999999999999999700000"},
		{"444b1ae4d6e2ef4f", "999999999999999900000"},
		{"444b1ae4d6e2ef50", "1e+21"},
		{"3eb0c6f7a0b5ed8c", "9.999999999999997e-7"},
		{"3eb0c6f7a0b5ed8d", "0.000001"},
		{"41b3de4355555553", "333333333.3333332"},
		{"41b3de4355555554", "333333333.33333325"},
		{"41b3de4355555555", "333333333.3333333"},
		{"41b3de4355555556", "333333333.3333334"},
		{"41b3de4355555557", "333333333.33333343"},
		{"becbf647612f3696", "-0.0000033333333333333333"},
		{"43143ff3c1cb0959", "1424953923781206.2"},
	}
	for _, c := range cases {
		b, err := hex.DecodeString(c.bits)
		if err != nil {
			t.Fatal(err)
		}
		f := math.Float64frombits(binary.BigEndian.Uint64(b))
		in := strconv.FormatFloat(f, 'g', -1, 64)
		got, err := Canonicalize([]byte("[" + in + "]"))
		if err != nil {
			t.Fatalf("%s (%s): %v", c.bits, in, err)
		}
		if want := "[" + c.want + "]"; string(got) != want {
			t.Errorf("%s (%s): got %s, want %s", c.bits, in, got, want)
		}
	}
}

func TestCanonicalizeRefusesDuplicateNamesAndBadJSON(t *testing.T) {
	for _, in := range []string{`{"a":1,"a":2}`, `{"a":`, `{"a":1} x`} {
		if _, err := Canonicalize([]byte(in)); err == nil {
			t.Errorf("%s: canonicalized", in)
		}
	}
}

// servedDoc is a dual (v1.0 + 0.3) card document with default values, a
// nested empty message and 0.3 keys, as this plugin's server serves one.
const servedDoc = `{
  "name": "B", "description": "Agent B", "version": "1.0.0",
  "supportedInterfaces": [{"url": "http://b/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0", "tenant": ""}],
  "documentationUrl": "",
  "capabilities": {"streaming": true, "pushNotifications": false, "extensions": []},
  "securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer", "description": ""}, "type": "http", "scheme": "Bearer"}},
  "securityRequirements": [{"schemes": {"bearer": {}}}],
  "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
  "skills": [{"id": "echo", "name": "Echo", "description": "Echoes", "tags": ["demo"], "examples": [],
              "outputModes": null}],
  "url": "http://b/", "protocolVersion": "0.3.0", "security": [{"bearer": []}],
  "signatures": [{"protected": "x", "signature": "y"}]
}`

func TestPayloadForms(t *testing.T) {
	const v1 = `{"capabilities":{"pushNotifications":false,"streaming":true},` +
		`"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"description":"Agent B","documentationUrl":"","name":"B",` +
		`"securityRequirements":[{"schemes":{"bearer":{}}}],"securitySchemes":{"bearer":{"httpAuthSecurityScheme":{"scheme":"Bearer"}}},` +
		`"skills":[{"description":"Echoes","id":"echo","name":"Echo","tags":["demo"]}],` +
		`"supportedInterfaces":[{"protocolBinding":"JSONRPC","protocolVersion":"1.0","url":"http://b/"}],"version":"1.0.0"}`
	const pruned = `{"capabilities":{"pushNotifications":false,"streaming":true},` +
		`"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"description":"Agent B","name":"B",` +
		`"securitySchemes":{"bearer":{"httpAuthSecurityScheme":{"scheme":"Bearer"}}},` +
		`"skills":[{"description":"Echoes","id":"echo","name":"Echo","tags":["demo"]}],` +
		`"supportedInterfaces":[{"protocolBinding":"JSONRPC","protocolVersion":"1.0","url":"http://b/"}],"version":"1.0.0"}`
	const served = `{"capabilities":{"pushNotifications":false,"streaming":true},` +
		`"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"description":"Agent B","documentationUrl":"","name":"B",` +
		`"protocolVersion":"0.3.0","security":[{"bearer":[]}],` +
		`"securityRequirements":[{"schemes":{"bearer":{}}}],"securitySchemes":{"bearer":{"httpAuthSecurityScheme":{"scheme":"Bearer"},"scheme":"Bearer","type":"http"}},` +
		`"skills":[{"description":"Echoes","id":"echo","name":"Echo","tags":["demo"]}],` +
		`"supportedInterfaces":[{"protocolBinding":"JSONRPC","protocolVersion":"1.0","url":"http://b/"}],"url":"http://b/","version":"1.0.0"}`
	for form, want := range map[Form]string{FormV1: v1, FormPruned: pruned, FormServed: served} {
		got, err := Payload([]byte(servedDoc), form)
		if err != nil {
			t.Fatalf("%s: %v", form, err)
		}
		if string(got) != want {
			t.Errorf("%s:\ngot  %s\nwant %s", form, got, want)
		}
	}
}

func TestPayloadKeepsRequiredDefaultsAndPresence(t *testing.T) {
	// Rule 1 as written: REQUIRED fields stay at their defaults; optional
	// fields stay when set; a present message field stays even when empty;
	// Struct values are opaque.
	doc := `{"name":"n","description":"","version":"1","supportedInterfaces":[],"capabilities":{},
	  "defaultInputModes":[],"defaultOutputModes":[],"skills":[{"id":"s","name":"S","description":"d","tags":[]}],
	  "iconUrl":"", "provider":{"url":"","organization":""},
	  "securitySchemes":{"m":{"mtlsSecurityScheme":{}}},
	  "extra":{"ignored":true}}`
	want := `{"capabilities":{},"defaultInputModes":[],"defaultOutputModes":[],"description":"","iconUrl":"","name":"n",` +
		`"provider":{"organization":"","url":""},"securitySchemes":{"m":{"mtlsSecurityScheme":{}}},` +
		`"skills":[{"description":"d","id":"s","name":"S","tags":[]}],"supportedInterfaces":[],"version":"1"}`
	got, err := Payload([]byte(doc), FormV1)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	ext := `{"name":"n","description":"d","version":"1","capabilities":{"extensions":[{"uri":"u","required":false,"params":{"a":"","b":[],"c":null,"n":1.50}}]}}`
	got, err = Payload([]byte(ext), FormV1)
	if err != nil {
		t.Fatal(err)
	}
	if w := `{"capabilities":{"extensions":[{"params":{"a":"","b":[],"c":null,"n":1.5},"uri":"u"}]},"description":"d","name":"n","version":"1"}`; string(got) != w {
		t.Fatalf("got  %s\nwant %s", got, w)
	}
}

func TestPayloadReadsProtoNames(t *testing.T) {
	snake := `{"name":"n","description":"d","version":"1","default_input_modes":["text/plain"],
	  "supported_interfaces":[{"url":"u","protocol_binding":"JSONRPC","protocol_version":"1.0"}],"capabilities":{"push_notifications":true}}`
	camel := `{"name":"n","description":"d","version":"1","defaultInputModes":["text/plain"],
	  "supportedInterfaces":[{"url":"u","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{"pushNotifications":true}}`
	a, err := Payload([]byte(snake), FormV1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Payload([]byte(camel), FormV1)
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Fatalf("snake_case and camelCase cards differ:\n%s\n%s", a, b)
	}
	both := `{"name":"n","description":"d","version":"1","defaultInputModes":["a"],"default_input_modes":["b"]}`
	if _, err := Payload([]byte(both), FormV1); err == nil || !strings.Contains(err.Error(), "both") {
		t.Fatalf("a field under both names: %v", err)
	}
}
