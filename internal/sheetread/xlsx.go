package sheetread

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"path"
	"strconv"
	"strings"
)

// The workbook is read straight from its zip, part by part, with encoding/xml's token stream: a
// sheet is never held whole, a row is never widened past its own cells, and nothing is inflated
// but the parts needed (the package relationships, the workbook and its relationships, the shared
// strings and the first sheet), each through one byte budget. encoding/xml expands no entities
// but the five predefined ones, so an XML bomb is only its own bytes.

// errInflated is the budget running out (turned into an InflatesTooMuch Error).
var errInflated = errors.New("sheetread: inflated past the budget")

// budget is what the parts read may still inflate to.
type budget struct{ left int64 }

type budgetReader struct {
	r io.Reader
	b *budget
}

func (r budgetReader) Read(p []byte) (int, error) {
	if r.b.left <= 0 {
		// One byte more tells a part that ends exactly at the budget from one that goes past it.
		var one [1]byte
		n, err := r.r.Read(one[:])
		if n > 0 {
			return 0, errInflated
		}
		return 0, err
	}
	if int64(len(p)) > r.b.left {
		p = p[:r.b.left]
	}
	n, err := r.r.Read(p)
	r.b.left -= int64(n)
	return n, err
}

// workbook is the zip's parts by name.
type workbook struct {
	parts  map[string]*zip.File
	budget *budget
}

// open returns a part's XML token stream (nil, nil when the workbook has no such part).
func (w *workbook) open(name string) (*xml.Decoder, io.Closer, error) {
	f := w.parts[strings.ToLower(strings.TrimPrefix(name, "/"))]
	if f == nil {
		return nil, nil, nil
	}
	rc, err := f.Open()
	if err != nil {
		return nil, nil, &Error{Kind: NotXLSX}
	}
	d := xml.NewDecoder(budgetReader{r: rc, b: w.budget})
	return d, rc, nil
}

// partError turns a failed token read into an Error: the budget, a NUL character (at line, the
// row being read), or a workbook that is not one.
func partError(err error, line int) error {
	var se *xml.SyntaxError
	switch {
	case errors.Is(err, errInflated):
		return &Error{Kind: InflatesTooMuch}
	case errors.As(err, &se) && strings.Contains(se.Msg, "U+0000"):
		return &Error{Kind: NUL, Line: line}
	}
	return &Error{Kind: NotXLSX, Line: line}
}

// relationships reads a .rels part: each relationship's Target by Id, and the Target of the first
// relationship of each Type's last segment ("officeDocument", "sharedStrings"), resolved against
// dir.
func (w *workbook) relationships(name, dir string) (byID, byType map[string]string, err error) {
	byID, byType = map[string]string{}, map[string]string{}
	d, c, err := w.open(name)
	if d == nil || err != nil {
		return byID, byType, err
	}
	defer c.Close()
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			return byID, byType, nil
		}
		if err != nil {
			return nil, nil, partError(err, 0)
		}
		el, ok := tok.(xml.StartElement)
		if !ok || el.Name.Local != "Relationship" {
			continue
		}
		target := attr(el, "Target")
		if strings.HasPrefix(target, "/") {
			target = strings.TrimPrefix(target, "/")
		} else {
			target = path.Join(dir, target)
		}
		byID[attr(el, "Id")] = target
		kind := attr(el, "Type")
		kind = kind[strings.LastIndex(kind, "/")+1:]
		if _, seen := byType[kind]; !seen {
			byType[kind] = target
		}
	}
}

