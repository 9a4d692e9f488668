package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/playwright-community/playwright-go"
	"github.com/xuri/excelize/v2"
)

// Journeys of the batch archive (docs/backoffice.md). Each test makes its own contracts through
// the portal (a quote, then its contract) for the demo customer below, so the numbers are whatever
// the v2 API gives. Injected failures and slowness use the embedded simulator's /_sim/ control
// API; against an external v2 API (E2E_V2_API_URL) the tests that need them are skipped.

// batchContract is a contract a test made.
type batchContract struct {
	path, number string
}

// batchMakeContracts makes n contracts (one quote each) with the page's sign-in.
func batchMakeContracts(t *testing.T, page playwright.Page, n int) []batchContract {
	t.Helper()
	return batchMakeContractsFor(t, page, createTestCustomer(t, page, "Batch"), n)
}

// batchMakeContractsFor makes n contracts (one quote each) of customer with the page's sign-in.
func batchMakeContractsFor(t *testing.T, page playwright.Page, customer testCustomer, n int) []batchContract {
	t.Helper()
	out := make([]batchContract, 0, n)
	for range n {
		quotePath, _, _ := createTestQuote(t, page, customer, "Batch test")
		resp, err := generateContract(t, page.Request(), portalURL(quotePath))
		check(t, err, "generate a contract")
		body, _ := resp.Text()
		path := strings.TrimPrefix(resp.URL(), suite.portalURL)
		if resp.Status() != 200 || !regexp.MustCompile(`^/contracts/\d+$`).MatchString(path) {
			t.Fatalf("generating the contract of %s ended at %s with %d: %.300s", quotePath, resp.URL(), resp.Status(), body)
		}
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
		check(t, err, "parse the contract page")
		number := strings.TrimSpace(strings.TrimPrefix(doc.Find(`h1[data-testid="page-title"]`).Text(), "Contract"))
		if number == "" {
			t.Fatalf("no contract number on %s", path)
		}
		out = append(out, batchContract{path: path, number: number})
	}
	return out
}

// simFault sets a fault of the embedded simulator (cleared when the test ends); it skips the test
// when the v2 API is not the embedded simulator.
func simFault(t *testing.T, endpoint string, fault map[string]any) {
	t.Helper()
	if suite.simURL == "" {
		t.Skip("needs the embedded simulator's fault injection (not available with E2E_V2_API_URL)")
	}
	body, _ := json.Marshal(map[string]any{"endpoint": endpoint, "fault": fault})
	resp, err := http.Post(suite.simURL+"/_sim/faults", "application/json", bytes.NewReader(body))
	check(t, err, "set a simulator fault")
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("setting the fault answered %d", resp.StatusCode)
	}
	t.Cleanup(func() {
		req, _ := http.NewRequest(http.MethodDelete, suite.simURL+"/_sim/faults", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	})
}

// batchOpenForm goes to the batch archive the way a person does: Contracts, then the link.
func batchOpenForm(t *testing.T, page playwright.Page) {
	t.Helper()
	_, err := page.Goto("/contracts")
	check(t, err, "open Contracts")
	check(t, page.GetByTestId("batch-archive-link").Click(), "click Archive many contracts at once")
	check(t, suite.expect.Locator(page.GetByTestId("batch-form")).ToBeVisible(), "the batch form is shown")
}

// batchIncludeUnsent ticks the form's "Include contracts that are not signed" (the contracts these
// tests make are only generated, which the check leaves out by default).
func batchIncludeUnsent(t *testing.T, page playwright.Page) {
	t.Helper()
	check(t, page.GetByTestId("batch-include-unsent-box").Check(), "include contracts that are not signed")
}

// batchSendForSignature sends the contract out for signature on its page, as a person does.
func batchSendForSignature(t *testing.T, page playwright.Page, c batchContract) {
	t.Helper()
	_, err := page.Goto(c.path)
	check(t, err, "open the contract")
	check(t, page.GetByTestId("signature-email").Fill("signer@example.com"), "signer's e-mail")
	check(t, page.GetByTestId("signature-signer").Fill("Signer"), "signer's name")
	clickSettled(t, page, page.GetByTestId("signature-send"), "send for signature")
	check(t, suite.expect.Locator(page.GetByTestId("signature-remove")).ToBeVisible(), "the request is out")
}

// batchCheck pastes lines and checks the list.
func batchCheck(t *testing.T, page playwright.Page, lines []string) {
	t.Helper()
	check(t, page.GetByTestId("batch-numbers").Fill(strings.Join(lines, "\n")), "paste the numbers")
	check(t, page.GetByTestId("batch-check").Click(), "check the list")
	check(t, suite.expect.Locator(page.GetByTestId("batch-preview")).ToBeVisible(), "the preview is shown")
}

