package outbox

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestDSNTruncateKeepsCharactersWhole: a server's diagnostic is cut to its byte limit on a
// character's boundary, so what is stored stays valid UTF-8.
func TestDSNTruncateKeepsCharactersWhole(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"550 user unknown", 100, "550 user unknown"},
		{"550 user unknown", 3, "550"},
		{"Empfänger", 5, "Empf"},         // ä is 2 bytes at 4-5: cut before it
		{"Empfänger", 6, "Empfä"},        // after it
		{"邮箱不存在", 7, "邮箱"},               // 3-byte characters
		{strings.Repeat("🙂", 3), 5, "🙂"}, // a 4-byte character
		{"🙂", 3, ""},
	} {
		got := truncate(tc.in, tc.n)
		if got != tc.want || len(got) > tc.n || !utf8.ValidString(got) {
			t.Errorf("truncate(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
