package jobs

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"

	"github.com/cpqportal/portal/internal/i18n"
)

// MaxItems bounds one batch (a month-end run is a few hundred).
const MaxItems = 5000

// maxNumberRunes is the longest contract number accepted (as the contract search does).
const maxNumberRunes = 200

// Limits of an uploaded workbook: an .xlsx is a zip, and a few hundred KB can inflate to gigabytes
// (a zip bomb). excelize refuses a workbook whose parts inflate to more than maxXLSXUnzipped in all,
// and keeps a sheet larger than maxXLSXSheetInMemory in a temporary file instead of memory. A list
// of MaxItems contract numbers needs well under 1 MiB of sheet XML.
const (
	maxXLSXUnzipped      = 16 << 20
	maxXLSXSheetInMemory = 4 << 20
)

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

// ParseFile reads the contract-number column of an uploaded CSV or XLSX file (the first sheet).
// The column is the one whose header names a contract in one of the portal's languages (e.g.
// "Contract number", "Numero contratto", "Vertragsnummer"); without such a header, the first
// column of every row. Line is the row of the file. Its errors are *InputError.
func ParseFile(name string, data []byte) ([]Entry, error) {
	var rows [][]string
	var lines []int // the file's row number of each of rows
	read := 0
	// Rows past the maximum are refused while reading: the header and MaxItems lines at most
	// (rows without any text are not kept).
	keep := func(row []string) error {
		read++
		if !slices.ContainsFunc(row, func(cell string) bool { return strings.TrimSpace(cell) != "" }) {
			return nil
		}
		if len(rows) > MaxItems {
			return inputError("batch.file.too_many_rows", strconv.Itoa(MaxItems))
		}
		rows, lines = append(rows, row), append(lines, read)
		return nil
	}
	lower := strings.ToLower(name)
	switch {
	case strings.HasSuffix(lower, ".xlsx"):
		f, err := excelize.OpenReader(bytes.NewReader(data), excelize.Options{UnzipSizeLimit: maxXLSXUnzipped, UnzipXMLSizeLimit: maxXLSXSheetInMemory})
		if err != nil {
			if strings.Contains(err.Error(), "unzip size exceeds") {
				return nil, inputError("batch.file.inflates_too_much", strconv.Itoa(maxXLSXUnzipped>>20))
			}
			return nil, inputError("batch.file.not_xlsx")
		}
		defer f.Close()
		sheets := f.GetSheetList()
		if len(sheets) == 0 {
			return nil, inputError("batch.file.no_sheet")
		}
		sheet, err := f.Rows(sheets[0])
		if err != nil {
			return nil, inputError("batch.file.sheet_unreadable")
		}
		defer sheet.Close()
		for sheet.Next() {
			row, err := sheet.Columns()
			if err != nil {
				return nil, inputError("batch.file.sheet_unreadable")
			}
			if err := keep(row); err != nil {
				return nil, err
			}
		}
		if sheet.Error() != nil {
			return nil, inputError("batch.file.sheet_unreadable")
		}
	case strings.HasSuffix(lower, ".csv") || strings.HasSuffix(lower, ".txt"):
		if !utf8.Valid(data) {
			return nil, inputError("batch.file.not_utf8")
		}
		data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
		r := csv.NewReader(bytes.NewReader(data))
		r.FieldsPerRecord = -1
		if bytes.Count(data[:min(len(data), 4096)], []byte(";")) > bytes.Count(data[:min(len(data), 4096)], []byte(",")) {
			r.Comma = ';'
		}
		for {
			rec, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				var pe *csv.ParseError
				if errors.As(err, &pe) {
					return nil, inputError("batch.file.csv_line", strconv.Itoa(pe.Line))
				}
				return nil, inputError("batch.file.csv_unreadable")
			}
			if err := keep(rec); err != nil {
				return nil, err
			}
		}
	default:
		return nil, inputError("batch.file.wrong_type")
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
