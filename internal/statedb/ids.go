package statedb

import (
	"crypto/rand"
	"encoding/hex"
)

// NewID returns a new random row id: 32 lower-case hex digits (128 bits), for the rows the
// portal creates (jobs, imports, inbox items, mails). Random rather than a sequence, so replicas
// need no coordination and an id in a URL tells nothing about how many others exist.
func NewID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	return hex.EncodeToString(b)
}

// ValidID reports whether id has the form of NewID's ids, so handlers refuse anything else
// before the database is asked.
func ValidID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for _, r := range id {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}
