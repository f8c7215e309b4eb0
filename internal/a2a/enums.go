package a2a

import (
	"fmt"
	"strings"
)

// TaskState is the lifecycle state of a task, held as its v1.0 wire name
// ("TASK_STATE_WORKING"). The zero value "" is treated as
// TaskStateUnspecified when encoded.
type TaskState string

// Task states, valued as their v1.0 wire names (proto enum order 0–8).
const (
	TaskStateUnspecified   TaskState = "TASK_STATE_UNSPECIFIED"
	TaskStateSubmitted     TaskState = "TASK_STATE_SUBMITTED"
	TaskStateWorking       TaskState = "TASK_STATE_WORKING"
	TaskStateCompleted     TaskState = "TASK_STATE_COMPLETED"
	TaskStateFailed        TaskState = "TASK_STATE_FAILED"
	TaskStateCanceled      TaskState = "TASK_STATE_CANCELED"
	TaskStateInputRequired TaskState = "TASK_STATE_INPUT_REQUIRED"
	TaskStateRejected      TaskState = "TASK_STATE_REJECTED"
	TaskStateAuthRequired  TaskState = "TASK_STATE_AUTH_REQUIRED"
)

// taskStates lists the states in proto enum order, so the index is the
// integer value ProtoJSON allows on input.
var taskStates = [...]TaskState{
	TaskStateUnspecified, TaskStateSubmitted, TaskStateWorking, TaskStateCompleted,
	TaskStateFailed, TaskStateCanceled, TaskStateInputRequired, TaskStateRejected,
	TaskStateAuthRequired,
}

// Terminal reports whether the state is final: completed, failed, canceled
// or rejected. A terminal task never changes again.
func (s TaskState) Terminal() bool {
	switch s {
	case TaskStateCompleted, TaskStateFailed, TaskStateCanceled, TaskStateRejected:
		return true
	}
	return false
}

// Interrupted reports whether the task waits for its client: input or
// authentication required.
func (s TaskState) Interrupted() bool {
	return s == TaskStateInputRequired || s == TaskStateAuthRequired
}

// Known reports whether s is one of the nine defined states (or the zero
// value, which stands for TaskStateUnspecified).
func (s TaskState) Known() bool {
	if s == "" {
		return true
	}
	for _, k := range taskStates {
		if s == k {
			return true
		}
	}
	return false
}

// String returns the wire name.
func (s TaskState) String() string {
	if s == "" {
		return string(TaskStateUnspecified)
	}
	return string(s)
}

// MarshalText emits the v1.0 wire name; the zero value is emitted as
// TASK_STATE_UNSPECIFIED.
func (s TaskState) MarshalText() ([]byte, error) {
	return []byte(s.String()), nil
}

// UnmarshalText accepts every form ParseTaskState accepts.
func (s *TaskState) UnmarshalText(b []byte) error {
	v, err := ParseTaskState(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// UnmarshalJSON accepts a string in any form ParseTaskState accepts or the
// proto integer value; `null` leaves s unchanged.
func (s *TaskState) UnmarshalJSON(b []byte) error {
	raw, isNull, err := enumToken(b, "task state")
	if err != nil || isNull {
		return typeError[TaskState](err)
	}
	v, err := ParseTaskState(raw)
	if err != nil {
		return typeError[TaskState](err)
	}
	*s = v
	return nil
}

// ParseTaskState parses a task state given as its full v1.0 name
// ("TASK_STATE_INPUT_REQUIRED"), its short name ("INPUT_REQUIRED",
// case-insensitive), its proto integer as a string ("6") or its 0.3 name
// ("input-required"; "unknown" is TaskStateUnspecified).
func ParseTaskState(s string) (TaskState, error) {
	if len(s) == 1 && s[0] >= '0' && s[0] <= '8' {
		return taskStates[s[0]-'0'], nil
	}
	// Fast path: the exact v1.0 name.
	if strings.HasPrefix(s, "TASK_STATE_") {
		for _, k := range taskStates {
			if s == string(k) {
				return k, nil
			}
		}
	}
	short := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), "-", "_"))
	short = strings.TrimPrefix(short, "TASK_STATE_")
	switch short {
	case "UNSPECIFIED", "UNKNOWN":
		return TaskStateUnspecified, nil
	case "SUBMITTED":
		return TaskStateSubmitted, nil
	case "WORKING":
		return TaskStateWorking, nil
	case "COMPLETED":
		return TaskStateCompleted, nil
	case "FAILED":
		return TaskStateFailed, nil
	case "CANCELED", "CANCELLED":
		return TaskStateCanceled, nil
	case "INPUT_REQUIRED":
		return TaskStateInputRequired, nil
	case "REJECTED":
		return TaskStateRejected, nil
	case "AUTH_REQUIRED":
		return TaskStateAuthRequired, nil
	}
	return "", fmt.Errorf("unknown task state %q: use one of TASK_STATE_SUBMITTED, TASK_STATE_WORKING, TASK_STATE_COMPLETED, TASK_STATE_FAILED, TASK_STATE_CANCELED, TASK_STATE_INPUT_REQUIRED, TASK_STATE_REJECTED, TASK_STATE_AUTH_REQUIRED", s)
}

