package handlers

import (
	"bytes"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/xuri/excelize/v2"

	"github.com/cpqportal/portal/internal/textfold"
)

// TestCustomerExportsInTheReadersConvention: the CSV export opens in an Italian spreadsheet
// (semicolons, byte-order mark, segment and configurators in words) and in an English one
// (commas); the XLSX export has typed cells (the id a number, the update a date), a frozen
// heading, filters and widths.
func TestCustomerExportsInTheReadersConvention(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	customer, err := e.api.Customers.Get(e.ctx(), 1)
	if err != nil {
		t.Fatal(err)
	}
	find := func(rows [][]string) []string {
		for _, r := range rows[1:] {
			if r[0] == "1" {
				return r
			}
		}
		t.Fatalf("customer 1 is not exported: %q", rows)
		return nil
	}
	it := e.p.get(t, e.user, "/customers/export?format=csv", italian)
	if it.StatusCode != http.StatusOK {
		t.Fatalf("export: %d", it.StatusCode)
	}
	row := find(parseExportCSV(t, it.body, ';'))
	if row[1] != customer.Name || row[9] != customer.UpdatedAt.UTC().Format("2006-01-02 15:04:05") {
		t.Errorf("Italian CSV row %q", row)
	}
	if want := map[string]string{"BUSINESS": "Aziende", "CONSUMER": "Privati", "PUBLIC": "Pubblica amministrazione"}[customer.Segment]; row[4] != want {
		t.Errorf("segment %q, want %q", row[4], want)
	}
	if row[8] == "" || row[8] == strconv.Itoa(int(customer.CPQIDs[0])) {
		t.Errorf("configurators %q, want their names", row[8])
	}
	en := e.p.get(t, e.user, "/customers/export?format=csv", nil)
	if row := find(parseExportCSV(t, en.body, ',')); row[1] != customer.Name {
		t.Errorf("English CSV row %q", row)
	}

	x := e.p.get(t, e.user, "/customers/export?format=xlsx", nil)
	book, err := excelize.OpenReader(bytes.NewReader([]byte(x.body)))
	if err != nil {
		t.Fatal(err)
	}
	defer book.Close()
	const sheet = "Customers"
	rows, err := book.GetRows(sheet)
	if err != nil || len(rows) < 2 || rows[0][9] != "updated (UTC)" {
		t.Fatalf("XLSX rows %q %v", rows, err)
	}
	numFmt := func(cell string) int {
		id, _ := book.GetCellStyle(sheet, cell)
		style, err := book.GetStyle(id)
		if err != nil {
			t.Fatal(err)
		}
		return style.NumFmt
	}
	rawID, _ := book.GetCellValue(sheet, "A2", excelize.Options{RawCellValue: true})
	if _, err := strconv.Atoi(rawID); err != nil || numFmt("A2") != 1 {
		t.Errorf("the id is not a number: %q, format %d", rawID, numFmt("A2"))
	}
	rawDate, _ := book.GetCellValue(sheet, "J2", excelize.Options{RawCellValue: true})
	serial, err := strconv.ParseFloat(rawDate, 64)
	// Excel's day 43466 is 1 January 2019: every seeded update is later.
	if err != nil || serial < 43466 || numFmt("J2") != 22 {
		t.Errorf("the update is not a date: %q, format %d", rawDate, numFmt("J2"))
	}
	if typ, _ := book.GetCellType(sheet, "C2"); typ == excelize.CellTypeNumber {
		t.Error("the tax id became a number (leading zeros would be lost)")
	}
	if panes, _ := book.GetPanes(sheet); !panes.Freeze || panes.YSplit != 1 {
		t.Errorf("the heading is not frozen: %+v", panes)
	}
	if tables, _ := book.GetTables(sheet); len(tables) != 1 {
		t.Errorf("no filters: %+v", tables)
	}
	if w, _ := book.GetColWidth(sheet, "B"); w < 20 {
		t.Errorf("the name column is %v wide", w)
	}
}

// TestCustomerListSearchFoldsAndSearchesCityAndOwners: the list's search reads "impianti spa" as
// "Impianti S.p.A." would be written, and finds customers by city and by owner.
func TestCustomerListSearchFoldsAndSearchesCityAndOwners(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	customer, err := e.api.Customers.Get(e.ctx(), 1)
	if err != nil {
		t.Fatal(err)
	}
	ids := func(q string) []string {
		t.Helper()
		resp := e.p.get(t, e.user, "/customers?q="+url.QueryEscape(q), nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("search %q: %d", q, resp.StatusCode)
		}
		var out []string
		parseHTML(t, resp.body).Find(`[data-testid="customer-row"]`).Each(func(_ int, s *goquery.Selection) {
			out = append(out, s.AttrOr("data-customer-id", ""))
		})
		return out
	}
	// The name as people type it: no capitals, accents or full stops.
	typed := strings.ToLower(textfold.Fold(customer.Name))
	for _, q := range []string{typed, customer.Address.City, textfold.Fold(customer.Owners[0].Name) + " " + strings.Fields(customer.Name)[0]} {
		if got := ids(q); !slices.Contains(got, "1") {
			t.Errorf("search %q does not find customer 1 (%s, %s, %s): %v", q, customer.Name, customer.Address.City, customer.Owners[0].Name, got)
		}
	}
}
