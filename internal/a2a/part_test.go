package a2a

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestPartKindNamesTheSetContentField(t *testing.T) {
	s := "x"
	cases := []struct {
		p    Part
		want PartKind
	}{
		{TextPart("hi"), PartText},
		{TextPart(""), PartText},
		{FilePart([]byte{1}, "a/b", "f"), PartRaw},
		{FilePart(nil, "", ""), PartRaw},
		{URLPart("https://x", "", ""), PartURL},
		{DataPart(map[string]int{"a": 1}), PartData},
		{Part{Data: json.RawMessage("null")}, PartData},
		{Part{}, PartInvalid},
		{Part{MediaType: "text/plain"}, PartInvalid},
		{Part{Text: &s, URL: &s}, PartInvalid},
	}
	for _, c := range cases {
		if got := c.p.Kind(); got != c.want {
			t.Errorf("Kind(%+v) = %v, want %v", c.p, got, c.want)
		}
	}
}

func TestPartValidateRequiresExactlyOneContent(t *testing.T) {
	s := "x"
	cases := []struct {
		name    string
		p       Part
		wantErr string
	}{
		{"text", TextPart("x"), ""},
		{"none", Part{MediaType: "text/plain"}, "part: must have exactly one of text, raw, url or data; this part has none"},
		{"two", Part{Text: &s, Data: json.RawMessage(`1`)}, "part: must have exactly one of text, raw, url or data; send one part per kind"},
		{"empty raw", FilePart(nil, "", ""), "part.raw: must not be empty"},
		{"relative url", URLPart("/files/a", "", ""), "part.url: must be an absolute URL"},
		{"data url", URLPart("data:text/plain,hi", "", ""), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.p.Validate()
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected %v", err)
				}
				return
			}
			e, ok := err.(*Error)
			if !ok || e.Code != CodeInvalidParams || !strings.HasPrefix(e.Message, c.wantErr) {
				t.Fatalf("err = %v, want -32602 starting %q", err, c.wantErr)
			}
		})
	}
}

func TestPartAcceptsLegacyMimeTypeAndFileKeys(t *testing.T) {
	var p Part
	if err := Unmarshal([]byte(`{"kind":"file","file":{"uri":"https://x/a","media_type":"image/png","name":"a.png"},"metadata":{"k":1}}`), &p); err != nil {
		t.Fatal(err)
	}
	if p.URLValue() != "https://x/a" || p.MediaType != "image/png" || p.Filename != "a.png" || p.Metadata["k"] != 1.0 {
		t.Errorf("part = %+v", p)
	}
	p = Part{}
	if err := Unmarshal([]byte(`{"text":"x","mimeType":"text/markdown"}`), &p); err != nil || p.MediaType != "text/markdown" {
		t.Errorf("part = %+v, %v", p, err)
	}
	if err := Unmarshal([]byte(`{"kind":"file","file":{"bytes":"%%%"}}`), &p); err == nil {
		t.Error("bad 0.3 bytes accepted")
	}
}

func TestPartKindString(t *testing.T) {
	for k, want := range map[PartKind]string{PartText: "text", PartRaw: "raw", PartURL: "url", PartData: "data", PartInvalid: "invalid"} {
		if k.String() != want {
			t.Errorf("%d: %s", k, k.String())
		}
	}
}
