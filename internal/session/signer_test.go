package session

import (
	"strings"
	"testing"
)

func TestSignerRefusesChangedValuesAndFollowsRotation(t *testing.T) {
	t.Parallel()
	oldKey, newKey := strings.Repeat("7e", 32), strings.Repeat("5a", 32)
	s, err := NewSigner([]string{oldKey}, "archive form")
	if err != nil {
		t.Fatal(err)
	}
	mac := s.Sign("C-2026-000042", "contract:42")
	if !s.Verify("C-2026-000042", "contract:42", mac) {
		t.Fatal("a signed value does not verify")
	}
	for _, c := range []struct{ value, context, mac string }{
		{"C-2026-000043", "contract:42", mac},     // another number
		{"C-2026-000042", "contract:43", mac},     // another contract
		{"C-2026-000042", "contract:42", mac[1:]}, // a cut MAC
		{"C-2026-000042", "contract:42", ""},      // none
		{"C-2026-000042", "contract:42", "%%%"},   // not base64
		{"42C-2026-000042", "contract:", mac},     // the parts split elsewhere
		{"C-2026-000042", "contract:42", s.Sign("C-2026-000042", "contract:42x")},
	} {
		if s.Verify(c.value, c.context, c.mac) {
			t.Errorf("Verify(%q, %q, %q) accepted", c.value, c.context, c.mac)
		}
	}
	other, err := NewSigner([]string{oldKey}, "another purpose")
	if err != nil {
		t.Fatal(err)
	}
	if other.Verify("C-2026-000042", "contract:42", mac) {
		t.Error("a MAC of one purpose verifies for another")
	}
	rotated, err := NewSigner([]string{newKey, oldKey}, "archive form")
	if err != nil {
		t.Fatal(err)
	}
	if !rotated.Verify("C-2026-000042", "contract:42", mac) {
		t.Error("a MAC of the previous key no longer verifies after rotation")
	}
	if s.Verify("C-2026-000042", "contract:42", rotated.Sign("C-2026-000042", "contract:42")) {
		t.Error("the new key's MAC verifies without it")
	}
}
