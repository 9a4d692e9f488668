// Package export writes tables as CSV or XLSX to a writer, row by row, so a 1,000,000-row export
// never holds the whole file in memory: CSV goes straight out, XLSX rows go through excelize's
// streaming writer (which keeps up to 16 MiB of sheet XML in memory, a constant of excelize,
// then spills to a temporary file) and the workbook is zipped straight into the writer at the
// end (not into a buffer first, as File.WriteTo does).
//
// Columns are typed (Kind): numbers, money and dates are numbers in an XLSX file (with a number
// format, so a spreadsheet sorts and sums them) and are written in the reader's convention in a
// CSV file (Convention: the separator, the decimal mark and the byte-order mark Excel needs to
// open the file in the reader's locale, docs/i18n.md).
//
// Text cells of a CSV are neutralised against formula injection (OWASP "CSV Injection"): a cell
// starting with =, +, -, @, a tab or a carriage return gets a leading apostrophe, so a
// spreadsheet shows it as text instead of running it. XLSX cells are written as strings or
// numbers (never formulas), so they need no guard.
package export

import (
	"archive/zip"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/xuri/excelize/v2"
)

// Format is an export file format.
type Format string

// The formats.
const (
	CSV  Format = "csv"
	XLSX Format = "xlsx"
)

// ParseFormat accepts "csv" or "xlsx".
func ParseFormat(s string) (Format, bool) {
	switch Format(s) {
	case CSV, XLSX:
		return Format(s), true
	}
	return "", false
}

// ContentType is the media type of the format.
func (f Format) ContentType() string {
	if f == XLSX {
		return "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
	}
	return "text/csv; charset=utf-8"
}

// Kind is what a column holds.
type Kind int

// The kinds of column, and the Go value each takes in WriteRow ("" or nil leaves a cell empty).
const (
	Text     Kind = iota // string
	Integer              // int, int32 or int64: ids, counts, line numbers (no grouping)
	Decimal              // float64, with two fraction digits
	Money                // float64, an amount with two fraction digits and grouping
	DateTime             // time.Time, shown in Options.Zone
)

// Column is one column: its heading, kind and width (in characters; 0 picks one by kind).
type Column struct {
	Header string
	Kind   Kind
	Width  float64
}

// Convention is how a CSV file is written for its reader.
type Convention struct {
	// Comma separates the cells: ';' where the decimal mark is a comma (Excel's list separator in
	// those locales), ',' elsewhere.
	Comma rune
	// Decimal is the decimal mark of numbers.
	Decimal byte
	// BOM starts the file with a UTF-8 byte-order mark (Excel reads UTF-8 only after one).
	BOM bool
}

// ConventionFor is the convention of a reader whose locale writes decimal as its decimal mark
// (i18n.Translator.DecimalSeparator): semicolons, a comma decimal and a BOM for "," (it, fr, de,
// es), RFC 4180 commas, a point and a BOM otherwise (the BOM keeps accented names readable in
// Excel in every locale and is skipped by CSV readers that know UTF-8).
func ConventionFor(decimal string) Convention {
	if decimal == "," {
		return Convention{Comma: ';', Decimal: ',', BOM: true}
	}
	return Convention{Comma: ',', Decimal: '.', BOM: true}
}

// Options describe the file.
type Options struct {
	// Sheet names the XLSX sheet ("Sheet1" when empty).
	Sheet   string
	Columns []Column
	// CSV is the convention of a CSV file (the zero value: ConventionFor(".")).
	CSV Convention
	// Zone is where DateTime cells are shown (UTC when nil): spreadsheets have no time zones, so
	// the wall clock of the zone is written and the heading should name the zone.
	Zone *time.Location
}

// Writer writes rows; Close finishes the file (for XLSX: the whole zip is written then).
type Writer interface {
	// WriteRow writes one row, a value per column of the kind's Go type (see Kind).
	WriteRow(cells []any) error
	Close() error
}

// New returns a Writer of format f onto w; the columns' headings are the first row.
func New(f Format, w io.Writer, opts Options) (Writer, error) {
	if opts.Zone == nil {
		opts.Zone = time.UTC
	}
	if opts.CSV.Comma == 0 {
		opts.CSV = ConventionFor(".")
	}
	if f == XLSX {
		return newXLSX(w, opts)
	}
	return newCSV(w, opts)
}