// attr is the value of el's attribute named local (any namespace prefix).
func attr(el xml.StartElement, local string) string {
	for _, a := range el.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// firstSheet finds the first sheet's part and the shared strings' part.
func (w *workbook) firstSheet() (sheet, shared, styles string, err error) {
	_, pkg, err := w.relationships("_rels/.rels", "")
	if err != nil {
		return "", "", "", err
	}
	book := pkg["officeDocument"]
	if book == "" {
		book = "xl/workbook.xml"
	}
	dir := path.Dir(book)
	byID, byType, err := w.relationships(path.Join(dir, "_rels", path.Base(book)+".rels"), dir)
	if err != nil {
		return "", "", "", err
	}
	d, c, err := w.open(book)
	if err != nil {
		return "", "", "", err
	}
	if d == nil {
		return "", "", "", &Error{Kind: NotXLSX}
	}
	defer c.Close()
	for {
		tok, err := d.RawToken()
		if err != nil {
			if err == io.EOF {
				return "", "", "", &Error{Kind: NotXLSX} // no sheet
			}
			return "", "", "", partError(err, 0)
		}
		if el, ok := tok.(xml.StartElement); ok && el.Name.Local == "sheet" {
			// The relationship id is the r:id attribute (its prefix varies; "id" alone is it).
			for _, a := range el.Attr {
				if a.Name.Local == "id" && a.Name.Space != "" {
					if target := byID[a.Value]; target != "" {
						return target, byType["sharedStrings"], byType["styles"], nil
					}
				}
			}
			return "", "", "", &Error{Kind: NotXLSX}
		}
	}
}

// readXLSX reads the first sheet of a workbook.
func readXLSX(ctx context.Context, data []byte, lim Limits, row func(line int, cells []string) error) (err error) {
	defer func() {
		if e, ok := err.(*Error); ok && e.Kind == InflatesTooMuch {
			e.Limit = lim.MaxInflated
		}
	}()
	z, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return &Error{Kind: NotXLSX}
	}
	w := &workbook{parts: make(map[string]*zip.File, len(z.File)), budget: &budget{left: lim.MaxInflated}}
	// The sizes the zip declares are refused first (a bomb in a part never read still says what
	// the file is); the budget then holds the parts read to it, whatever they declared.
	var declared uint64
	for _, f := range z.File {
		w.parts[strings.ToLower(f.Name)] = f
		if declared += f.UncompressedSize64; declared > uint64(lim.MaxInflated) {
			return &Error{Kind: InflatesTooMuch, Limit: lim.MaxInflated}
		}
	}
	sheet, sharedPart, stylesPart, err := w.firstSheet()
	if err != nil {
		return err
	}
	shared, err := w.sharedStrings(ctx, sharedPart, lim)
	if err != nil {
		return err
	}
	dates, err := w.dateStyles(ctx, stylesPart, lim)
	if err != nil {
		return err
	}
	d, c, err := w.open(sheet)
	if err != nil {
		return err
	}
	if d == nil {
		return &Error{Kind: NotXLSX}
	}
	defer c.Close()
	return readSheet(ctx, d, shared, dates, lim, row)
}

// sharedStrings reads the workbook's shared strings (at most lim.MaxCells of them: a sheet cannot
// use more than it has cells).
func (w *workbook) sharedStrings(ctx context.Context, name string, lim Limits) ([]string, error) {
	if name == "" {
		return nil, nil
	}
	d, c, err := w.open(name)
	if d == nil || err != nil {
		return nil, err
	}
	defer c.Close()
	var out []string
	var text strings.Builder
	inT, phonetic := false, 0
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, partError(err, 0)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			switch el.Name.Local {
			case "si":
				text.Reset()
			case "t":
				inT = true
			case "rPh": // a phonetic reading, not the text
				phonetic++
			}
		case xml.EndElement:
			switch el.Name.Local {
			case "si":
				if len(out) >= lim.MaxCells {
					return nil, &Error{Kind: TooManyCells, Limit: int64(lim.MaxCells)}
				}
				if len(out)%1024 == 0 && ctx.Err() != nil {
					return nil, contextError(ctx, 0)
				}
				out = append(out, text.String())
			case "t":
				inT = false
			case "rPh":
				phonetic--
			}
		case xml.CharData:
			if inT && phonetic == 0 {
				text.Write(el)
			}
		}
	}
}