// Role says who sent a message, held as its v1.0 wire name. The zero
// value "" is treated as RoleUnspecified when encoded.
type Role string

// Message roles, valued as their v1.0 wire names.
const (
	RoleUnspecified Role = "ROLE_UNSPECIFIED"
	RoleUser        Role = "ROLE_USER"
	RoleAgent       Role = "ROLE_AGENT"
)

// String returns the wire name.
func (r Role) String() string {
	if r == "" {
		return string(RoleUnspecified)
	}
	return string(r)
}

// MarshalText emits the v1.0 wire name; the zero value is emitted as
// ROLE_UNSPECIFIED.
func (r Role) MarshalText() ([]byte, error) {
	return []byte(r.String()), nil
}

// UnmarshalText accepts every form ParseRole accepts.
func (r *Role) UnmarshalText(b []byte) error {
	v, err := ParseRole(string(b))
	if err != nil {
		return err
	}
	*r = v
	return nil
}

// UnmarshalJSON accepts a string in any form ParseRole accepts or the
// proto integer value; `null` leaves r unchanged.
func (r *Role) UnmarshalJSON(b []byte) error {
	raw, isNull, err := enumToken(b, "role")
	if err != nil || isNull {
		return typeError[Role](err)
	}
	v, err := ParseRole(raw)
	if err != nil {
		return typeError[Role](err)
	}
	*r = v
	return nil
}

// ParseRole parses a role given as its v1.0 name ("ROLE_USER"), short name
// ("USER", case-insensitive), proto integer as a string ("1") or 0.3 name
// ("user").
func ParseRole(s string) (Role, error) {
	switch s {
	case "ROLE_USER", "user", "1":
		return RoleUser, nil
	case "ROLE_AGENT", "agent", "2":
		return RoleAgent, nil
	case "ROLE_UNSPECIFIED", "0":
		return RoleUnspecified, nil
	}
	switch strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(s)), "ROLE_") {
	case "USER":
		return RoleUser, nil
	case "AGENT":
		return RoleAgent, nil
	case "UNSPECIFIED":
		return RoleUnspecified, nil
	}
	return "", fmt.Errorf("unknown role %q: use ROLE_USER or ROLE_AGENT", s)
}

// enumToken extracts the text of a JSON enum value: the contents of a
// string or the digits of an integer. isNull reports a JSON null.
func enumToken(b []byte, what string) (raw string, isNull bool, err error) {
	if len(b) == 0 {
		return "", false, fmt.Errorf("%s: empty value", what)
	}
	switch c := b[0]; {
	case c == 'n' && string(b) == "null":
		return "", true, nil
	case c == '"':
		if len(b) < 2 || b[len(b)-1] != '"' {
			return "", false, fmt.Errorf("%s: malformed string %s", what, truncateForError(b))
		}
		inner := b[1 : len(b)-1]
		for _, ch := range inner {
			if ch == '\\' {
				var s string
				if err := jsonUnquote(b, &s); err != nil {
					return "", false, fmt.Errorf("%s: %w", what, err)
				}
				return s, false, nil
			}
		}
		return string(inner), false, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return string(b), false, nil
	}
	return "", false, fmt.Errorf("%s must be a string name or an integer, got %s", what, truncateForError(b))
}
