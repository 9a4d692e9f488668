package handlers

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/cpqportal/portal/internal/apiclient"
)

// sendForSignature sends the contract out for signature through its page, as a person does.
func (e *docsEnv) sendForSignature(t *testing.T, contract *apiclient.Contract) {
	t.Helper()
	r := e.htmxDo(t, http.MethodPost, contractPath(contract.ContractID)+"/signature", url.Values{"email": {"signer@example.com"}, "signerName": {"Signer"}})
	if r.StatusCode != http.StatusOK {
		t.Fatalf("send %s for signature: %d", contract.ContractNumber, r.StatusCode)
	}
}

// sign sends the contract for signature through its page, and its signer signs it (the
// simulator's signer, docs/v2-assumptions.md A7).
func (e *docsEnv) sign(t *testing.T, contract *apiclient.Contract) {
	t.Helper()
	e.sendForSignature(t, contract)
	if err := e.sim.AnswerSignature(contract.ContractNumber, "SIGNED", ""); err != nil {
		t.Fatalf("sign %s: %v", contract.ContractNumber, err)
	}
}

// runBatch starts the draft at batchPath and waits until it finished.
func (e *docsEnv) runBatch(t *testing.T, batchPath string) {
	t.Helper()
	if started := postForm(t, e.p, e.user, batchPath+"/start", url.Values{}); started.StatusCode != http.StatusSeeOther {
		t.Fatalf("start: %d", started.StatusCode)
	}
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		progress := e.p.get(t, e.user, batchPath+"/progress", map[string]string{"HX-Request": "true"})
		if parseHTML(t, progress.body).Find(`[data-testid="batch-progress"]`).AttrOr("data-status", "") == "Finished" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the batch did not finish")
		}
	}
}

// archivedNumbers are the contract numbers the v2 API received an archive call for.
func (e *docsEnv) archivedNumbers(t *testing.T, contracts ...*apiclient.Contract) []string {
	t.Helper()
	var out []string
	for _, c := range contracts {
		got, err := e.api.Contracts.Get(e.ctx(), c.ContractID)
		if err != nil {
			t.Fatalf("read %s: %v", c.ContractNumber, err)
		}
		if isArchived(got) {
			out = append(out, c.ContractNumber)
		}
	}
	return out
}

