package plugin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// kitRules is the part of the host libraries' conformance kit
// (proto/agentplugin/v1/host-rules.json) whose Go constants live in this
// package: the call-stream thresholds and the error-code table.
// host-sdk/hostrules_test.go checks the rest.
type kitRules struct {
	CallStream struct {
		MaxRequestBytes int `json:"maxRequestBytes"`
		MaxDeadStreams  int `json:"maxDeadStreams"`
	} `json:"callStream"`
	Errors struct {
		Kinds []struct {
			Kind   string `json:"kind"`
			Code   string `json:"code"`
			Number int    `json:"number"`
		} `json:"kinds"`
		PlainMessageCodes []string `json:"plainMessageCodes"`
	} `json:"errors"`
}

// codeName is a gRPC code as the kit spells it: NOT_FOUND.
func codeName(c codes.Code) string {
	if c == codes.Canceled {
		return "CANCELLED" // google.rpc.Code's spelling; grpc-go's String says Canceled
	}
	return strings.ToUpper(strings.ReplaceAll(codeWords(c), " ", "_"))
}

// TestCallStreamsAndErrorCodesAgreeWithTheConformanceKit fails when the call
// stream's thresholds or the error kind ↔ gRPC code table here say
// something else than the kit the Python and Node host libraries are
// checked against too.
func TestCallStreamsAndErrorCodesAgreeWithTheConformanceKit(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "proto", "agentplugin", "v1", "host-rules.json"))
	if err != nil {
		t.Fatalf("the conformance kit: %v", err)
	}
	var r kitRules
	if err := json.Unmarshal(src, &r); err != nil {
		t.Fatalf("proto/agentplugin/v1/host-rules.json does not parse: %v", err)
	}
	if r.CallStream.MaxRequestBytes != callStreamMaxBytes {
		t.Errorf("callStream.maxRequestBytes: the kit says %d, callstream.go %d", r.CallStream.MaxRequestBytes, callStreamMaxBytes)
	}
	if r.CallStream.MaxDeadStreams != maxDeadStreams {
		t.Errorf("callStream.maxDeadStreams: the kit says %d, callstream.go %d", r.CallStream.MaxDeadStreams, maxDeadStreams)
	}

	// Each sentinel under its kit name; a kit kind Go has no sentinel for
	// is carried by its code alone (the callstream's UNAVAILABLE).
	ours := map[error]string{
		ErrUnknownTool: "unknownTool", ErrInvalidArgument: "invalidArgument", ErrNotReady: "notReady",
		ErrUnimplemented: "unimplemented", ErrInternal: "internal",
		context.Canceled: "cancelled", context.DeadlineExceeded: "deadlineExceeded",
	}
	byCodeOnly := []string{"unavailable"}
	kit := map[string]string{}
	for _, k := range r.Errors.Kinds {
		kit[k.Kind] = k.Code
		if got := codes.Code(k.Number); codeName(got) != k.Code {
			t.Errorf("errors.kinds %s: number %d is %s in gRPC, the kit says %s", k.Kind, k.Number, codeName(got), k.Code)
		}
	}
	for _, s := range sentinels {
		name, ok := ours[s.err]
		if !ok {
			t.Fatalf("sentinel %v has no kit kind in this test; add it to the kit and here", s.err)
		}
		if kit[name] != codeName(s.code) {
			t.Errorf("errors.kinds %s: the kit says %q, errors.go sends %s", name, kit[name], codeName(s.code))
		}
		delete(kit, name)
	}
	for _, name := range byCodeOnly {
		delete(kit, name)
	}
	for name, code := range kit {
		t.Errorf("errors.kinds %s (%s) is in the kit but not in errors.go's sentinels", name, code)
	}

	// The plain-message rule: remoteError reads as the message alone for
	// exactly these codes.
	var plain []string
	for c := codes.OK + 1; c <= codes.Unauthenticated; c++ {
		if (&remoteError{st: status.New(c, "m")}).Error() == "m" {
			plain = append(plain, codeName(c))
		}
	}
	want := slices.Clone(r.Errors.PlainMessageCodes)
	slices.Sort(plain)
	slices.Sort(want)
	if !slices.Equal(plain, want) {
		t.Errorf("errors.plainMessageCodes: the kit says %v, remoteError.Error reads plain for %v", want, plain)
	}
}