// Neutralise guards one CSV cell against formula injection.
func Neutralise(cell string) string {
	if cell == "" {
		return cell
	}
	switch cell[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + cell
	}
	return cell
}

// csvDateTime is how a time is written in a CSV: ISO 8601 order, which Excel reads as a date in
// every locale.
const csvDateTime = "2006-01-02 15:04:05"

type csvWriter struct {
	w    *csv.Writer
	opts Options
	row  []string
	n    int
}

func newCSV(w io.Writer, opts Options) (*csvWriter, error) {
	if opts.CSV.BOM {
		if _, err := io.WriteString(w, "\uFEFF"); err != nil {
			return nil, fmt.Errorf("export: csv: %w", err)
		}
	}
	cw := csv.NewWriter(w)
	cw.Comma = opts.CSV.Comma
	c := &csvWriter{w: cw, opts: opts}
	header := make([]string, len(opts.Columns))
	for i, col := range opts.Columns {
		header[i] = Neutralise(col.Header)
	}
	if err := cw.Write(header); err != nil {
		return nil, fmt.Errorf("export: csv: %w", err)
	}
	return c, nil
}

func (c *csvWriter) WriteRow(cells []any) error {
	c.row = c.row[:0]
	for i, cell := range cells {
		kind := Text
		if i < len(c.opts.Columns) {
			kind = c.opts.Columns[i].Kind
		}
		c.row = append(c.row, c.text(kind, cell))
	}
	if err := c.w.Write(c.row); err != nil {
		return fmt.Errorf("export: csv: %w", err)
	}
	// Flush now and then so a long export streams.
	if c.n++; c.n%512 == 0 {
		c.w.Flush()
		if err := c.w.Error(); err != nil {
			return fmt.Errorf("export: csv: %w", err)
		}
	}
	return nil
}

// text writes one cell in the reader's convention; only text can hold a formula, so only text is
// neutralised (a negative number stays a number).
func (c *csvWriter) text(kind Kind, cell any) string {
	switch v := cell.(type) {
	case nil:
		return ""
	case string:
		return Neutralise(v)
	case int:
		return strconv.Itoa(v)
	case int32:
		return strconv.FormatInt(int64(v), 10)
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return ""
		}
		text := strconv.FormatFloat(v, 'f', 2, 64)
		if kind == Integer {
			text = strconv.FormatFloat(v, 'f', -1, 64)
		}
		if c.opts.CSV.Decimal != '.' {
			text = strings.Replace(text, ".", string(c.opts.CSV.Decimal), 1)
		}
		return text
	case time.Time:
		if v.IsZero() {
			return ""
		}
		return v.In(c.opts.Zone).Format(csvDateTime)
	}
	return Neutralise(fmt.Sprint(cell))
}

func (c *csvWriter) Close() error {
	c.w.Flush()
	if err := c.w.Error(); err != nil {
		return fmt.Errorf("export: csv: %w", err)
	}
	return nil
}

// The XLSX number formats (built-in ids of ECMA-376 18.8.30; Excel shows them in the reader's
// locale: "1.234,50" in Italian).
const (
	numFmtInteger  = 1  // 0
	numFmtDecimal  = 2  // 0.00
	numFmtMoney    = 4  // #,##0.00
	numFmtDateTime = 22 // m/d/yy h:mm, the locale's short date and time
)

// defaultWidths are column widths (in characters) by kind.
var defaultWidths = map[Kind]float64{Text: 24, Integer: 10, Decimal: 12, Money: 14, DateTime: 19}

type xlsxWriter struct {
	w      io.Writer
	file   *excelize.File
	stream *excelize.StreamWriter
	opts   Options
	styles []int // per column, the style of its cells (0: none)
	row    int
	cells  []any
}