func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestBatchArchiveLeavesOutNeverSentByDefault: a list typed on the batch page with a contract never
// sent for signature and one signed: by default the preview leaves out the first, with the reason
// and its stage (read from the contract document at the check), and only the signed one is
// archived; the result CSV says why. Included explicitly (the form's box, or the preview's
// "Include them"), both are archived.
func TestBatchArchiveLeavesOutNeverSentByDefault(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{login: "backoffice"})
	_, unsent := e.newContract(t)
	_, sent := e.newContract(t)
	e.sign(t, sent)

	typed := url.Values{"numbers": {unsent.ContractNumber + "\n" + sent.ContractNumber}}
	posted := postForm(t, e.p, e.user, "/contracts/batch-archive", typed)
	if posted.StatusCode != http.StatusSeeOther {
		t.Fatalf("check: %d %.300s", posted.StatusCode, posted.body)
	}
	batchPath := posted.Header.Get("Location")
	doc := parseHTML(t, e.p.get(t, e.user, batchPath, nil).body)
	if got := squash(doc.Find(`[data-testid="batch-preview-summary"]`).Text()); !strings.HasPrefix(got, "1 contract will be archived; 0 are already archived (counted as done); 1 line has a problem") {
		t.Errorf("preview: %q", got)
	}
	row := func(doc *goquery.Document, number string) string {
		return squash(doc.Find(`[data-testid="batch-row"][data-number="` + number + `"]`).Text())
	}
	if got := row(doc, unsent.ContractNumber); !strings.Contains(got, "left out") || !strings.Contains(got, "Contract generated") ||
		!strings.Contains(got, "never sent for signature, or its request was removed") {
		t.Errorf("the never-sent line reads %q, want left out with its stage and the reason", got)
	}
	if got := row(doc, sent.ContractNumber); !strings.Contains(got, "will be archived") || !strings.Contains(got, "Signed") {
		t.Errorf("the signed line reads %q", got)
	}
	if got := doc.Find(`[data-testid="batch-start"]`).Text(); strings.TrimSpace(got) != "Archive 1 contract" {
		t.Errorf("start button %q", got)
	}

	// "Include them" on the preview checks the same list again with them included.
	include := doc.Find(`[data-testid="batch-include-unsent"]`)
	values := url.Values{}
	include.Find("input").Each(func(_ int, s *goquery.Selection) { values.Add(s.AttrOr("name", ""), s.AttrOr("value", "")) })
	if got := values["numbers"]; len(got) != 2 || got[0] != unsent.ContractNumber || got[1] != sent.ContractNumber || values.Get("include_unsent") != "1" {
		t.Fatalf("Include them sends %v", values)
	}
	again := postForm(t, e.p, e.user, "/contracts/batch-archive", values)
	if got := squash(parseHTML(t, e.p.get(t, e.user, again.Header.Get("Location"), nil).body).Find(`[data-testid="batch-preview-summary"]`).Text()); !strings.HasPrefix(got, "2 contracts will be archived") {
		t.Errorf("after Include them: %q", got)
	}

	// The default draft archives only the signed contract.
	e.runBatch(t, batchPath)
	if got := e.archivedNumbers(t, unsent, sent); len(got) != 1 || got[0] != sent.ContractNumber {
		t.Fatalf("archived %v, want only %s", got, sent.ContractNumber)
	}
	rows := parseExportCSV(t, e.p.get(t, e.user, batchPath+"/result.csv", nil).body, ',')
	if len(rows) != 3 || rows[0][8] != "stage when checked" {
		t.Fatalf("CSV %q", rows)
	}
	if r := rows[1]; r[0] != unsent.ContractNumber || r[1] != "left out" || !strings.Contains(r[3], "never sent for signature") || r[8] != "Contract generated" {
		t.Errorf("CSV never-sent line %q", r)
	}
	if r := rows[2]; r[0] != sent.ContractNumber || r[1] != "archived" || r[8] != "Signed" {
		t.Errorf("CSV sent line %q", r)
	}

	// Included explicitly with the form's box: both are archived (the v2 API says so).
	_, unsent2 := e.newContract(t)
	_, sent2 := e.newContract(t)
	e.sign(t, sent2)
	form := e.p.get(t, e.user, "/contracts/batch-archive", nil)
	if box := parseHTML(t, form.body).Find(`[data-testid="batch-include-unsent-box"]`); box.Length() != 1 || box.Is("[checked]") {
		t.Fatal("the form has no include box, or it is ticked by default")
	}
	included := postForm(t, e.p, e.user, "/contracts/batch-archive", url.Values{"numbers": {unsent2.ContractNumber + "\n" + sent2.ContractNumber}, "include_unsent": {"1"}})
	if included.StatusCode != http.StatusSeeOther {
		t.Fatalf("check with the box ticked: %d", included.StatusCode)
	}
	if got := squash(parseHTML(t, e.p.get(t, e.user, included.Header.Get("Location"), nil).body).Find(`[data-testid="batch-preview-summary"]`).Text()); !strings.HasPrefix(got, "2 contracts will be archived") {
		t.Errorf("with the box ticked: %q", got)
	}
	e.runBatch(t, included.Header.Get("Location"))
	if got := e.archivedNumbers(t, unsent2, sent2); len(got) != 2 {
		t.Errorf("archived %v, want both", got)
	}
}

// TestBatchArchiveOnlyNeverSentSaysHowToInclude: a list whose only contract was never sent for
// signature stores no draft; the form says why and how to include it, and keeps the list (an
// uploaded file's numbers too), so ticking the box and checking again is enough.
func TestBatchArchiveOnlyNeverSentSaysHowToInclude(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{login: "backoffice"})
	_, unsent := e.newContract(t)
	r := postForm(t, e.p, e.user, "/contracts/batch-archive", url.Values{"numbers": {unsent.ContractNumber}})
	doc := parseHTML(t, r.body)
	if msg := squash(doc.Find(`main`).Text()); r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(msg, "line 1: Left out: never sent for signature") ||
		!strings.Contains(msg, "tick “Include contracts that are not signed”") {
		t.Fatalf("only never-sent: %d %q", r.StatusCode, msg)
	}
	if got := doc.Find(`#batch-numbers`).Text(); strings.TrimSpace(got) != unsent.ContractNumber {
		t.Errorf("the list is not kept: %q", got)
	}
	again := postForm(t, e.p, e.user, "/contracts/batch-archive", url.Values{"numbers": {unsent.ContractNumber}, "include_unsent": {"1"}})
	if again.StatusCode != http.StatusSeeOther {
		t.Fatalf("with the box ticked: %d", again.StatusCode)
	}

	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, _ := mw.CreateFormFile("file", "month-end.csv")
	_, _ = part.Write([]byte("Contract number\n" + unsent.ContractNumber + "\n"))
	_ = mw.Close()
	uploaded := e.p.do(t, e.user, http.MethodPost, "/contracts/batch-archive", &body, map[string]string{"Content-Type": mw.FormDataContentType()})
	if uploaded.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("uploaded list of one never-sent contract: %d", uploaded.StatusCode)
	}
	if got := parseHTML(t, uploaded.body).Find(`#batch-numbers`).Text(); strings.TrimSpace(got) != unsent.ContractNumber {
		t.Errorf("the uploaded file's numbers are not put in the box: %q", got)
	}
}

