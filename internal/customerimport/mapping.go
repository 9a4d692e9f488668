package customerimport

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cpqportal/portal/internal/customerrules"
)

// The mapping step (docs/backoffice.md "Import customers"): after the upload, each column of the
// file is matched to a field by its heading (Propose: the person's own mapping for a file of the
// same headings, else the headings the Reader knows), shown to the person and changed where they
// want; the lines are read through the mapping they confirm (LineOf). Unknown values of closed
// lists are mapped per file too ("treat X as Y": ValueMap).

// Fields are the fields a column can fill, in the order the mapping step offers them.
func Fields() []string { return slices.Clone(importFields) }

// Mapping is the field each column of a file fills, in the file's column order ("": the column
// is not imported).
type Mapping []string

// MaxValueLength bounds a value a person types into the dry run (a fixed cell, a value mapped):
// the longest field is 200 characters; anything far longer is not a person's typing.
const MaxValueLength = 1000

// MaxValueChoices bounds the "treat X as Y" choices of one import, per field.
const MaxValueChoices = 200

// ValueMap is the person's choices for values of closed lists in one file: by field ("segment",
// "country"), the value as the file has it (folded: headingKey) and what it is read as (a
// segment's code, a country's ISO code).
type ValueMap map[string]map[string]string

// ValueFields are the fields whose values a person can map.
var ValueFields = []string{"segment", "country"}

// Propose is the mapping proposed for a file's headings: the person's remembered mapping for this
// shape of file (remembered: folded heading to field, RememberedMapping) when there is one, else
// each heading the Reader knows to its field; a field goes to its first column only.
func (r *Reader) Propose(headers []string, remembered map[string]string) Mapping {
	m := make(Mapping, len(headers))
	taken := map[string]bool{}
	for i, h := range headers {
		key := headingKey(h)
		field, ok := r.headings[key]
		if remembered != nil {
			field, ok = remembered[key]
		}
		if ok && field != "" && !taken[field] {
			m[i], taken[field] = field, true
		}
	}
	return m
}

// Shape names a file's set of headings, folded (order, case and punctuation do not count): the
// key under which a person's mapping is remembered.
func Shape(headers []string) string {
	keys := make([]string, 0, len(headers))
	for _, h := range headers {
		if k := headingKey(h); k != "" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	keys = slices.Compact(keys)
	sum := sha256.Sum256([]byte(strings.Join(keys, "\x00")))
	return hex.EncodeToString(sum[:16])
}

// CheckMapping checks a mapping a person posted for a file of columns columns: one field a
// column at most, known fields only, a field for one column only, and the name and tax id
// mapped. Its errors are *InputError.
func CheckMapping(m Mapping, columns int) error {
	if len(m) != columns {
		return inputError("import.mapping.error.columns", strconv.Itoa(columns))
	}
	seen := map[string]bool{}
	for _, field := range m {
		if field == "" {
			continue
		}
		if !slices.Contains(importFields, field) {
			return inputError("import.mapping.error.field")
		}
		if seen[field] {
			return inputError("import.mapping.error.twice", customerrules.Label(field))
		}
		seen[field] = true
	}
	if !seen["name"] || !seen["taxId"] {
		return inputError("import.mapping.error.required")
	}
	return nil
}

// CheckValue checks a value a person typed into the dry run. Its errors are *InputError.
func CheckValue(v string) error {
	if !utf8.ValidString(v) || utf8.RuneCountInString(v) > MaxValueLength {
		return inputError("import.error.value_too_long", strconv.Itoa(MaxValueLength))
	}
	return nil
}

// LineOf is a line of the file read through mapping m with the person's value choices; edit,
// when not nil, holds the fields the person fixed in the dry run and is read instead of the cells.
func (r *Reader) LineOf(row int, cells []string, m Mapping, values ValueMap, edit *customerrules.Fields) Line {
	line := Line{Row: row, Cells: cells, Edit: edit}
	if edit != nil {
		for _, field := range importFields {
			r.set(&line.Fields, field, strings.TrimSpace(edit.Get(field)), values)
		}
	} else {
		for i, cell := range cells[:min(len(cells), len(m))] {
			if m[i] != "" {
				r.set(&line.Fields, m[i], cell, values)
			}
		}
	}
	finish(&line.Fields)
	return line
}

// ValueKey is the form in which a value of a closed list is kept in a ValueMap.
func ValueKey(v string) string { return headingKey(v) }
