package hostsdk

import "fmt"

// State is where a plugin is in its life.
type State int

// States of a plugin.
const (
	// StateStarting: launched, not yet configured.
	StateStarting State = iota
	// StateReady: configured (and connected); calls go through.
	StateReady
	// StateRestarting: the process died; calls fail fast until the
	// supervisor has a new one ready.
	StateRestarting
	// StateFailed: it failed to configure or crashed too often; LastError
	// says why. It is not restarted.
	StateFailed
	// StateStopped: the host closed it.
	StateStopped
)

// String is the state's name, as used in logs ("ready", "restarting", …).
func (s State) String() string {
	switch s {
	case StateStarting:
		return "starting"
	case StateReady:
		return "ready"
	case StateRestarting:
		return "restarting"
	case StateFailed:
		return "failed"
	case StateStopped:
		return "stopped"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// EventKind says what happened to a plugin.
type EventKind int

// Kinds of Event.
const (
	// EventSkipped: an executable was not loaded (handshake failed, bad
	// Describe, or it lost a name clash). Event.Plugin is its path.
	EventSkipped EventKind = iota
	// EventReady: a plugin became ready, first or after a restart.
	EventReady
	// EventCrashed: a ready plugin's process died. Event.Err holds the
	// crash reason (exit status and the tail of its stderr). A restart
	// follows, unless an EventFailed does because it crashed too often.
	EventCrashed
	// EventFailed: a plugin failed for good (Configure refused, restart
	// failed or too many crashes). Event.Err says why.
	EventFailed
	// EventStopped: the host closed the plugin.
	EventStopped
)

// String is the kind's name, as used in logs ("crashed", …).
func (k EventKind) String() string {
	switch k {
	case EventSkipped:
		return "skipped"
	case EventReady:
		return "ready"
	case EventCrashed:
		return "crashed"
	case EventFailed:
		return "failed"
	case EventStopped:
		return "stopped"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event is a change in a plugin's life, reported to Options.OnEvent.
type Event struct {
	// Plugin is the plugin's name (its path for EventSkipped).
	Plugin string
	// Kind is what happened.
	Kind EventKind
	// Err is why, for EventSkipped, EventCrashed and EventFailed.
	Err error
}
