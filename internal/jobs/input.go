package jobs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/sheetread"
)

// MaxItems bounds one batch (a month-end run is a few hundred).
const MaxItems = 5000

// maxNumberRunes is the longest contract number accepted (as the contract search does).
const maxNumberRunes = 200

// Limits of an uploaded list (internal/sheetread, docs/backoffice.md "Limits of an uploaded
// file"): counted on what the file holds, before anything is kept. A list of MaxItems contract
// numbers, even an export of the contracts list with its other columns, is well inside each.
// The workbook's parts may inflate to 16 MiB in all (a zip bomb is refused by the sizes it
// declares, and the parts read stop at the budget whatever they declared).
var fileLimits = sheetread.Limits{
	MaxRows:     4 * MaxItems, // blank rows count
	MaxColumns:  64,
	MaxCells:    64 * MaxItems,
	MaxInflated: 16 << 20,
}

// Entry is one contract number of the user's input and where it came from.
type Entry struct {
	Line   int
	Number string
}

// ParseText reads contract numbers pasted by the user: one a line, or separated by commas,
// semicolons, spaces or tabs. Line is the line of the text.
func ParseText(text string) []Entry {
	var out []Entry
	for i, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		for _, field := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ';' || unicode.IsSpace(r) }) {
			out = append(out, Entry{Line: i + 1, Number: field})
		}
	}
	return out
}

// InputError is a problem with the user's file; Message tells them, translated where shown.
type InputError struct{ Message i18n.Message }

func (e *InputError) Error() string {
	return fmt.Sprintf("jobs: unusable file: %s %v", e.Message.Key, e.Message.Args)
}

func inputError(key string, args ...any) error { return &InputError{i18n.M(key, args...)} }

// contractHeadings are the words of a contract-number column's heading in the portal's languages
// (lower case; "contrat" covers French and Spanish): a person exports the list in theirs.
var contractHeadings = []string{"contract", "contratt", "contrat", "vertrag"}

// ParseFile reads the contract-number column of an uploaded CSV or XLSX file (the first sheet)
// within fileLimits, until ctx ends (the request's, with a deadline: sheetread.TooSlow).
// The column is the one whose header names a contract in one of the portal's languages (e.g.
// "Contract number", "Numero contratto", "Vertragsnummer"); without such a header, the first
// column of every row. Line is the row of the file. Its errors are *InputError.
func ParseFile(ctx context.Context, name string, data []byte) ([]Entry, error) {
	var rows [][]string
	var lines []int // the file's row number of each of rows
	// Rows past the maximum are refused while reading: the header and MaxItems lines at most
	// (rows without any text are not kept, but count to fileLimits.MaxRows).
	keep := func(line int, row []string) error {
		if !slices.ContainsFunc(row, func(cell string) bool { return strings.TrimSpace(cell) != "" }) {
			return nil
		}
		if len(rows) > MaxItems {
			return inputError("batch.file.too_many_rows", strconv.Itoa(MaxItems))
		}
		rows, lines = append(rows, row), append(lines, line)
		return nil
	}
	opts := sheetread.Options{Limits: fileLimits}
	head := bytes.TrimPrefix(data[:min(len(data), 4096)], []byte("\xef\xbb\xbf"))
	if bytes.Count(head, []byte(";")) > bytes.Count(head, []byte(",")) {
		opts.Comma = ';'
	}
	if err := sheetread.Read(ctx, name, data, opts, keep); err != nil {
		var unusable *sheetread.Error
		if errors.As(err, &unusable) {
			return nil, fileError(unusable)
		}
		return nil, err
	}
	column, first := 0, 0
	if len(rows) > 0 && lines[0] == 1 {
		for i, cell := range rows[0] {
			if slices.ContainsFunc(contractHeadings, func(word string) bool { return strings.Contains(strings.ToLower(cell), word) }) {
				column, first = i, 1
				break
			}
		}
	}
	var out []Entry
	for i := first; i < len(rows); i++ {
		if column < len(rows[i]) {
			if v := strings.TrimSpace(rows[i][column]); v != "" {
				out = append(out, Entry{Line: lines[i], Number: v})
			}
		}
	}
	return out, nil
}

