package textrules

import (
	"testing"
	"unicode/utf8"
)

func TestFirstRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		in        string
		multiLine bool
		want      rune // 0: accepted
	}{
		{"latin", "Società Benè & Čapek GmbH", false, 0},
		{"hebrew and arabic", "שלום עולם مرحبا", false, 0},
		{"emoji", "Caffè 😀", false, 0},
		{"zwj sequence kept", "Team 👩\u200d💻", false, 0},
		{"zwnj kept", "می\u200cخواهم", false, 0},
		{"subdivision flag kept", "Glasgow \U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F", false, 0},
		{"tags outside a flag", "ok\U000E0041", false, '\U000E0041'},
		{"right-to-left override", "ACME\u202e", false, '\u202e'},
		{"left-to-right embedding", "\u202aACME", false, '\u202a'},
		{"isolate", "A\u2067B", false, '\u2067'},
		{"pop isolate", "A\u2069B", false, '\u2069'},
		{"marks", "A\u200fB", false, '\u200f'},
		{"ltr mark", "A\u200eB", false, '\u200e'},
		{"arabic letter mark", "A\u061cB", false, '\u061c'},
		{"zero width space", "A\u200bB", false, '\u200b'},
		{"byte order mark", "\ufeffA", false, '\ufeff'},
		{"soft hyphen", "Ver\u00adtrag", false, '\u00ad'},
		{"nul", "ab\x00", false, 0},
		{"c1", "a\u0085b", false, '\u0085'},
		{"del", "a\x7fb", false, '\x7f'},
		{"newline single line", "a\nb", false, '\n'},
		{"newline multi line", "a\r\n\tb", true, 0},
		{"nul multi line", "a\x00b", true, 0},
		{"invalid utf-8", "ab\xffc", false, utf8.RuneError},
		{"replacement character itself is fine", "a\ufffdb", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, bad := FirstRefused(tt.in, tt.multiLine)
			wantBad := tt.want != 0 || tt.name == "nul" || tt.name == "nul multi line"
			if bad != wantBad || (bad && got != tt.want) {
				t.Fatalf("FirstRefused(%q, %v) = %U, %v; want %U, %v", tt.in, tt.multiLine, got, bad, tt.want, wantBad)
			}
			if Acceptable(tt.in, tt.multiLine) == wantBad {
				t.Fatalf("Acceptable(%q) disagrees with FirstRefused", tt.in)
			}
		})
	}
}

func TestCodePoint(t *testing.T) {
	t.Parallel()
	if got := CodePoint('\u202e'); got != "U+202E" {
		t.Fatalf("CodePoint = %q", got)
	}
	if got := CodePoint(0); got != "U+0000" {
		t.Fatalf("CodePoint(0) = %q", got)
	}
}

func FuzzFirstRefusedAgreesWithRefused(f *testing.F) {
	for _, s := range []string{"", "abc", "\u202e", "👩\u200d💻", "\x00", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, bad := FirstRefused(s, false)
		if !bad {
			if !utf8.ValidString(s) {
				t.Fatalf("%q: invalid UTF-8 accepted", s)
			}
			for _, c := range s {
				if c == '\u202e' || c == 0 || c == '\u2066' {
					t.Fatalf("%q: %U accepted", s, c)
				}
			}
			return
		}
		if r != utf8.RuneError && !Refused(r, false) && (r < tagFirst || r > tagCancel) {
			t.Fatalf("%q: reported %U which Refused accepts", s, r)
		}
	})
}
