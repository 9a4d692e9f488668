package stateimport_test

import (
	"crypto/sha256"
	"encoding/hex"
)

// recentKey is how the previous version keyed a user's recent items ("recent/" + this).
func recentKey(subject string) string {
	sum := sha256.Sum256([]byte(subject))
	return hex.EncodeToString(sum[:16])
}
