package a2a

import "github.com/google/uuid"

// NewID returns a random UUIDv4 string for task, context, message,
// artifact and config ids.
func NewID() string {
	return uuid.NewString()
}
