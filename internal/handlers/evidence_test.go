package handlers

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/cpqportal/portal/internal/apiclient"
)

func hexSHA(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// readDownload reads a PDF straight from the simulator.
func readDownload(t *testing.T, d *apiclient.Download, err error) []byte {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	b, err := io.ReadAll(d.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEvidencePageAndZip(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	ref, contract := e.newContract(t)
	if _, err := e.api.Signatures.Create(e.ctx(), apiclient.SignatureInput{ContractID: contract.ContractID, Email: "ann@example.com", SignerName: "Ann"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.api.Contracts.Archive(e.ctx(), contract.ContractNumber); err != nil {
		t.Fatal(err)
	}
	// What the service holds, read independently of the portal.
	ctx := e.ctx()
	contractDoc, err := e.api.Contracts.Get(ctx, contract.ContractID)
	if err != nil {
		t.Fatal(err)
	}
	audit, err := e.api.Contracts.ValidationAudit(ctx, ref.QuoteID)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := e.api.Contracts.DigitalArchivePayload(ctx, contract.ContractNumber)
	if err != nil {
		t.Fatal(err)
	}
	pdfDownload, err := e.api.Contracts.DownloadPDF(ctx, contract.ContractID)
	contractPDF := readDownload(t, pdfDownload, err)
	auditDownload, err := e.api.Contracts.ValidationAuditPDF(ctx, ref.QuoteID)
	auditPDF := readDownload(t, auditDownload, err)
	n := contract.ContractNumber
	want := map[string]string{
		"contract-" + n + ".pdf":                                           hexSHA(contractPDF),
		"contract-" + n + ".json":                                          hexSHA(contractDoc.Raw),
		"archive-payload-" + n + ".json":                                   hexSHA(payload.Raw),
		"validation-audit-" + strconv.FormatInt(ref.QuoteID, 10) + ".json": hexSHA(audit.Raw),
		"validation-audit-" + strconv.FormatInt(ref.QuoteID, 10) + ".pdf":  hexSHA(auditPDF),
	}
	if hexSHA(contractPDF) != contract.PDF.SHA256 {
		t.Fatalf("the simulator's PDF hash differs from its document: test setup broken")
	}

	page := e.p.get(t, e.user, contractPath(contract.ContractID)+"/evidence", nil)
	if page.StatusCode != http.StatusOK {
		t.Fatalf("evidence page: %d %s", page.StatusCode, page.body)
	}
	doc := parseHTML(t, page.body)
	catalogues, err := e.api.CPQ.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var catalogue string
	for _, cfg := range catalogues {
		if cfg.ID == contract.CPQID {
			catalogue = cfg.Name
		}
	}
	var shownCatalogue string
	doc.Find(`dl.kv dt`).Each(func(_ int, dt *goquery.Selection) {
		if strings.TrimSpace(dt.Text()) == "Product catalogue" {
			shownCatalogue = strings.TrimSpace(dt.Next().Text())
		}
	})
	if catalogue == "" || shownCatalogue != catalogue {
		t.Errorf("the evidence names the product catalogue %q, want its name %q", shownCatalogue, catalogue)
	}
	shown := map[string]string{}
	doc.Find(`[data-testid="artifacts"] tr[data-artifact]`).Each(func(_ int, row *goquery.Selection) {
		shown[row.AttrOr("data-file-name", "")] = strings.TrimSpace(row.Find(`[data-testid="artifact-sha256"]`).Text())
	})
	if !equalMaps(shown, want) {
		t.Errorf("page hashes\n got %v\nwant %v", shown, want)
	}
	if check := doc.Find(`[data-testid="artifact-contract-pdf"] [data-testid="artifact-check"]`).Text(); !strings.Contains(check, "Matches") {
		t.Errorf("the PDF's published hash check says %q", check)
	}
	for _, sel := range []string{`iframe[data-testid="contract-preview"]`, `[data-testid="signature-request"]`, `[data-testid="archive-id"]`,
		`[data-testid="audit-timeline"]`, `#archive-payload-tree [data-testid="json-tree"]`} {
		if doc.Find(sel).Length() == 0 {
			t.Errorf("the evidence page lacks %s", sel)
		}
	}

	// Each artifact's own download serves the bytes that were hashed.
	doc.Find(`[data-testid="artifacts"] tr[data-artifact]`).Each(func(_ int, row *goquery.Selection) {
		href := row.Find(`[data-testid="artifact-download"]`).AttrOr("href", "")
		resp := e.p.get(t, e.user, href, nil)
		if resp.StatusCode != http.StatusOK || hexSHA([]byte(resp.body)) != want[row.AttrOr("data-file-name", "")] {
			t.Errorf("%s: %d, hash differs", href, resp.StatusCode)
		}
	})

	zipResp := e.p.get(t, e.user, doc.Find(`[data-testid="evidence-zip"]`).AttrOr("href", ""), nil)
	if zipResp.StatusCode != http.StatusOK || zipResp.Header.Get("Content-Type") != "application/zip" {
		t.Fatalf("ZIP: %d %q", zipResp.StatusCode, zipResp.Header.Get("Content-Type"))
	}
	if cd := zipResp.Header.Get("Content-Disposition"); cd != "attachment; filename=evidence-"+n+".zip" {
		t.Errorf("ZIP Content-Disposition %q", cd)
	}
	zr, err := zip.NewReader(bytes.NewReader([]byte(zipResp.body)), int64(len(zipResp.body)))
	if err != nil {
		t.Fatalf("not a ZIP: %v", err)
	}
	inZip := map[string]string{}
	manifest := ""
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		_ = rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if f.Name == "sha256sums.txt" {
			manifest = string(data)
			continue
		}
		inZip[f.Name] = hexSHA(data)
	}
	if !equalMaps(inZip, want) {
		t.Errorf("ZIP contents\n got %v\nwant %v", inZip, want)
	}
	var lines []string
	for name, sum := range want {
		lines = append(lines, sum+"  "+name)
	}
	sort.Strings(lines)
	got := strings.Split(strings.TrimSpace(manifest), "\n")
	sort.Strings(got)
	if strings.Join(got, "\n") != strings.Join(lines, "\n") {
		t.Errorf("sha256sums.txt:\n%s\nwant:\n%s", manifest, strings.Join(lines, "\n"))
	}

	if r := e.p.get(t, e.user, contractPath(contract.ContractID)+"/evidence/nonsense", nil); r.StatusCode != http.StatusBadRequest {
		t.Errorf("unknown artifact: %d", r.StatusCode)
	}
}

func TestEvidenceBeforeArchiving(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	_, contract := e.newContract(t)
	doc := parseHTML(t, e.p.get(t, e.user, contractPath(contract.ContractID)+"/evidence", nil).body)
	if doc.Find(`[data-testid="evidence-not-archived"]`).Length() != 1 || doc.Find(`[data-testid="artifact-archive-payload"]`).Length() != 0 {
		t.Error("an unarchived contract's evidence must say there is no payload yet")
	}
	if n := doc.Find(`[data-testid="artifacts"] tr[data-artifact]`).Length(); n != 4 {
		t.Errorf("%d artifacts, want 4", n)
	}
	resp := e.p.get(t, e.user, contractPath(contract.ContractID)+"/evidence/archive-payload", nil)
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("payload artifact before archiving: %d", resp.StatusCode)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
