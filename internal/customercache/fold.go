package customercache

import (
	"strings"

	"github.com/cpqportal/portal/internal/textfold"
)

// searchTerm is one word a person typed: its lower-case form (an e-mail or tax id typed as the
// list holds it) and its folded form (a name as people write it).
type searchTerm struct {
	lower, folded string
}

// in reports whether the term occurs in the text of a search key.
func (t searchTerm) in(text string) bool {
	if strings.Contains(text, t.folded) {
		return true
	}
	// Most words fold to themselves: one scan is then enough.
	return t.lower != t.folded && strings.Contains(text, t.lower)
}

// maxSearchTerms bounds the words of one search (a bit each in the city and owners masks); the
// query itself is at most 200 characters (handlers).
const maxSearchTerms = 64

// searchTermsOf splits what a person typed into terms; a word that folds to nothing (".") is
// dropped, words past maxSearchTerms too.
func searchTermsOf(text string) []searchTerm {
	var terms []searchTerm
	for _, w := range strings.Fields(strings.ToLower(text)) {
		if folded := textfold.Fold(w); folded != "" && len(terms) < maxSearchTerms {
			terms = append(terms, searchTerm{lower: w, folded: folded})
		}
	}
	return terms
}
