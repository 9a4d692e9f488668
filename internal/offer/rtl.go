package offer

import (
	"slices"
	"unicode"

	"golang.org/x/text/unicode/bidi"
	"golang.org/x/text/unicode/norm"
)

// Right-to-left text in the offer. fpdf draws glyphs left to right, one per character, without
// shaping, so a Hebrew or Arabic name is put into visual order here: Arabic letters take their
// joined forms (the presentation forms of Unicode, which the embedded DejaVu subset has), and each
// right-to-left run of a line is reversed, digits inside it kept left to right, as the Unicode
// bidirectional algorithm orders a run in a left-to-right paragraph (the offer's five languages
// are all left to right). A name long enough to wrap is wrapped after this ordering: its lines are
// in visual order but the first line holds its end. Names are short; that is accepted.

// arabicForms are a letter's presentation forms (0: none).
type arabicForms struct{ isolated, final, initial, medial rune }

// joins reports whether the letter connects to the letter after it (dual-joining).
func (f arabicForms) joins() bool { return f.initial != 0 }

// arabicShaper holds the forms of the Arabic letters, read from Unicode's compatibility
// decompositions of the presentation forms U+FE80–U+FEF4: each letter's forms follow each other
// in the order isolated, final, initial, medial (two forms: a letter joining only to the one
// before it).
type arabicShaper struct {
	forms map[rune]arabicForms
	// lamAlef is the ligature of lam and the alef after it: [isolated, final].
	lamAlef map[rune][2]rune
}

const (
	arabicLam     = '\u0644'
	arabicTatweel = '\u0640'
)

func newArabicShaper() *arabicShaper {
	s := &arabicShaper{forms: map[rune]arabicForms{}, lamAlef: map[rune][2]rune{}}
	var group []rune
	var base rune
	flush := func() {
		f := arabicForms{}
		switch len(group) {
		case 1:
			f.isolated = group[0]
		case 2:
			f.isolated, f.final = group[0], group[1]
		case 4:
			f.isolated, f.final, f.initial, f.medial = group[0], group[1], group[2], group[3]
		}
		if base != 0 && f.isolated != 0 {
			s.forms[base] = f
		}
		group, base = nil, 0
	}
	for r := rune(0xFE80); r <= 0xFEF4; r++ {
		d := []rune(norm.NFKD.String(string(r)))
		if len(d) != 1 {
			continue
		}
		if d[0] != base {
			flush()
			base = d[0]
		}
		group = append(group, r)
	}
	flush()
	for r := rune(0xFEF5); r <= 0xFEFB; r += 2 {
		if d := []rune(norm.NFKD.String(string(r))); len(d) == 2 && d[0] == arabicLam {
			s.lamAlef[d[1]] = [2]rune{r, r + 1}
		}
	}
	return s
}

// transparent reports whether r is a mark that leaves the joining of letters alone.
func transparent(r rune) bool { return unicode.Is(unicode.Mn, r) }

// shape replaces Arabic letters of runes (in logical order) by their joined forms.
func (s *arabicShaper) shape(runes []rune) []rune {
	// next is the index of the letter after i, skipping marks (-1: none).
	next := func(i int) int {
		for j := i + 1; j < len(runes); j++ {
			if !transparent(runes[j]) {
				return j
			}
		}
		return -1
	}
	joinable := func(r rune) bool { _, ok := s.forms[r]; return ok || r == arabicTatweel }
	out := make([]rune, 0, len(runes))
	prevJoins := false // the letter before connects to this one
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		if r == arabicTatweel {
			out = append(out, r)
			prevJoins = true
			continue
		}
		f, ok := s.forms[r]
		if !ok {
			out = append(out, r)
			if !transparent(r) {
				prevJoins = false
			}
			continue
		}
		j := next(i)
		if r == arabicLam && j >= 0 {
			if lig, ok := s.lamAlef[runes[j]]; ok {
				if prevJoins {
					out = append(out, lig[1])
				} else {
					out = append(out, lig[0])
				}
				out = append(out, runes[i+1:j]...) // marks on the lam
				i, prevJoins = j, false            // alef joins nothing after it
				continue
			}
		}
		nextJoins := j >= 0 && joinable(runes[j])
		form := f.isolated
		switch {
		case f.joins() && prevJoins && nextJoins:
			form = f.medial
		case f.joins() && nextJoins:
			form = f.initial
		case prevJoins && f.final != 0:
			form = f.final
		}
		out = append(out, form)
		prevJoins = f.joins()
	}
	return out
}

