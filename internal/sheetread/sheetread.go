// Package sheetread reads an uploaded spreadsheet (CSV, or the first sheet of an XLSX workbook)
// row by row within limits, for the portal's uploads (the batch archive's list, the customer
// import). Every limit is counted on what the file holds, before anything is padded or kept: a
// cell past the column cap is refused where it is read (an .xlsx row is never widened to its last
// cell's column, which excelize's Rows().Columns() does: a 42 KB file of cells at column XFD took
// 1.6 GB that way), every row counts whether blank or not, every cell present counts, the
// workbook's parts are inflated through a byte budget, and the context (the request's, with a
// deadline) is checked while reading. Its errors are *Error.
package sheetread

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Limits bound one read. Zero fields are not allowed: every reader states its own.
type Limits struct {
	// MaxRows is how many rows the file may have, blank or not.
	MaxRows int
	// MaxColumns is the last column a cell may be in (1 is A): a cell further right is refused.
	MaxColumns int
	// MaxCells is how many cells the file may have, empty or not (an .xlsx cell element, a CSV
	// field), and how many shared strings a workbook may have.
	MaxCells int
	// MaxInflated is how many bytes the workbook's parts read (the sheet, its shared strings, the
	// workbook and its relationships) may inflate to, in all.
	MaxInflated int64
}

// Kind is what was wrong with a file.
type Kind int

// The kinds of Error.
const (
	// WrongType: the file's name ends neither in .xlsx nor in .csv or .txt.
	WrongType Kind = iota + 1
	// NotXLSX: the file is no workbook that can be read (not a zip, no sheet, malformed XML).
	NotXLSX
	// NotUTF8: the CSV file is not UTF-8 text.
	NotUTF8
	// CSVSyntax: the CSV file cannot be read at Line (a quote not closed).
	CSVSyntax
	// TooManyColumns: a cell at Line is in column Column, past Limit.
	TooManyColumns
	// TooManyRows: the file has more than Limit rows.
	TooManyRows
	// TooManyCells: the file has more than Limit cells (or shared strings).
	TooManyCells
	// InflatesTooMuch: the workbook's parts inflate to more than Limit bytes.
	InflatesTooMuch
	// NUL: a cell at Line holds a NUL character (no text field can store one).
	NUL
	// TooSlow: the context's deadline passed while reading.
	TooSlow
	// Cancelled: the context was cancelled (the client went away, the portal stops).
	Cancelled
)

// Error is a file the limits or the format refuse; Line is the file's row (CSV: its line) where
// it was found, when it was found at one.
type Error struct {
	Kind   Kind
	Line   int
	Column int
	Limit  int64
}

func (e *Error) Error() string {
	return fmt.Sprintf("sheetread: kind %d at line %d (column %d, limit %d)", e.Kind, e.Line, e.Column, e.Limit)
}

// Options say how to read one file.
type Options struct {
	Limits Limits
	// Comma separates a CSV file's fields (',' when zero).
	Comma rune
}

// Read reads the file named name (its extension says the format) and calls row for each row with
// its number in the file (CSV: the line it starts on) and its cells, from column A up to its last
// cell (never past Limits.MaxColumns). cells is the caller's to keep. Blank CSV lines are skipped
// by encoding/csv; an .xlsx row without cells is not passed. row's error ends the read and is
// returned as is.
func Read(ctx context.Context, name string, data []byte, opts Options, row func(line int, cells []string) error) error {
	if opts.Limits.MaxRows <= 0 || opts.Limits.MaxColumns <= 0 || opts.Limits.MaxCells <= 0 || opts.Limits.MaxInflated <= 0 {
		return errors.New("sheetread: every limit must be set")
	}
	lower := strings.ToLower(name)
	switch {
	case strings.HasSuffix(lower, ".xlsx"):
		return readXLSX(ctx, data, opts.Limits, row)
	case strings.HasSuffix(lower, ".csv") || strings.HasSuffix(lower, ".txt"):
		return readCSV(ctx, data, opts, row)
	}
	return &Error{Kind: WrongType}
}

// contextError turns the context's end into an Error.
func contextError(ctx context.Context, line int) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &Error{Kind: TooSlow, Line: line}
	}
	return &Error{Kind: Cancelled, Line: line}
}

// counter counts rows and cells against the limits.
type counter struct {
	lim         Limits
	rows, cells int
}

func (c *counter) row(ctx context.Context, line int) error {
	if c.rows++; c.rows > c.lim.MaxRows {
		return &Error{Kind: TooManyRows, Line: line, Limit: int64(c.lim.MaxRows)}
	}
	// The context is looked at every 64 rows: cheap, and often enough that a read ends within
	// milliseconds of its deadline.
	if c.rows%64 == 0 && ctx.Err() != nil {
		return contextError(ctx, line)
	}
	return nil
}

func (c *counter) cell(line, column int) error {
	if column > c.lim.MaxColumns {
		return &Error{Kind: TooManyColumns, Line: line, Column: column, Limit: int64(c.lim.MaxColumns)}
	}
	if c.cells++; c.cells > c.lim.MaxCells {
		return &Error{Kind: TooManyCells, Line: line, Limit: int64(c.lim.MaxCells)}
	}
	return nil
}

// ColumnName is a column's letters (1 is A, 16384 is XFD), as a spreadsheet shows it.
func ColumnName(column int) string {
	var b []byte
	for column > 0 {
		column--
		b = append([]byte{byte('A' + column%26)}, b...)
		column /= 26
	}
	return string(b)
}
