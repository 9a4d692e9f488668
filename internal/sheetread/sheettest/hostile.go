// Package sheettest makes hostile spreadsheet uploads for tests and the bench: workbooks of a
// few KB whose sheets name cells at column XFD or hold millions of blank rows, written straight
// as the zip of XML parts (deflate makes their repetition tiny).
package sheettest

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"strings"
)

// XFDPerRow is the batch archive's hostile list: a "Contract number" heading and rows contract
// numbers C-1… in column A, each row with one more cell at column XFD (the last one a sheet has).
// 5,000 rows are about 40 KB.
func XFDPerRow(rows int) []byte {
	return workbook(func(w io.Writer) {
		fmt.Fprint(w, `<row r="1"><c r="A1" t="inlineStr"><is><t>Contract number</t></is></c></row>`)
		for i := 2; i <= rows+1; i++ {
			fmt.Fprintf(w, `<row r="%d"><c r="A%d" t="inlineStr"><is><t>C-%d</t></is></c><c r="XFD%d" t="inlineStr"><is><t>x</t></is></c></row>`, i, i, i, i)
		}
	})
}

// The rows of BlankFormulaRows and BlankRows: without a row number (each is the one after the
// last) and all alike, so that deflate packs a million of them into a few KB.
const (
	blankFormulaAtXFD = `<row><c r="XFD1" t="str"><f>""</f><v></v></c></row>`
	blankFormulaAtB   = `<row><c r="B1" t="str"><f>""</f><v></v></c></row>`
)

// BlankFormulaRows is the customer import's hostile file: the heading row of the customer export
// (Name, Tax id) and rows that hold nothing but a formula with a blank result at column XFD.
// 20,000 rows are about 3 KB; 1.5 million about 100 KB.
func BlankFormulaRows(rows int) []byte {
	return workbook(func(w io.Writer) {
		fmt.Fprint(w, `<row r="1"><c r="A1" t="inlineStr"><is><t>Name</t></is></c><c r="B1" t="inlineStr"><is><t>Tax id</t></is></c></row>`)
		for range rows {
			io.WriteString(w, blankFormulaAtXFD)
		}
	})
}

// BlankRows is like BlankFormulaRows with its blank cells in column B: no column is too far,
// only the rows are too many.
func BlankRows(rows int) []byte {
	return workbook(func(w io.Writer) {
		fmt.Fprint(w, `<row r="1"><c r="A1" t="inlineStr"><is><t>Name</t></is></c><c r="B1" t="inlineStr"><is><t>Tax id</t></is></c></row>`)
		for range rows {
			io.WriteString(w, blankFormulaAtB)
		}
	})
}

// Sheet is a workbook whose first sheet's <sheetData> is rows (XML, for cases of a test).
func Sheet(rows string) []byte {
	return workbook(func(w io.Writer) { io.WriteString(w, rows) })
}

// workbook writes the smallest workbook Excel and excelize open, its sheet data from rows.
func workbook(rows func(w io.Writer)) []byte { return workbookShared("", rows) }

// workbookShared is workbook with one shared string, shared (none when "").
func workbookShared(shared string, rows func(w io.Writer)) []byte {
	var out bytes.Buffer
	z := zip.NewWriter(&out)
	part := func(name, text string) {
		w, err := z.Create(name)
		if err != nil {
			panic(err) // writing to memory
		}
		io.WriteString(w, text)
	}
	part("[Content_Types].xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>`)
	part("_rels/.rels", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`)
	part("xl/workbook.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>`)
	part("xl/_rels/workbook.xml.rels", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>`+
		`<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/></Relationships>`)
	if shared != "" {
		part("xl/sharedStrings.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="1" uniqueCount="1"><si><t>`+shared+`</t></si></sst>`)
	}
	w, err := z.Create("xl/worksheets/sheet1.xml")
	if err != nil {
		panic(err)
	}
	var sheet strings.Builder
	sheet.WriteString(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>`)
	io.WriteString(w, sheet.String())
	rows(w)
	io.WriteString(w, `</sheetData></worksheet>`)
	if err := z.Close(); err != nil {
		panic(err)
	}
	return out.Bytes()
}

// WideSparseRows is a customer file of rows rows whose heading row is Name and Tax id and whose
// rows have a name, a tax id and one more cell at column, the rest blank: wide sparse rows.
func WideSparseRows(rows, column int) []byte {
	return workbook(func(w io.Writer) {
		fmt.Fprint(w, `<row r="1"><c r="A1" t="inlineStr"><is><t>Name</t></is></c><c r="B1" t="inlineStr"><is><t>Tax id</t></is></c></row>`)
		for i := 2; i <= rows+1; i++ {
			fmt.Fprintf(w, `<row r="%d"><c r="A%d" t="inlineStr"><is><t>Customer %d</t></is></c><c r="B%d" t="inlineStr"><is><t>IT%011d</t></is></c>`+
				`<c r="%s%d" t="inlineStr"><is><t>x</t></is></c></row>`, i, i, i, i, i, columnName(column), i)
		}
	})
}

// SharedStringFill is a workbook of columns headings ("Name", "Tax id", then "Note 3"…) and rows
// rows whose every cell is the one shared string of size bytes: a few KB that read as rows ×
// columns × size bytes of text.
func SharedStringFill(rows, columns, size int) []byte {
	return workbookShared(strings.Repeat("x", size), func(w io.Writer) {
		io.WriteString(w, `<row r="1">`)
		for c := 1; c <= columns; c++ {
			heading := fmt.Sprintf("Note %d", c)
			switch c {
			case 1:
				heading = "Name"
			case 2:
				heading = "Tax id"
			}
			fmt.Fprintf(w, `<c r="%s1" t="inlineStr"><is><t>%s</t></is></c>`, columnName(c), heading)
		}
		io.WriteString(w, `</row>`)
		for i := 2; i <= rows+1; i++ {
			fmt.Fprintf(w, `<row r="%d">`, i)
			for c := 1; c <= columns; c++ {
				fmt.Fprintf(w, `<c r="%s%d" t="s"><v>0</v></c>`, columnName(c), i)
			}
			io.WriteString(w, `</row>`)
		}
	})
}

// columnName is a column's letters (1 is A).
func columnName(column int) string {
	var b []byte
	for column > 0 {
		column--
		b = append([]byte{byte('A' + column%26)}, b...)
		column /= 26
	}
	return string(b)
}