func batchExpectCount(t *testing.T, page playwright.Page, testID string, n int, what string) {
	t.Helper()
	check(t, suite.expect.Locator(page.GetByTestId(testID)).ToHaveText(strconv.Itoa(n),
		playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(60_000)}), what)
}

func batchExpectStatus(t *testing.T, page playwright.Page, status string) {
	t.Helper()
	check(t, suite.expect.Locator(page.GetByTestId("batch-status")).ToHaveText(status,
		playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(60_000)}), "the batch says "+status)
}

// batchDownloadCSV clicks the download and parses the CSV.
func batchDownloadCSV(t *testing.T, page playwright.Page) [][]string {
	t.Helper()
	download, err := page.ExpectDownload(func() error { return page.GetByTestId("batch-download").Click() })
	check(t, err, "download the result")
	path, err := download.Path()
	check(t, err, "the downloaded file")
	data, err := os.ReadFile(path)
	check(t, err, "read the download")
	rows := parseCSV(t, data)
	if len(rows) == 0 || strings.Join(rows[0], ",") != "contract number,status,archive id,error,line,note,customer,checked after interruption,stage when checked" {
		t.Fatalf("CSV header: %q", rows)
	}
	return rows[1:]
}

// TestBatchArchiveFailuresRetryAndResult: 50 contracts (one archived beforehand, one signed), a
// duplicate, a malformed and an unknown number; by default the preview leaves out
// the 48 never sent for signature, each with the reason and its stage, until "Include them"; 5
// archive calls fail on the v2 side; "retry failed" re-runs only those; the CSV has every line.
func TestBatchArchiveFailuresRetryAndResult(t *testing.T) {
	page := newPage(t)
	login(t, page, backofficeUser, backofficePass)
	contracts := batchMakeContracts(t, page, 50)
	// One contract is archived already (on its own page): it counts as done, not failed.
	archived, err := page.Request().Post(portalURL(contracts[0].path+"/archive"), playwright.APIRequestContextPostOptions{})
	check(t, err, "archive one contract first")
	if archived.Status() != 200 {
		t.Fatalf("archiving %s answered %d", contracts[0].path, archived.Status())
	}
	batchSendForSignature(t, page, contracts[1])
	signerAnswers(t, contracts[1].number, "SIGNED", "") // signer_test.go
	simFault(t, "contracts.archive", map[string]any{"status": 503, "times": 5})

	unknown := fmt.Sprintf("UNKNOWN-%d", rand.Int64N(1e12))
	lines := []string{}
	for _, c := range contracts {
		lines = append(lines, c.number)
	}
	lines = append(lines, contracts[3].number, "bad/number", unknown) // lines 51, 52, 53
	batchOpenForm(t, page)
	batchCheck(t, page, lines)
	rowOf := func(line int) playwright.Locator {
		return page.Locator(`[data-testid="batch-row"]`).Filter(playwright.LocatorFilterOptions{Has: page.Locator("td:first-child").GetByText(strconv.Itoa(line), playwright.LocatorGetByTextOptions{Exact: playwright.Bool(true)})})
	}
	// By default only the signed contract is to be archived; the others never sent for signature
	// are left out, each saying why and at which stage.
	check(t, suite.expect.Locator(page.GetByTestId("batch-preview-summary")).ToContainText(
		"1 contract will be archived; 1 is already archived (counted as done); 51 lines have a problem"), "the preview leaves out the contracts never sent")
	check(t, suite.expect.Locator(rowOf(2)).ToContainText("will be archived"), "the signed contract is archived")
	check(t, suite.expect.Locator(rowOf(2).GetByTestId("batch-row-stage")).ToHaveText("Signed"), "with its stage")
	check(t, suite.expect.Locator(rowOf(3)).ToContainText("left out"), "a contract never sent is left out")
	check(t, suite.expect.Locator(rowOf(3).GetByTestId("batch-row-message")).ToContainText("never sent for signature"), "with the reason")
	check(t, suite.expect.Locator(rowOf(3).GetByTestId("batch-row-stage")).ToHaveText("Contract generated"), "and its stage")
	check(t, suite.expect.Locator(page.GetByTestId("batch-include-unsent")).ToContainText("48 contract"), "the preview offers to include the 48")
	check(t, page.GetByTestId("batch-include-unsent-button").Click(), "include them and check again")
	check(t, suite.expect.Locator(page.GetByTestId("batch-preview-summary")).ToContainText(
		"49 contracts will be archived; 1 is already archived (counted as done); 3 lines have a problem"), "the preview counts")
	check(t, suite.expect.Locator(page.GetByTestId("batch-include-unsent")).ToHaveCount(0), "nothing is left out for its stage any more")
	check(t, suite.expect.Locator(rowOf(51).GetByTestId("batch-row-message")).ToHaveText("duplicate of line 4"), "the duplicate is named with its line")
	check(t, suite.expect.Locator(rowOf(52).GetByTestId("batch-row-message")).ToContainText("not a contract number"), "the malformed number is named")
	check(t, suite.expect.Locator(rowOf(53).GetByTestId("batch-row-message")).ToContainText("unknown contract"), "the unknown number is named")
	check(t, suite.expect.Locator(rowOf(1)).ToContainText("already archived"), "the archived contract is shown as such")

	check(t, page.GetByTestId("batch-start").Click(), "confirm")
	batchExpectStatus(t, page, "Finished with 5 failed")
	batchExpectCount(t, page, "batch-done", 45, "45 done (44 archived, 1 already)")
	batchExpectCount(t, page, "batch-failed", 5, "5 failed")
	batchExpectCount(t, page, "batch-left", 0, "nothing left")
	failedRows := page.Locator(`[data-testid="batch-row"]`).Filter(playwright.LocatorFilterOptions{HasText: "failed"})
	check(t, suite.expect.Locator(failedRows).ToHaveCount(5), "five failed lines are listed")
	check(t, suite.expect.Locator(failedRows.First().GetByTestId("batch-row-message")).ToContainText("503"), "with the v2 error")

	check(t, page.GetByTestId("batch-retry").Click(), "retry the failed")
	batchExpectStatus(t, page, "Finished")
	batchExpectCount(t, page, "batch-done", 50, "all 50 done")
	batchExpectCount(t, page, "batch-failed", 0, "none failed")

	rows := batchDownloadCSV(t, page)
	if len(rows) != 53 {
		t.Fatalf("CSV has %d lines, want 53", len(rows))
	}
	for i, c := range contracts {
		r := rows[i]
		want := "archived"
		if i == 0 {
			want = "already archived"
		}
		if r[0] != c.number || r[1] != want || r[2] == "" || r[3] != "" || r[6] == "" {
			t.Errorf("CSV line %d: %q, want %s %s with an archive id and its customer", i+1, r, c.number, want)
		}
	}
	if rows[1][8] != "Signed" || rows[2][8] != "Contract generated" {
		t.Errorf("CSV stages: %q, %q", rows[1], rows[2])
	}
	if rows[50][1] != "left out" || rows[50][3] != "duplicate of line 4" || rows[52][0] != unknown || !strings.Contains(rows[52][3], "unknown contract") {
		t.Errorf("CSV problem lines: %q", rows[50:])
	}
	if rows[51][0] != "bad/number" || rows[51][1] != "left out" {
		t.Errorf("CSV malformed line: %q", rows[51])
	}
	// The v2 API agrees: a contract of the batch is archived.
	_, err = page.Goto(contracts[10].path)
	check(t, err, "open a contract of the batch")
	check(t, suite.expect.Locator(page.GetByTestId("page-title")).ToHaveText("Contract "+contracts[10].number), "the contract page")
	check(t, suite.expect.Locator(page.Locator("main")).ToContainText("ARC-"), "it shows its archive id")
}