// TestBatchArchiveLeavesOutWhatIsNotSigned: out for signature, declined and expired contracts are
// left out like one never sent, each line saying why; a signed one is archived. Included, the v2
// API archives them all: the portal asks, it never refuses what the v2 accepts.
func TestBatchArchiveLeavesOutWhatIsNotSigned(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{login: "backoffice"})
	_, out := e.newContract(t)
	e.sendForSignature(t, out)
	_, declined := e.newContract(t)
	e.sendForSignature(t, declined)
	if err := e.sim.AnswerSignature(declined.ContractNumber, "DECLINED", "Price too high"); err != nil {
		t.Fatal(err)
	}
	_, expired := e.newContract(t)
	e.sendForSignature(t, expired)
	if err := e.sim.AnswerSignature(expired.ContractNumber, "EXPIRED", ""); err != nil {
		t.Fatal(err)
	}
	_, signed := e.newContract(t)
	e.sign(t, signed)

	list := strings.Join([]string{out.ContractNumber, declined.ContractNumber, expired.ContractNumber, signed.ContractNumber}, "\n")
	posted := postForm(t, e.p, e.user, "/contracts/batch-archive", url.Values{"numbers": {list}})
	if posted.StatusCode != http.StatusSeeOther {
		t.Fatalf("check: %d %.300s", posted.StatusCode, posted.body)
	}
	batchPath := posted.Header.Get("Location")
	doc := parseHTML(t, e.p.get(t, e.user, batchPath, nil).body)
	for _, want := range []struct {
		number, stage, reason string
	}{
		{out.ContractNumber, "Out for signature", "Left out: out for signature, not signed yet."},
		{declined.ContractNumber, "Declined", "Left out: the signer declined."},
		{expired.ContractNumber, "Expired", "Left out: the signature request expired unanswered."},
		{signed.ContractNumber, "Signed", "will be archived"},
	} {
		got := squash(doc.Find(`[data-testid="batch-row"][data-number="` + want.number + `"]`).Text())
		if !strings.Contains(got, want.stage) || !strings.Contains(got, want.reason) {
			t.Errorf("line %s reads %q, want %q and %q", want.number, got, want.stage, want.reason)
		}
	}
	if got := squash(doc.Find(`[data-testid="batch-include-unsent"]`).Text()); !strings.Contains(got, "3 contracts were left out because they are not signed") {
		t.Errorf("the preview offers %q", got)
	}
	e.runBatch(t, batchPath)
	if got := e.archivedNumbers(t, out, declined, expired, signed); len(got) != 1 || got[0] != signed.ContractNumber {
		t.Fatalf("archived %v, want only the signed %s", got, signed.ContractNumber)
	}

	// Included: the v2 API accepts them all, and the portal archives them.
	_, out2 := e.newContract(t)
	e.sendForSignature(t, out2)
	included := postForm(t, e.p, e.user, "/contracts/batch-archive", url.Values{"numbers": {out2.ContractNumber}, "include_unsent": {"1"}})
	if included.StatusCode != http.StatusSeeOther {
		t.Fatalf("included: %d", included.StatusCode)
	}
	e.runBatch(t, included.Header.Get("Location"))
	if got := e.archivedNumbers(t, out2); len(got) != 1 {
		t.Errorf("the included contract out for signature was not archived")
	}
}