// fileError says what a sheetread refusal means for a list of contract numbers.
func fileError(e *sheetread.Error) error {
	switch e.Kind {
	case sheetread.WrongType:
		return inputError("batch.file.wrong_type")
	case sheetread.NotUTF8:
		return inputError("batch.file.not_utf8")
	case sheetread.CSVSyntax:
		return inputError("batch.file.csv_line", strconv.Itoa(e.Line))
	case sheetread.InflatesTooMuch:
		return inputError("batch.file.inflates_too_much", strconv.FormatInt(e.Limit>>20, 10))
	case sheetread.TooManyColumns:
		return inputError("batch.file.too_many_columns", strconv.FormatInt(e.Limit, 10), strconv.Itoa(e.Line), sheetread.ColumnName(e.Column))
	case sheetread.TooManyRows:
		return inputError("batch.file.too_many_file_rows", strconv.FormatInt(e.Limit, 10))
	case sheetread.TooManyCells:
		return inputError("batch.file.too_many_cells", strconv.FormatInt(e.Limit, 10))
	case sheetread.NUL:
		return inputError("batch.file.nul", strconv.Itoa(e.Line))
	case sheetread.TooSlow:
		return inputError("batch.file.too_slow")
	case sheetread.Cancelled:
		return ErrReadCancelled
	}
	return inputError("batch.file.not_xlsx")
}

// ErrReadCancelled: the file's read ended with its context (the person went away, the portal
// stops); nobody is left to tell.
var ErrReadCancelled = errors.New("jobs: reading the file was cancelled")

// numberProblem checks a contract number's form before any v2 call (the zero Message when
// acceptable): the spec only says it is a string, so the portal refuses what cannot be one
// (docs/backoffice.md).
func numberProblem(n string) i18n.Message {
	switch {
	case !utf8.ValidString(n):
		return i18n.M("batch.line.invalid_chars")
	case utf8.RuneCountInString(n) > maxNumberRunes:
		return i18n.M("batch.line.too_long", strconv.Itoa(maxNumberRunes))
	case n == "." || n == "..":
		return i18n.M("batch.line.not_a_number")
	}
	for _, r := range n {
		if unicode.IsControl(r) || r == '/' || r == '\\' || r == '"' || r == '\'' || r == '<' || r == '>' || r == '=' {
			return i18n.M("batch.line.char_not_allowed", strconv.QuoteRune(r))
		}
	}
	return i18n.Message{}
}

// Found is what the validation learnt of one contract.
type Found struct {
	Customer  string
	Archived  bool
	ArchiveID string
	// Stage is the contract's stage in the caller's words (kept as Item.Stage; the caller may
	// leave out pending items for it before the draft is stored).
	Stage string
}

// ErrUnknown is what a Lookup returns for a contract number the v2 API does not know.
var ErrUnknown = errors.New("jobs: unknown contract")

// Validate turns the entries into a job's items: duplicates, malformed and unknown numbers are
// rejected (each with its line), contracts already archived are done from the start, the rest are
// pending. lookup runs for each well-formed number, concurrency at a time. A number the v2 API
// refuses the person (ErrRefused) is rejected on its line like an unknown one. Any other error of
// lookup ends the validation (the v2 API is down: nothing can be said).
func Validate(ctx context.Context, entries []Entry, concurrency int, lookup func(ctx context.Context, number string) (Found, error)) ([]Item, error) {
	if len(entries) > MaxItems {
		return nil, fmt.Errorf("%w: at most %d contract numbers at a time (%d given)", ErrTooMany, MaxItems, len(entries))
	}
	items := make([]Item, len(entries))
	firstLine := map[string]int{}
	var todo []int
	for i, e := range entries {
		items[i] = Item{Line: e.Line, Number: e.Number, Status: ItemPending}
		if p := numberProblem(e.Number); !p.IsZero() {
			items[i].Status, items[i].Problem = ItemRejected, p
			continue
		}
		if line, dup := firstLine[e.Number]; dup {
			items[i].Status, items[i].Problem = ItemRejected, i18n.M("batch.line.duplicate", strconv.Itoa(line))
			continue
		}
		firstLine[e.Number] = e.Line
		todo = append(todo, i)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	work := make(chan int)
	var wg sync.WaitGroup
	for range max(concurrency, 1) {
		wg.Go(func() {
			for i := range work {
				found, err := lookup(ctx, items[i].Number)
				switch {
				case errors.Is(err, ErrUnknown):
					items[i].Status, items[i].Problem = ItemRejected, i18n.M("batch.line.unknown")
				case errors.Is(err, ErrRefused):
					items[i].Status, items[i].Problem = ItemRejected, i18n.M("batch.line.refused")
				case err != nil:
					cancel(err)
				case found.Archived:
					items[i].Status, items[i].ArchiveID, items[i].Note, items[i].Customer = ItemDone, found.ArchiveID, NoteAlreadyArchived, found.Customer
					items[i].Stage = found.Stage
				default:
					items[i].Customer, items[i].Stage = found.Customer, found.Stage
				}
			}
		})
	}
send:
	for _, i := range todo {
		select {
		case work <- i:
		case <-ctx.Done():
			break send
		}
	}
	close(work)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	return items, nil
}

// ErrTooMany: the input has more than MaxItems numbers.
var ErrTooMany = errors.New("jobs: too many contract numbers")