// TestBatchArchiveSurvivesReload: a batch uploaded as XLSX keeps running while the page is
// reloaded and while the user is elsewhere; coming back shows it finished.
func TestBatchArchiveSurvivesReload(t *testing.T) {
	page := newPage(t)
	login(t, page, backofficeUser, backofficePass)
	contracts := batchMakeContracts(t, page, 20)
	if suite.simURL != "" {
		simFault(t, "contracts.archive", map[string]any{"delay": "300ms"}) // slow enough to reload mid-job
	}
	book := excelize.NewFile()
	check(t, book.SetCellValue("Sheet1", "A1", "Customer"), "xlsx")
	check(t, book.SetCellValue("Sheet1", "B1", "Contract number"), "xlsx")
	for i, c := range contracts {
		check(t, book.SetCellValue("Sheet1", fmt.Sprintf("A%d", i+2), "someone"), "xlsx")
		check(t, book.SetCellValue("Sheet1", fmt.Sprintf("B%d", i+2), c.number), "xlsx")
	}
	var xlsx bytes.Buffer
	_, err := book.WriteTo(&xlsx)
	check(t, err, "write the xlsx")

	batchOpenForm(t, page)
	batchIncludeUnsent(t, page)
	check(t, page.GetByTestId("batch-file").SetInputFiles([]playwright.InputFile{{Name: "month-end.xlsx",
		MimeType: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", Buffer: xlsx.Bytes()}}), "choose the file")
	check(t, page.GetByTestId("batch-check").Click(), "check the file")
	check(t, suite.expect.Locator(page.GetByTestId("batch-preview-summary")).ToContainText("20 contracts will be archived"), "20 from the file")
	check(t, page.GetByTestId("batch-start").Click(), "confirm")
	// The confirm leads to the batch's own page; reloading before it is there reloads nothing.
	check(t, suite.expect.Page(page).ToHaveURL(regexp.MustCompile(`/contracts/batch-archive/[0-9a-f]+$`)), "the batch's page")
	check(t, suite.expect.Locator(page.GetByTestId("batch-progress")).ToBeVisible(), "its progress")
	batchURL := page.URL()
	if suite.simURL != "" {
		check(t, suite.expect.Locator(page.GetByTestId("batch-status")).ToHaveText("Archiving"), "the batch runs")
		check(t, suite.expect.Locator(page.GetByTestId("batch-current")).ToBeVisible(), "the current items are shown")
	}
	_, err = page.Reload()
	check(t, err, "reload mid-job")
	check(t, suite.expect.Locator(page.GetByTestId("batch-progress")).ToBeVisible(), "the progress is back after the reload")
	// Leave, then come back through the list of batches.
	_, err = page.Goto("/customers")
	check(t, err, "go elsewhere")
	batchOpenForm(t, page)
	check(t, page.Locator(`[data-testid="batch-list-item"] a`).First().Click(), "open the batch from the list")
	check(t, suite.expect.Page(page).ToHaveURL(exactURL(strings.TrimPrefix(batchURL, suite.portalURL))), "the same batch")
	batchExpectStatus(t, page, "Finished")
	batchExpectCount(t, page, "batch-done", 20, "all 20 done")
	rows := batchDownloadCSV(t, page)
	if len(rows) != 20 || rows[0][0] != contracts[0].number || rows[0][4] != "2" || rows[19][1] != "archived" {
		t.Fatalf("CSV: %q", rows)
	}
}

// TestBatchArchiveCancel: cancelling stops after the contracts in flight; the rest are reported
// as not archived and are indeed not archived.
func TestBatchArchiveCancel(t *testing.T) {
	page := newPage(t)
	login(t, page, backofficeUser, backofficePass)
	contracts := batchMakeContracts(t, page, 30)
	simFault(t, "contracts.archive", map[string]any{"delay": "1s"}) // long enough that a busy machine cancels before the end
	lines := make([]string, len(contracts))
	for i, c := range contracts {
		lines[i] = c.number
	}
	batchOpenForm(t, page)
	batchIncludeUnsent(t, page)
	batchCheck(t, page, lines)
	check(t, page.GetByTestId("batch-start").Click(), "confirm")
	check(t, suite.expect.Locator(page.GetByTestId("batch-status")).ToHaveText("Archiving"), "the batch runs")
	check(t, page.GetByTestId("batch-cancel").Click(), "cancel")
	batchExpectStatus(t, page, "Cancelled")
	left, err := page.GetByTestId("batch-left").TextContent()
	check(t, err, "read what is left")
	done, err := page.GetByTestId("batch-done").TextContent()
	check(t, err, "read what is done")
	nLeft, _ := strconv.Atoi(left)
	nDone, _ := strconv.Atoi(done)
	if nLeft == 0 || nDone+nLeft != 30 {
		t.Fatalf("after cancel: %d done, %d left; want some left and 30 in all", nDone, nLeft)
	}
	rows := batchDownloadCSV(t, page)
	notArchived := 0
	var skipped string
	for _, r := range rows {
		switch r[1] {
		case "not archived (cancelled)":
			notArchived++
			skipped = r[0]
		case "archived":
		default:
			t.Errorf("CSV line %q", r)
		}
	}
	if notArchived != nLeft {
		t.Fatalf("CSV: %d not archived, page says %d left", notArchived, nLeft)
	}
	// A contract the batch did not reach is not archived on the v2 API.
	for _, c := range contracts {
		if c.number == skipped {
			_, err := page.Goto(c.path)
			check(t, err, "open a contract the batch did not reach")
			check(t, suite.expect.Locator(page.GetByTestId("page-title")).ToHaveText("Contract "+c.number), "its page")
			check(t, suite.expect.Locator(page.Locator("main")).Not().ToContainText("ARC-"), "it has no archive id")
		}
	}
}