func newXLSX(w io.Writer, opts Options) (*xlsxWriter, error) {
	f := excelize.NewFile()
	// File.WriteTo zips the whole workbook into a bytes.Buffer before writing it out (5.5 MiB for
	// 100,000 customers, held at once); its zip writer hook lets the zip go to w as it is made.
	// The buffer excelize passes stays empty. What excelize would patch in that buffer after
	// zipping (the "version needed" of zip64 entries) only matters for parts over 4 GiB, which
	// the portal's exports do not reach (100,000 customers make 60 MiB of sheet XML).
	f.SetZipWriter(func(io.Writer) excelize.ZipWriter { return zip.NewWriter(w) })
	x := &xlsxWriter{w: w, file: f, opts: opts}
	if err := x.start(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("export: xlsx: %w", err)
	}
	return x, nil
}

func (x *xlsxWriter) start() error {
	sheet := x.opts.Sheet
	if sheet == "" {
		sheet = "Sheet1"
	}
	if err := x.file.SetSheetName("Sheet1", sheet); err != nil {
		return err
	}
	sw, err := x.file.NewStreamWriter(sheet)
	if err != nil {
		return err
	}
	x.stream = sw
	formats := map[Kind]int{Integer: numFmtInteger, Decimal: numFmtDecimal, Money: numFmtMoney, DateTime: numFmtDateTime}
	styleOf := map[Kind]int{}
	for kind, numFmt := range formats {
		id, err := x.file.NewStyle(&excelize.Style{NumFmt: numFmt})
		if err != nil {
			return err
		}
		styleOf[kind] = id
	}
	header := make([]any, len(x.opts.Columns))
	for i, col := range x.opts.Columns {
		x.styles = append(x.styles, styleOf[col.Kind])
		width := col.Width
		if width == 0 {
			width = max(defaultWidths[col.Kind], float64(len([]rune(col.Header)))+4)
		}
		if err := sw.SetColWidth(i+1, i+1, width); err != nil {
			return err
		}
		header[i] = col.Header
	}
	// The heading stays in view while scrolling.
	if err := sw.SetPanes(&excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"}); err != nil {
		return err
	}
	return x.write(header, false)
}

func (x *xlsxWriter) WriteRow(cells []any) error {
	if err := x.write(cells, true); err != nil {
		return fmt.Errorf("export: xlsx: %w", err)
	}
	return nil
}

func (x *xlsxWriter) write(cells []any, typed bool) error {
	x.row++
	x.cells = x.cells[:0]
	for i, cell := range cells {
		style := 0
		if typed && i < len(x.styles) {
			style = x.styles[i]
		}
		switch v := cell.(type) {
		case time.Time:
			if v.IsZero() {
				cell = nil
				break
			}
			// A spreadsheet's date has no zone: the wall clock of the reader's zone is written.
			wall := v.In(x.opts.Zone)
			cell = time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), 0, time.UTC)
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				cell = nil
			}
		case string:
			// A string cell, never a formula: excelize writes Go strings as inline text.
			if v == "" {
				cell = nil
			}
		}
		if cell != nil && style != 0 {
			cell = excelize.Cell{StyleID: style, Value: cell}
		}
		x.cells = append(x.cells, cell)
	}
	name, err := excelize.CoordinatesToCellName(1, x.row)
	if err != nil {
		return err
	}
	return x.stream.SetRow(name, x.cells)
}

func (x *xlsxWriter) Close() error {
	defer x.file.Close()
	if n := len(x.opts.Columns); n > 0 {
		// A table over the rows: filter buttons on the heading, banded rows. (A table needs a
		// second row, so an empty export gets an empty one.)
		last, err := excelize.CoordinatesToCellName(n, max(x.row, 2))
		if err != nil {
			return fmt.Errorf("export: xlsx: %w", err)
		}
		if err := x.stream.AddTable(&excelize.Table{Range: "A1:" + last, Name: "Export", StyleName: "TableStyleLight9"}); err != nil {
			return fmt.Errorf("export: xlsx: %w", err)
		}
	}
	if err := x.stream.Flush(); err != nil {
		return fmt.Errorf("export: xlsx: %w", err)
	}
	if _, err := x.file.WriteTo(x.w); err != nil {
		return fmt.Errorf("export: xlsx: %w", err)
	}
	return nil
}
