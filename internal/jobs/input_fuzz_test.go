package jobs

import (
	"context"
	"strings"
	"testing"
)

// FuzzParseText: any pasted text gives entries with a line within the text and a non-empty number
// free of separators.
func FuzzParseText(f *testing.F) {
	for _, s := range []string{"C-1, C-2\nC-3", "", "\r\n\r\n", "a;b\tc d", "\x00,\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		lines := strings.Count(text, "\n") + 1
		for _, e := range ParseText(text) {
			if e.Number == "" || e.Line < 1 || e.Line > lines || strings.ContainsAny(e.Number, ",; \t\n") {
				t.Fatalf("entry %+v from %q", e, text)
			}
			_ = numberProblem(e.Number)
		}
	})
}

// FuzzParseFile: any uploaded bytes are refused or parsed, never a panic.
func FuzzParseFile(f *testing.F) {
	f.Add("list.csv", []byte("Contract number\nC-1\n\"C-2\"\n"))
	f.Add("list.csv", []byte("a;b\n1;2\n"))
	f.Add("list.xlsx", []byte("PK\x03\x04"))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		entries, err := ParseFile(context.Background(), name, data)
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.Number == "" || e.Line < 1 {
				t.Fatalf("entry %+v", e)
			}
		}
	})
}
