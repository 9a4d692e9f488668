package handlers

import (
	"bytes"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/cpqportal/portal/internal/workindex"
)

// openXLSX reads an export's workbook.
func openXLSX(t *testing.T, resp response) *excelize.File {
	t.Helper()
	if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Content-Type"), "spreadsheetml") {
		t.Fatalf("export: %d %q %.300s", resp.StatusCode, resp.Header.Get("Content-Type"), resp.body)
	}
	book, err := excelize.OpenReader(bytes.NewReader([]byte(resp.body)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = book.Close() })
	return book
}

// TestWorkListExportsTypedAndInTheReadersConvention: the contracts list exports its filter with
// the amounts as numbers (money format) and the dates as dates in XLSX, and in the reader's CSV
// convention (Italian: semicolons, a comma decimal); a contract the viewer's token never read
// (a team role lists it) is exported with its id and link only.
func TestWorkListExportsTypedAndInTheReadersConvention(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	ref, contract := e.newContract(t)
	id := strconv.Itoa(int(contract.ContractID))
	quoteMust(t, "contract page", e.p.do(t, e.user, http.MethodGet, "/contracts/"+id, nil, nil), http.StatusOK)
	quoteMust(t, "quote page", e.p.do(t, e.user, http.MethodGet, ref.URL(), nil, nil), http.StatusOK)
	oneOff := contract.Totals.NetActivation
	if oneOff == 0 {
		t.Fatal("the contract has no one-off total to check")
	}

	book := openXLSX(t, e.p.get(t, e.user, "/work/contracts/export?format=xlsx&stage=generated", nil))
	const sheet = "Contracts by stage"
	rows, err := book.GetRows(sheet)
	if err != nil || len(rows) != 2 {
		t.Fatalf("rows %q %v", rows, err)
	}
	header := strings.Join(rows[0], "|")
	if !strings.HasPrefix(header, "contract|contract id|quote|customer id|customer|product catalogue|stage|one-off net (EUR)|monthly net (EUR)|pipeline value (EUR)|last change (UTC)") {
		t.Errorf("header %q", header)
	}
	if rows[1][0] != contract.ContractNumber || rows[1][4] != contract.Customer.Name || rows[1][6] != "Contract generated" ||
		!strings.HasSuffix(rows[1][len(rows[1])-1], "/contracts/"+id) {
		t.Errorf("row %q", rows[1])
	}
	numFmt := func(cell string) int {
		styleID, _ := book.GetCellStyle(sheet, cell)
		style, err := book.GetStyle(styleID)
		if err != nil {
			t.Fatal(err)
		}
		return style.NumFmt
	}
	raw := func(cell string) string {
		v, _ := book.GetCellValue(sheet, cell, excelize.Options{RawCellValue: true})
		return v
	}
	for _, cell := range []string{"B2", "C2", "H2", "I2", "J2", "K2", "M2"} {
		if typ, _ := book.GetCellType(sheet, cell); typ != excelize.CellTypeUnset && typ != excelize.CellTypeNumber {
			t.Errorf("%s is not a number: type %v, %q", cell, typ, raw(cell))
		}
	}
	if v, err := strconv.ParseFloat(raw("H2"), 64); err != nil || math.Abs(v-oneOff) > 0.005 || numFmt("H2") != 4 {
		t.Errorf("one-off %q (format %d), want %v as money", raw("H2"), numFmt("H2"), oneOff)
	}
	// The pipeline value: one-off plus 12 months of the monthly total, as the lists sort by.
	if v, err := strconv.ParseFloat(raw("J2"), 64); err != nil || math.Abs(v-(oneOff+12*contract.Totals.NetRecurring)) > 0.005 || numFmt("J2") != 4 {
		t.Errorf("value %q (format %d), want %v as money", raw("J2"), numFmt("J2"), oneOff+12*contract.Totals.NetRecurring)
	}
	serial, err := strconv.ParseFloat(raw("K2"), 64)
	// Excel's day 46023 is 1 January 2026.
	if err != nil || serial < 46023 || numFmt("K2") != 22 {
		t.Errorf("last change %q (format %d) is not a date", raw("K2"), numFmt("K2"))
	}
	if typ, _ := book.GetCellType(sheet, "A2"); typ == excelize.CellTypeNumber {
		t.Error("the contract number became a number")
	}

	// Italian CSV: semicolons, byte-order mark, comma decimal, Italian words.
	it := e.p.get(t, e.user, "/work/contracts/export?format=csv&stage=generated", italian)
	if it.StatusCode != http.StatusOK || !strings.Contains(it.Header.Get("Content-Disposition"), "contratti-") {
		t.Fatalf("CSV: %d %q", it.StatusCode, it.Header.Get("Content-Disposition"))
	}
	csvRows := parseExportCSV(t, it.body, ';')
	if len(csvRows) != 2 || csvRows[0][0] != "contratto" || csvRows[1][6] != "Contratto generato" {
		t.Fatalf("Italian CSV %q", csvRows)
	}
	if want := strings.Replace(strconv.FormatFloat(oneOff, 'f', 2, 64), ".", ",", 1); csvRows[1][7] != want {
		t.Errorf("Italian one-off %q, want %q", csvRows[1][7], want)
	}
	if _, err := time.Parse("2006-01-02 15:04:05", csvRows[1][10]); err != nil {
		t.Errorf("CSV date %q: %v", csvRows[1][10], err)
	}
	en := parseExportCSV(t, e.p.get(t, e.user, "/work/contracts/export?format=csv&stage=generated", nil).body, ',')
	if en[1][7] != strconv.FormatFloat(oneOff, 'f', 2, 64) {
		t.Errorf("English one-off %q", en[1][7])
	}

	// The quotes list: the quote with its contract, by the list's filters.
	quotes := parseExportCSV(t, e.p.get(t, e.user, "/work/quotes/export?format=csv&scope=all&stage=generated", nil).body, ',')
	if len(quotes) != 2 || quotes[1][0] != strconv.FormatInt(ref.QuoteID, 10) || quotes[1][5] != contract.ContractNumber {
		t.Errorf("quotes CSV %q", quotes)
	}
	if none := parseExportCSV(t, e.p.get(t, e.user, "/work/quotes/export?format=csv&stage=archived", nil).body, ','); len(none) != 1 {
		t.Errorf("a filter with no rows exports %d rows", len(none)-1)
	}

	// A team role may list the colleague's contract, which their token never read: since the
	// visibility rule is by construction (issue 38; it was written with its id and link), the
	// export leaves it out whole, and no filter matches on its facts.
	lead := e.p.login(t, "backoffice", "backoffice-demo")
	leadExport := func(query string) (found []string, body string) {
		resp := e.p.get(t, lead, "/work/contracts/export?format=csv"+query, nil)
		for _, r := range parseExportCSV(t, resp.body, ',')[1:] {
			if r[1] == id {
				found = r
			}
		}
		return found, resp.body
	}
	for _, query := range []string{"", "&stage=generated", "&q=" + url.QueryEscape(contract.Customer.Name[:3]), "&sort=value",
		"&customer=" + strconv.Itoa(int(contract.CustomerID))} {
		found, body := leadExport(query)
		if found != nil || strings.Contains(body, contract.Customer.Name) || strings.Contains(body, contract.ContractNumber) {
			t.Errorf("export%s: a row the lead's token never read is in it: %q", query, found)
		}
	}
	// The lead's list re-reads it with their token: from then on the export has it whole.
	quoteMust(t, "the lead's list", e.p.do(t, lead, http.MethodGet, "/work/contracts", nil, nil), http.StatusOK)
	found, _ := leadExport("&stage=generated")
	if found == nil || found[0] != contract.ContractNumber || found[4] != contract.Customer.Name {
		t.Errorf("after the lead's token read it, the export has %q", found)
	}
}

