package i18n

import "golang.org/x/text/unicode/bidi"

// Isolate returns s, text a person typed (a customer's, a cart's or a person's name, a file
// name), ready to be put into a sentence shown as plain text (a confirmation question, a toast, a
// palette entry, an element holding more than the name): when s holds right-to-left letters
// (Hebrew, Arabic) or explicit direction controls, it is put between U+2068 FIRST STRONG ISOLATE
// and U+2069 POP DIRECTIONAL ISOLATE. Inside, the text keeps its own direction; outside, it
// cannot reorder anything: a name ending in U+202E RIGHT-TO-LEFT OVERRIDE, stored before the
// portal refused such characters (internal/textrules) or written by another client of the v2
// API, no longer reverses the amounts after it, and a Hebrew name no longer pulls the number after
// it to its left (issue 38). Text of left-to-right letters, digits and punctuation cannot do
// either in the portal's left-to-right languages and is returned as it is. In HTML, an element
// holding only the name uses <bdi> instead.
func Isolate(s string) string {
	if !reorders(s) {
		return s
	}
	return "\u2068" + s + "\u2069"
}

// reorders reports whether s holds a character that can change the order of text around it.
func reorders(s string) bool {
	for _, r := range s {
		p, _ := bidi.LookupRune(r)
		switch p.Class() {
		case bidi.R, bidi.AL, bidi.LRE, bidi.RLE, bidi.LRO, bidi.RLO, bidi.PDF, bidi.LRI, bidi.RLI, bidi.FSI, bidi.PDI:
			return true
		}
	}
	return false
}