// cellRef is the column and row of a reference such as "XFD12" (0 for a part that is missing or
// malformed; a column past 16384 stays large so the column cap refuses it).
func cellRef(ref string) (column, row int) {
	i := 0
	for ; i < len(ref) && i < 8; i++ {
		ch := ref[i] | 0x20 // lower case
		if ch < 'a' || ch > 'z' {
			break
		}
		column = column*26 + int(ch-'a'+1)
	}
	row, _ = strconv.Atoi(ref[i:])
	return column, row
}

// readSheet streams a sheet's rows: each <row> counts, each <c> counts and is refused past the
// column cap before anything is kept, and a row's cells go up to its own last cell.
func readSheet(ctx context.Context, d *xml.Decoder, shared, dates []string, lim Limits, row func(line int, cells []string) error) error {
	count := counter{lim: lim}
	line, inRow := 0, false
	var cells []string
	// The cell being read: its column and type, and the text of its <v> or inline <is><t>.
	column, kind, style := 0, "", 0
	var value, inline strings.Builder
	inV, inT, inIs, inCell, phonetic := false, false, false, false, 0
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return partError(err, line)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			switch el.Name.Local {
			case "row":
				n, _ := strconv.Atoi(attr(el, "r"))
				if n <= 0 {
					n = line + 1
				}
				line, inRow, cells = n, true, nil
				if err := count.row(ctx, line); err != nil {
					return err
				}
			case "c":
				if !inRow {
					continue
				}
				col, _ := cellRef(attr(el, "r"))
				if col <= 0 {
					col = len(cells) + 1
				}
				if err := count.cell(line, col); err != nil {
					return err
				}
				style, _ = strconv.Atoi(attr(el, "s"))
				column, kind, inCell = col, attr(el, "t"), true
				value.Reset()
				inline.Reset()
			case "v":
				inV = inCell
			case "is":
				inIs = inCell
			case "t":
				inT = inIs
			case "rPh":
				phonetic++
			}
		case xml.EndElement:
			switch el.Name.Local {
			case "v":
				inV = false
			case "t":
				inT = false
			case "is":
				inIs = false
			case "rPh":
				phonetic--
			case "c":
				if !inCell {
					continue
				}
				inCell = false
				text, err := cellText(kind, value.String(), inline.String(), shared, line)
				if (kind == "" || kind == "n") && style >= 0 && style < len(dates) && dates[style] != "" {
					if shown := formatDate(text, dates[style]); shown != "" {
						text = shown
					}
				}
				if err != nil {
					return err
				}
				if strings.IndexByte(text, 0) >= 0 {
					return &Error{Kind: NUL, Line: line}
				}
				if text == "" {
					continue
				}
				// The row grows to this cell's column (at most MaxColumns, checked above).
				for len(cells) < column {
					cells = append(cells, "")
				}
				cells[column-1] = text
			case "row":
				inRow = false
				if len(cells) > 0 {
					if err := row(line, cells); err != nil {
						return err
					}
				}
				cells = nil
			}
		case xml.CharData:
			switch {
			case inV:
				value.Write(el)
			case inT && phonetic == 0:
				inline.Write(el)
			}
		}
	}
}

// cellText is a cell's value as text: a shared string's, an inline string's, or the raw value
// (a number as written, a boolean as 1 or 0, a formula's cached result; a number in a date style
// is then shown as its date, dates.go).
func cellText(kind, value, inline string, shared []string, line int) (string, error) {
	switch kind {
	case "s":
		i, err := strconv.Atoi(strings.TrimSpace(value))
		if err != nil || i < 0 || i >= len(shared) {
			return "", &Error{Kind: NotXLSX, Line: line}
		}
		return shared[i], nil
	case "inlineStr":
		return inline, nil
	}
	return value, nil
}
