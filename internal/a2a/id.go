package a2a

import "github.com/google/uuid"

// NewID returns a new UUID string for task, context, message, artifact and
// config ids: a time-ordered UUIDv7 (RFC 9562), so that ids created one
// after the other sort one after the other. The SQLite store keys tasks by
// id and indexes them by context id; random (v4) ids land at random places
// in those B-trees, time-ordered ones at the end, which makes concurrent
// saves much cheaper (docs/performance.md, "Decisions the code refers
// to"). The ids stay opaque and
// unguessable enough for ids (74 random bits within each millisecond);
// they were never secrets: every lookup checks the caller's identity.
func NewID() string {
	id, err := uuid.NewV7()
	if err != nil {
		// NewV7 fails only when the system's random source does, which
		// uuid.NewString turns into a panic too.
		panic(err)
	}
	return id.String()
}
