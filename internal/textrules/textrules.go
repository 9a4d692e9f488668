// Package textrules decides which characters the portal accepts in text a person types and the
// portal sends on (to the v2 API, into a database query, into a saved view): one function, used
// by the request middleware for every query parameter and form value, by the customer rules (the
// form and the import) and by the signature form, so a rule changed here changes everywhere.
//
// Refused are the characters that cannot be seen yet change what is shown or stored:
//   - invalid UTF-8;
//   - control characters (Unicode category Cc: NUL and the rest of C0, DEL, C1), except tab,
//     line feed and carriage return in a multi-line field (a textarea);
//   - format characters (category Cf): the bidirectional controls U+202A–U+202E, U+2066–U+2069,
//     U+200E, U+200F and U+061C (a name ending in U+202E reversed the amounts shown after it),
//     zero-width spaces and joiners' look-alikes (U+200B, U+2060, U+FEFF), soft hyphens, the
//     invisible tag characters and the rest of Cf.
//
// Kept, although they are format characters: U+200D ZERO WIDTH JOINER (emoji sequences such as
// 👩‍💻 and family emoji are built with it; Indic scripts need it) and U+200C ZERO WIDTH NON-JOINER
// (Persian, Indic and German typography need it). Neither changes the direction of text. Tag
// characters are kept right after U+1F3F4 WAVING BLACK FLAG, where they spell a subdivision flag
// (🏴󠁧󠁢󠁳󠁣󠁴󠁿), and nowhere else.
package textrules

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

const (
	zwnj       = '\u200C'
	zwj        = '\u200D'
	blackFlag  = '\U0001F3F4'
	tagFirst   = '\U000E0020'
	tagCancel  = '\U000E007F'
	invalidRun = utf8.RuneError
)

// Refused reports whether r, on its own, may not appear in a field; multiLine fields accept tab,
// line feed and carriage return. Tag characters are refused here (see FirstRefused for the flag
// sequences that keep them).
func Refused(r rune, multiLine bool) bool {
	switch {
	case r == zwj || r == zwnj:
		return false
	case multiLine && (r == '\t' || r == '\n' || r == '\r'):
		return false
	case unicode.Is(unicode.Cc, r), unicode.Is(unicode.Cf, r):
		return true
	}
	return false
}

// FirstRefused returns the first character of s that a field may not hold and true, or 0 and
// false when s is acceptable. Invalid UTF-8 is reported as utf8.RuneError.
func FirstRefused(s string, multiLine bool) (rune, bool) {
	inFlag := false
	for i, r := range s {
		if r == invalidRun {
			if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
				return invalidRun, true
			}
		}
		if inFlag && r >= tagFirst && r <= tagCancel {
			inFlag = r != tagCancel
			continue
		}
		inFlag = r == blackFlag
		if Refused(r, multiLine) {
			return r, true
		}
	}
	return 0, false
}

// Acceptable reports whether s holds no refused character.
func Acceptable(s string, multiLine bool) bool {
	_, bad := FirstRefused(s, multiLine)
	return !bad
}

// CodePoint names r as a person can look it up: "U+202E". Invalid UTF-8 is named as its
// replacement character, U+FFFD.
func CodePoint(r rune) string { return fmt.Sprintf("U+%04X", r) }
