package sheetread

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// readCSV reads a UTF-8 CSV file (with or without a byte-order mark) record by record.
func readCSV(ctx context.Context, data []byte, opts Options, row func(line int, cells []string) error) error {
	if !utf8.Valid(data) {
		return &Error{Kind: NotUTF8}
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	cr := csv.NewReader(bytes.NewReader(data))
	if opts.Comma != 0 {
		cr.Comma = opts.Comma
	}
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	count := counter{lim: opts.Limits}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return &Error{Kind: CSVSyntax, Line: pe.Line}
			}
			return &Error{Kind: CSVSyntax}
		}
		line, _ := cr.FieldPos(0) // the file's line (a quoted cell may span lines)
		if err := count.row(ctx, line); err != nil {
			return err
		}
		for i, cell := range rec {
			if err := count.cell(line, i+1); err != nil {
				return err
			}
			if strings.IndexByte(cell, 0) >= 0 {
				l, _ := cr.FieldPos(i)
				return &Error{Kind: NUL, Line: l}
			}
		}
		if err := row(line, slices.Clone(rec)); err != nil {
			return err
		}
	}
}