// TestWorkListExportRefusesBadInput: a bad format or a filter the list refuses answers 400 with
// the reason, never a file or a 5xx.
func TestWorkListExportRefusesBadInput(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{})
	sales := p.login(t, "sales", "sales-demo")
	for _, path := range []string{"/work/quotes/export?format=pdf", "/work/quotes/export", "/work/contracts/export?format=csv&stage=draft",
		"/work/quotes/export?format=xlsx&from=2026-02-30", "/work/contracts/export?format=csv&q=" + strings.Repeat("x", 201)} {
		resp := p.get(t, sales, path, nil)
		if resp.StatusCode != http.StatusBadRequest || strings.Contains(resp.Header.Get("Content-Disposition"), "attachment") {
			t.Errorf("%s: %d %q", path, resp.StatusCode, resp.Header.Get("Content-Disposition"))
		}
	}
	if !strings.Contains(p.get(t, sales, "/work/quotes/export?format=csv&stage=bogus", nil).body, "filters could not be read") {
		t.Error("the reason is not given")
	}
}

// TestWorkRevealedRule: the export writes what the one rule reveals (workindex.Row.Revealed): the
// viewer's own read at or after the row's facts last changed, however long ago; never a row they
// never read, nor one someone's read changed since theirs.
func TestWorkRevealedRule(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name            string
		viewer, factsAt time.Time
		want            bool
	}{
		{"never read by the viewer", time.Time{}, now, false},
		{"read by the viewer a minute ago, unchanged since", now.Add(-time.Minute), now.Add(-time.Hour), true},
		{"read by the viewer long ago, unchanged since", now.Add(-48 * time.Hour), now.Add(-48 * time.Hour), true},
		{"read by the viewer long ago, changed since", now.Add(-48 * time.Hour), now.Add(-time.Hour), false},
	} {
		r := workindex.Row{ViewerSeenAt: tc.viewer, FactsAt: tc.factsAt, SeenAt: now}
		if got := r.Revealed(); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestWorkListExportStoreDown: a database that cannot be read answers "lists unavailable" (503),
// never an empty file.
func TestWorkListExportStoreDown(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{workDown: true})
	sales := p.login(t, "sales", "sales-demo")
	resp := p.get(t, sales, "/work/quotes/export?format=xlsx", nil)
	if resp.StatusCode != http.StatusServiceUnavailable || strings.Contains(resp.Header.Get("Content-Disposition"), "attachment") ||
		!strings.Contains(resp.body, "Lists unavailable right now") {
		t.Errorf("export with the store down: %d %q %.200s", resp.StatusCode, resp.Header.Get("Content-Disposition"), resp.body)
	}
}