// rightToLeft reports whether r is a strong right-to-left character.
func rightToLeft(r rune) bool {
	p, _ := bidi.LookupRune(r)
	return p.Class() == bidi.R || p.Class() == bidi.AL
}

// hasRightToLeft reports whether runes hold a right-to-left letter.
func hasRightToLeft(runes []rune) bool { return slices.ContainsFunc(runes, rightToLeft) }

// number reports whether r belongs to a number (digits, and separators between digits).
func number(r rune) bool {
	p, _ := bidi.LookupRune(r)
	switch p.Class() {
	case bidi.EN, bidi.AN:
		return true
	}
	return false
}

// visualOrder reverses each right-to-left run of runes (a left-to-right paragraph): a run starts
// at a right-to-left letter and takes the neutrals, marks and numbers up to the last
// right-to-left letter or number before a left-to-right letter. Inside it, numbers keep their
// order and a mark stays after its letter; brackets are mirrored.
func visualOrder(runes []rune) []rune {
	out := slices.Clone(runes)
	for i := 0; i < len(out); {
		if !rightToLeft(out[i]) {
			i++
			continue
		}
		end := i // the run's last index
		for k := i + 1; k < len(out); k++ {
			p, _ := bidi.LookupRune(out[k])
			if p.Class() == bidi.L {
				break
			}
			if rightToLeft(out[k]) || number(out[k]) || (transparent(out[k]) && k == end+1) {
				end = k
			}
		}
		end = closeBrackets(out, i, end)
		reverseRun(out[i : end+1])
		i = end + 1
	}
	return out
}

// reverseRun reverses run in place by clusters (a letter with its marks), then puts numbers back
// in reading order and mirrors brackets.
func reverseRun(run []rune) {
	var clusters [][]rune
	for i := 0; i < len(run); {
		j := i + 1
		for j < len(run) && transparent(run[j]) {
			j++
		}
		clusters = append(clusters, slices.Clone(run[i:j]))
		i = j
	}
	slices.Reverse(clusters)
	k := 0
	for _, c := range clusters {
		k += copy(run[k:], c)
	}
	for i := 0; i < len(run); {
		if !number(run[i]) {
			i++
			continue
		}
		j := i
		for j+1 < len(run) && (number(run[j+1]) || (j+2 < len(run) && isNumberSeparator(run[j+1]) && number(run[j+2]))) {
			j++
		}
		slices.Reverse(run[i : j+1])
		i = j + 1
	}
	for i, r := range run {
		if m, ok := mirrored(r); ok {
			run[i] = m
		}
	}
}

// closeBrackets extends the run out[start:end+1] over the closing brackets of the brackets it
// opens (with only neutrals before them): a pair of brackets around right-to-left text belongs to
// its run, as the bidirectional algorithm's rule for paired brackets has it.
func closeBrackets(out []rune, start, end int) int {
	open := 0
	for _, r := range out[start : end+1] {
		switch r {
		case '(', '[', '{':
			open++
		case ')', ']', '}':
			open = max(0, open-1)
		}
	}
	for k := end + 1; k < len(out) && open > 0; k++ {
		p, _ := bidi.LookupRune(out[k])
		if p.Class() == bidi.L || number(out[k]) {
			break
		}
		if out[k] == ')' || out[k] == ']' || out[k] == '}' {
			open--
			end = k
		}
	}
	return end
}

func isNumberSeparator(r rune) bool { return r == ',' || r == '.' || r == '\u00a0' || r == '\'' }

// mirrored is the mirror image of a paired bracket.
func mirrored(r rune) (rune, bool) {
	pairs := []rune("()[]{}<>«»")
	if i := slices.Index(pairs, r); i >= 0 {
		return pairs[i^1], true
	}
	return 0, false
}
