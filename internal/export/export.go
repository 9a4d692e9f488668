// Package export writes tables as CSV or XLSX to a writer, row by row, so a 100,000-row export
// never holds the whole file in memory: CSV goes straight out, XLSX rows go through excelize's
// streaming writer (which keeps up to 16 MiB of sheet XML in memory, a constant of excelize,
// then spills to a temporary file) and the workbook is zipped straight into the writer at the
// end (not into a buffer first, as File.WriteTo does).
//
// CSV cells are neutralised against formula injection (OWASP "CSV Injection"): a cell starting
// with =, +, -, @, a tab or a carriage return gets a leading apostrophe, so a spreadsheet shows
// it as text instead of running it. XLSX cells are written as strings (never formulas), so they
// need no guard.
package export

import (
	"archive/zip"
	"encoding/csv"
	"fmt"
	"io"

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

// Writer writes rows; Close finishes the file (for XLSX: the whole zip is written then).
type Writer interface {
	WriteRow(cells []string) error
	Close() error
}

// New returns a Writer of format f onto w; header is the first row.
func New(f Format, w io.Writer, sheet string, header []string) (Writer, error) {
	var out Writer
	if f == XLSX {
		x, err := newXLSX(w, sheet)
		if err != nil {
			return nil, err
		}
		out = x
	} else {
		out = &csvWriter{w: csv.NewWriter(w)}
	}
	if err := out.WriteRow(header); err != nil {
		return nil, err
	}
	return out, nil
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

type csvWriter struct {
	w   *csv.Writer
	row []string
	n   int
}

func (c *csvWriter) WriteRow(cells []string) error {
	c.row = c.row[:0]
	for _, cell := range cells {
		c.row = append(c.row, Neutralise(cell))
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

func (c *csvWriter) Close() error {
	c.w.Flush()
	if err := c.w.Error(); err != nil {
		return fmt.Errorf("export: csv: %w", err)
	}
	return nil
}

type xlsxWriter struct {
	w      io.Writer
	file   *excelize.File
	stream *excelize.StreamWriter
	row    int
	cells  []any
}

func newXLSX(w io.Writer, sheet string) (*xlsxWriter, error) {
	f := excelize.NewFile()
	// File.WriteTo zips the whole workbook into a bytes.Buffer before writing it out (5.5 MiB for
	// 100,000 customers, held at once); its zip writer hook lets the zip go to w as it is made.
	// The buffer excelize passes stays empty. What excelize would patch in that buffer after
	// zipping (the "version needed" of zip64 entries) only matters for parts over 4 GiB, which
	// the portal's exports do not reach (100,000 customers make 60 MiB of sheet XML).
	f.SetZipWriter(func(io.Writer) excelize.ZipWriter { return zip.NewWriter(w) })
	if sheet == "" {
		sheet = "Sheet1"
	}
	if err := f.SetSheetName("Sheet1", sheet); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("export: xlsx: %w", err)
	}
	sw, err := f.NewStreamWriter(sheet)
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("export: xlsx: %w", err)
	}
	return &xlsxWriter{w: w, file: f, stream: sw}, nil
}

func (x *xlsxWriter) WriteRow(cells []string) error {
	x.row++
	x.cells = x.cells[:0]
	for _, cell := range cells {
		// A string cell, never a formula: excelize writes Go strings as inline text.
		x.cells = append(x.cells, cell)
	}
	name, err := excelize.CoordinatesToCellName(1, x.row)
	if err != nil {
		return fmt.Errorf("export: xlsx: %w", err)
	}
	if err := x.stream.SetRow(name, x.cells); err != nil {
		return fmt.Errorf("export: xlsx: %w", err)
	}
	return nil
}

func (x *xlsxWriter) Close() error {
	defer x.file.Close()
	if err := x.stream.Flush(); err != nil {
		return fmt.Errorf("export: xlsx: %w", err)
	}
	if _, err := x.file.WriteTo(x.w); err != nil {
		return fmt.Errorf("export: xlsx: %w", err)
	}
	return nil
}
