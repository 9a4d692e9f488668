package session

import (
	"errors"
	"strings"
	"testing"
)

// TestSealerRotationAndBinding: a sealed value hides its text, opens with the same context under
// the current and the previous keys, not under another context, and no longer opens once its key
// was removed.
func TestSealerRotationAndBinding(t *testing.T) {
	oldKey, newKey := strings.Repeat("a1", 32), strings.Repeat("b2", 32)
	before, err := NewSealer([]string{oldKey}, "batch token")
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := before.Seal("eyJhbGciOi.secret-token", "job-1")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sealed, "secret-token") {
		t.Fatalf("sealed value shows the token: %s", sealed)
	}
	rotating, _ := NewSealer([]string{newKey, oldKey}, "batch token")
	if plain, err := rotating.Open(sealed, "job-1"); err != nil || plain != "eyJhbGciOi.secret-token" {
		t.Fatalf("open with the old key kept: %q %v", plain, err)
	}
	if _, err := rotating.Open(sealed, "job-2"); !errors.Is(err, ErrUnsealable) {
		t.Fatalf("opened in another context: %v", err)
	}
	resealed, _ := rotating.Seal("t2", "job-1")
	after, _ := NewSealer([]string{newKey}, "batch token")
	if _, err := after.Open(sealed, "job-1"); !errors.Is(err, ErrUnsealable) {
		t.Fatalf("opened with a removed key: %v", err)
	}
	if plain, err := after.Open(resealed, "job-1"); err != nil || plain != "t2" {
		t.Fatalf("resealed value: %q %v", plain, err)
	}
	other, _ := NewSealer([]string{newKey}, "other purpose")
	if _, err := other.Open(resealed, "job-1"); !errors.Is(err, ErrUnsealable) {
		t.Fatalf("opened by another purpose's keys: %v", err)
	}
}
