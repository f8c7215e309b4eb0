package a2a

import (
	"testing"
	"time"
)

func TestParseTaskStateAcceptsEveryForm(t *testing.T) {
	cases := []struct {
		in   string
		want TaskState
	}{
		{"TASK_STATE_SUBMITTED", TaskStateSubmitted},
		{"TASK_STATE_AUTH_REQUIRED", TaskStateAuthRequired},
		{"WORKING", TaskStateWorking},
		{"working", TaskStateWorking},
		{"input-required", TaskStateInputRequired},
		{"input_required", TaskStateInputRequired},
		{"auth-required", TaskStateAuthRequired},
		{"canceled", TaskStateCanceled},
		{"cancelled", TaskStateCanceled},
		{"unknown", TaskStateUnspecified},
		{"TASK_STATE_UNSPECIFIED", TaskStateUnspecified},
		{"0", TaskStateUnspecified},
		{"3", TaskStateCompleted},
		{"6", TaskStateInputRequired},
		{"8", TaskStateAuthRequired},
	}
	for _, c := range cases {
		got, err := ParseTaskState(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseTaskState(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "9", "-1", "done", "TASK_STATE_", "10"} {
		if _, err := ParseTaskState(bad); err == nil {
			t.Errorf("ParseTaskState(%q) accepted", bad)
		}
	}
}

func TestTaskStateClassification(t *testing.T) {
	cases := []struct {
		s                     TaskState
		terminal, interrupted bool
	}{
		{TaskStateUnspecified, false, false},
		{TaskStateSubmitted, false, false},
		{TaskStateWorking, false, false},
		{TaskStateCompleted, true, false},
		{TaskStateFailed, true, false},
		{TaskStateCanceled, true, false},
		{TaskStateInputRequired, false, true},
		{TaskStateRejected, true, false},
		{TaskStateAuthRequired, false, true},
		{"", false, false},
	}
	for _, c := range cases {
		if c.s.Terminal() != c.terminal || c.s.Interrupted() != c.interrupted {
			t.Errorf("%q: terminal %v interrupted %v", c.s, c.s.Terminal(), c.s.Interrupted())
		}
		if !c.s.Known() {
			t.Errorf("%q not known", c.s)
		}
	}
	if TaskState("BOGUS").Known() {
		t.Error("BOGUS is known")
	}
}

func TestEnumsDecodeFromIntegersStringsAndNull(t *testing.T) {
	cases := []struct {
		in   string
		want TaskState
	}{
		{`{"state":4}`, TaskStateFailed},
		{`{"state":"4"}`, TaskStateFailed},
		{`{"state":"rejected"}`, TaskStateRejected},
		{`{"state":"TASK_STATE_\u0057ORKING"}`, TaskStateWorking},
		{`{"state":null}`, ""},
	}
	for _, c := range cases {
		var s TaskStatus
		if err := Unmarshal([]byte(c.in), &s); err != nil || s.State != c.want {
			t.Errorf("%s: state %q, err %v; want %q", c.in, s.State, err, c.want)
		}
	}
	for _, bad := range []string{`{"state":true}`, `{"state":9}`, `{"state":{}}`} {
		var s TaskStatus
		if err := Unmarshal([]byte(bad), &s); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestParseRoleAcceptsEveryForm(t *testing.T) {
	cases := []struct {
		in   string
		want Role
	}{
		{"ROLE_USER", RoleUser}, {"user", RoleUser}, {"USER", RoleUser}, {"1", RoleUser},
		{"ROLE_AGENT", RoleAgent}, {"agent", RoleAgent}, {"Agent", RoleAgent}, {"2", RoleAgent},
		{"ROLE_UNSPECIFIED", RoleUnspecified}, {"0", RoleUnspecified},
	}
	for _, c := range cases {
		if got, err := ParseRole(c.in); err != nil || got != c.want {
			t.Errorf("ParseRole(%q) = %q, %v", c.in, got, err)
		}
	}
	if _, err := ParseRole("system"); err == nil {
		t.Error("system accepted")
	}
}

func TestTimestampEmitsUTCWithMilliseconds(t *testing.T) {
	cases := []struct {
		t    time.Time
		want string
	}{
		{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), `"2026-01-01T00:00:00.000Z"`},
		{time.Date(2026, 1, 1, 0, 0, 0, 999_999_999, time.UTC), `"2026-01-01T00:00:00.999Z"`},
		{time.Date(2026, 1, 1, 5, 30, 0, 0, time.FixedZone("IST", 5*3600+1800)), `"2026-01-01T00:00:00.000Z"`},
	}
	for _, c := range cases {
		b, err := Marshal(Timestamp{Time: c.t})
		if err != nil || string(b) != c.want {
			t.Errorf("Marshal(%v) = %s, %v; want %s", c.t, b, err, c.want)
		}
	}
	if s := NewTimestamp(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)).String(); s != "2026-01-01T00:00:00.000Z" {
		t.Errorf("String() = %s", s)
	}
}

func TestTimestampParsesAnyRFC3339(t *testing.T) {
	want := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, in := range []string{"2026-01-01T00:00:00Z", "2026-01-01T00:00:00.000Z", "2026-01-01T01:00:00+01:00", "2025-12-31T19:00:00.000000000-05:00"} {
		var ts Timestamp
		if err := Unmarshal([]byte(`"`+in+`"`), &ts); err != nil || !ts.Equal(want) || ts.Location() != time.UTC {
			t.Errorf("%s: %v, %v", in, ts, err)
		}
	}
	for _, bad := range []string{`"yesterday"`, `"2026-01-01"`, `12`} {
		var ts Timestamp
		if err := Unmarshal([]byte(bad), &ts); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	n := Now()
	if n.Location() != time.UTC || n.Nanosecond()%1_000_000 != 0 {
		t.Errorf("Now() = %v", n)
	}
}
