package handlers

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// italian is what an Italian browser sends.
var italian = map[string]string{"Accept-Language": "it-IT,it;q=0.9,en;q=0.5"}

// TestContractsAndBackOfficeSpeakItalian: with an Italian browser the contract page, the batch
// check (line problems included), the audit worklist and its CSV export and the customer export
// are in Italian; the CSVs keep their columns' order.
func TestContractsAndBackOfficeSpeakItalian(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{login: "backoffice"})
	ref, contract := e.newContract(t)

	page := e.p.get(t, e.user, contractPath(contract.ContractID), italian)
	doc := parseHTML(t, page.body)
	if page.StatusCode != http.StatusOK || doc.Find("html").AttrOr("lang", "") != "it" {
		t.Fatalf("contract page: %d, <html lang=%q>", page.StatusCode, doc.Find("html").AttrOr("lang", ""))
	}
	if got := doc.Find("h1").Text(); got != "Contratto "+contract.ContractNumber {
		t.Errorf("h1 %q", got)
	}
	details := doc.Find(`[data-testid="contract-details"]`).Text()
	for _, want := range []string{"Numero di contratto", "Totale una tantum (netto)", "Scarica il PDF", "Audit di convalida", "\u00a0€"} {
		if !strings.Contains(details, want) {
			t.Errorf("the contract details lack %q: %s", want, details)
		}
	}
	if got := strings.TrimSpace(doc.Find(`[data-testid="archive-button"]`).Text()); got != "Archivia il contratto" {
		t.Errorf("archive button %q", got)
	}
	confirmURL := doc.Find(`[data-testid="archive-button"]`).AttrOr("data-confirm-url", "")
	if got := e.p.get(t, e.user, confirmURL, italian).body; !strings.Contains(got, "Il contratto "+contract.ContractNumber) ||
		!strings.Contains(got, "non è firmato: la sua fase è «Contratto generato»") {
		t.Errorf("archive confirmation from %q: %s", confirmURL, got)
	}
	if pdf := e.p.get(t, e.user, contractPath(contract.ContractID)+"/pdf", italian); !strings.Contains(pdf.Header.Get("Content-Disposition"), "contratto-"+contract.ContractNumber+".pdf") {
		t.Errorf("PDF download named %q, want contratto-<number>.pdf", pdf.Header.Get("Content-Disposition"))
	}

	// A list with a good number, its duplicate, a malformed and an unknown one.
	form := url.Values{"numbers": {contract.ContractNumber + "\n" + contract.ContractNumber + "\nbad/one\nC-0000-UNKNOWN"}, "include_unsent": {"1"}}
	headers := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Accept-Language": italian["Accept-Language"]}
	posted := e.p.do(t, e.user, http.MethodPost, "/contracts/batch-archive", strings.NewReader(form.Encode()), headers)
	batchPath := posted.Header.Get("Location")
	if posted.StatusCode != http.StatusSeeOther || batchPath == "" {
		t.Fatalf("batch check: %d %.300s", posted.StatusCode, posted.body)
	}
	batch := parseHTML(t, e.p.get(t, e.user, batchPath, italian).body)
	summary := strings.Join(strings.Fields(batch.Find(`[data-testid="batch-preview-summary"]`).Text()), " ")
	if summary != "1 contratto sarà archiviato; 0 sono già archiviati (contano come completati); 3 righe hanno un problema e saranno escluse." {
		t.Errorf("preview summary %q", summary)
	}
	if got := strings.TrimSpace(batch.Find(`[data-testid="batch-start"]`).Text()); got != "Archivia 1 contratto" {
		t.Errorf("start button %q", got)
	}
	var messages []string
	batch.Find(`[data-testid="batch-row-message"]`).Each(func(_ int, s *goquery.Selection) { messages = append(messages, strings.TrimSpace(s.Text())) })
	want := []string{"", "duplicato della riga 1", "non è un numero di contratto: '/' non è ammesso",
		"contratto sconosciuto: non esiste alcun contratto con questo numero"}
	if strings.Join(messages, "|") != strings.Join(want, "|") {
		t.Errorf("line messages %q, want %q", messages, want)
	}

	result := e.p.get(t, e.user, batchPath+"/result.csv", italian)
	if cd := result.Header.Get("Content-Disposition"); !strings.Contains(cd, "filename=archiviazione-lotto-") {
		t.Errorf("result CSV named %q", cd)
	}
	// Italian: the reader's convention (semicolons, a byte-order mark).
	rows := parseExportCSV(t, result.body, ';')
	if len(rows) != 5 {
		t.Fatalf("result CSV %q", rows)
	}
	if got := strings.Join(rows[0], ","); got != "numero di contratto,stato,id archivio,errore,riga,nota,cliente,verificato dopo interruzione,fase al controllo" {
		t.Errorf("result CSV headings %q", got)
	}
	if rows[1][1] != "sarà archiviato" || rows[2][1] != "escluso" || rows[2][3] != "duplicato della riga 1" || rows[2][4] != "2" {
		t.Errorf("result CSV lines %q", rows[1:3])
	}

	// The worklist of the contract's quote and of a quote nobody has.
	quoteID := strconv.FormatInt(ref.QuoteID, 10)
	worklist := e.p.get(t, e.user, "/audits/worklist?quotes="+quoteID+"&quotes=999999999", italian)
	wl := parseHTML(t, worklist.body)
	if worklist.StatusCode != http.StatusOK || wl.Find("h1").Text() != "Elenco di lavoro degli audit" {
		t.Fatalf("worklist: %d, h1 %q", worklist.StatusCode, wl.Find("h1").Text())
	}
	if got := wl.Find(`[data-testid="worklist-count"]`).Text(); !strings.Contains(got, "corrispond") {
		t.Errorf("worklist count %q", got)
	}
	if got := wl.Find(`[data-testid="worklist-problem"]`).Text(); got != "Offerta 999999999: offerta inesistente." {
		t.Errorf("worklist problem %q", got)
	}
	if got := wl.Find(`[data-testid="worklist-row"][data-action="CONTRACT_GENERATED"] td`).Eq(4).Text(); got != "Contratto generato" {
		t.Errorf("the CONTRACT_GENERATED row's action reads %q", got)
	}
	if got := wl.Find(`#worklist-action option[value="CUSTOMER_UPDATED"]`).Text(); got != "Cliente aggiornato" {
		t.Errorf("the action filter offers %q", got)
	}

	export := e.p.get(t, e.user, "/audits/worklist/export?format=csv&quotes="+quoteID, italian)
	if cd := export.Header.Get("Content-Disposition"); !strings.Contains(cd, "filename=elenco-audit-") || !strings.HasSuffix(cd, ".csv") {
		t.Errorf("worklist export named %q", cd)
	}
	exported := parseExportCSV(t, export.body, ';')
	if len(exported) < 2 {
		t.Fatalf("worklist export %q", exported)
	}
	if got := strings.Join(exported[0], ","); got != "offerta,id cliente,cliente,quando (UTC),chi,azione,sintesi,modifiche" {
		t.Errorf("worklist export headings %q", got)
	}

	customers := e.p.get(t, e.user, "/customers/export?format=csv", italian)
	if cd := customers.Header.Get("Content-Disposition"); !strings.Contains(cd, "filename=clienti-") {
		t.Errorf("customer export named %q", cd)
	}
	if head, _, _ := strings.Cut(customers.body, "\n"); head != "\uFEFFid;nome;partita IVA;e-mail;segmento;città;paese;responsabili;cataloghi prodotti;aggiornato (UTC)" {
		t.Errorf("customer export headings %q", head)
	}

	bad := e.p.get(t, e.user, "/audits/worklist?quotes=12a", italian)
	if bad.StatusCode != http.StatusBadRequest || !strings.Contains(bad.body, "non è un id offerta") {
		t.Errorf("a malformed quote id: %d, want 400 in Italian", bad.StatusCode)
	}
}
