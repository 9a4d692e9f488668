package handlers

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/v2sim"
	"github.com/cpqportal/portal/web/templates/contracts"
)

func TestGenerateContract(t *testing.T) {
	t.Parallel()
	for _, pdfAnswer := range []bool{false, true} {
		t.Run("service answers PDF="+strconv.FormatBool(pdfAnswer), func(t *testing.T) {
			t.Parallel()
			e := newDocsEnv(t, docsOptions{sim: v2sim.Options{GeneratePDF: pdfAnswer}})
			ref := e.newQuote(t)

			resp := e.htmxDo(t, http.MethodPost, ref.URL()+"/contract", e.generateForm(t, ref))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("generate: %d %s", resp.StatusCode, resp.body)
			}
			quote := e.quote(t, ref)
			if quote.Contract == nil {
				t.Fatal("the simulator made no contract")
			}
			doc := parseHTML(t, resp.body)
			result := doc.Find(`[data-testid="generate-result"]`)
			if !strings.Contains(result.Text(), quote.Contract.ContractNumber) || !strings.Contains(result.Text(), "was generated") {
				t.Errorf("result %q does not name %s", result.Text(), quote.Contract.ContractNumber)
			}
			if pdfAnswer != strings.Contains(result.Text(), "answered with the PDF") {
				t.Errorf("result %q: PDF answer noted = %v, want %v", result.Text(), !pdfAnswer, pdfAnswer)
			}
			link := doc.Find(`[data-testid="contract-link"]`).AttrOr("href", "")
			if link != contractPath(quote.Contract.ContractID) {
				t.Errorf("contract link %q", link)
			}
			preview := doc.Find(`iframe[data-testid="contract-preview"]`).AttrOr("src", "")
			if preview != link+"/pdf?inline=1" {
				t.Errorf("preview src %q", preview)
			}
			gens := e.requestsTo("contracts.generate")
			if len(gens) != 1 || !strings.Contains(gens[0].Header.Get("Accept"), "application/pdf") {
				t.Errorf("generate requests: %+v", gens)
			}

			pdf := e.p.get(t, e.user, link+"/pdf", nil)
			if pdf.StatusCode != http.StatusOK || !strings.HasPrefix(pdf.body, "%PDF-") {
				t.Fatalf("PDF: %d %.40q", pdf.StatusCode, pdf.body)
			}
			wantName := "contract-" + quote.Contract.ContractNumber + ".pdf"
			if cd := pdf.Header.Get("Content-Disposition"); cd != "attachment; filename="+wantName {
				t.Errorf("Content-Disposition %q", cd)
			}

			again := e.htmxDo(t, http.MethodPost, ref.URL()+"/contract", e.generateForm(t, ref))
			if !strings.Contains(parseHTML(t, again.body).Find(`[data-testid="generate-result"]`).Text(), "already has contract") {
				t.Errorf("second generate: %s", again.body)
			}
		})
	}
}

// brokenGeneratePDF answers the contract generation with the simulator's headers (application/pdf,
// X-Contract-Id, X-Contract-Number) and a body that is not a PDF.
func brokenGeneratePDF(sim http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/generate") {
			sim.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		sim.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			if k != "Content-Length" {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write([]byte(`{"message": "not a PDF at all"}`))
	})
}

func TestGenerateContractAnsweredWithABrokenPDF(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{sim: v2sim.Options{GeneratePDF: true}, wrap: brokenGeneratePDF})
	ref := e.newQuote(t)
	resp := e.htmxDo(t, http.MethodPost, ref.URL()+"/contract", e.generateForm(t, ref))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("generate: %d %s", resp.StatusCode, resp.body)
	}
	doc := parseHTML(t, resp.body)
	if !strings.Contains(doc.Find(`[data-testid="generate-warning"]`).Text(), "not a PDF") {
		t.Errorf("no warning about the broken PDF: %s", resp.body)
	}
	quote := e.quote(t, ref)
	if quote.Contract == nil || doc.Find(`[data-testid="contract-link"]`).AttrOr("href", "") != contractPath(quote.Contract.ContractID) {
		t.Error("the generated contract is not linked")
	}
	if strings.Contains(resp.body, "not a PDF at all") {
		t.Error("the upstream body leaked into the page")
	}
}

func TestGenerateContractWithoutCartsIsRefused(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	ref := e.newQuote(t)
	quote := e.quote(t, ref)
	init, err := e.api.CPQ.Init(e.ctx(), ref.CPQID, ref.CustomerID)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.api.CPQ.RemoveCart(e.ctx(), init.SessionID, ref.CPQID, ref.QuoteID, quote.Carts[0].BasketID); err != nil {
		t.Fatal(err)
	}
	region := parseHTML(t, e.p.get(t, e.user, ref.URL()+"/documents", htmx).body)
	if region.Find(`[data-testid="generate-contract"][disabled]`).Length() != 1 || region.Find(`[data-testid="generate-hint"]`).Length() != 1 {
		t.Error("a quote without carts does not explain why it cannot be generated")
	}
	resp := e.htmxDo(t, http.MethodPost, ref.URL()+"/contract", e.generateForm(t, ref))
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(resp.body, "has no carts") {
		t.Errorf("generate without carts: %d %s", resp.StatusCode, resp.body)
	}
}

func TestContractPDFPreviewIsFramableBySelfOnly(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	_, contract := e.newContract(t)
	base := contractPath(contract.ContractID)

	inline := e.p.get(t, e.user, base+"/pdf?inline=1", nil)
	if inline.StatusCode != http.StatusOK || !strings.HasPrefix(inline.body, "%PDF-") {
		t.Fatalf("inline: %d", inline.StatusCode)
	}
	if cd := inline.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "inline; filename=") {
		t.Errorf("inline Content-Disposition %q", cd)
	}
	if csp := inline.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'self'") {
		t.Errorf("inline CSP %q", csp)
	}
	if xfo := inline.Header.Get("X-Frame-Options"); xfo != "SAMEORIGIN" {
		t.Errorf("inline X-Frame-Options %q", xfo)
	}
	download := e.p.get(t, e.user, base+"/pdf", nil)
	if csp := download.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("a download may be framed: %q", csp)
	}
	if download.Header.Get("Content-Length") != strconv.FormatInt(contract.PDF.Size, 10) {
		t.Errorf("Content-Length %q, want %d", download.Header.Get("Content-Length"), contract.PDF.Size)
	}
	page := parseHTML(t, e.p.get(t, e.user, base, nil).body)
	if page.Find(`iframe[data-testid="contract-preview"]`).AttrOr("src", "") != base+"/pdf?inline=1" {
		t.Error("the contract page has no inline preview")
	}
}

// brokenPDFs answers the PDF calls with something that is not a PDF: a body that says PDF but
// is JSON, or a JSON answer where a PDF was asked for.
func brokenPDFs(mode string) func(http.Handler) http.Handler {
	return func(sim http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			wantsPDF := strings.Contains(r.Header.Get("Accept"), "application/pdf") && r.Method == http.MethodGet
			if !wantsPDF {
				sim.ServeHTTP(w, r)
				return
			}
			switch mode {
			case "says-pdf":
				w.Header().Set("Content-Type", "application/pdf")
				w.Header().Set("Content-Disposition", `attachment; filename="contract.pdf"`)
				_, _ = w.Write([]byte(`{"error": "this is not a PDF"}`))
			case "json":
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"contractId": 1}`))
			}
		})
	}
}

func TestPDFThatIsNotAPDF(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"says-pdf", "json"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			e := newDocsEnv(t, docsOptions{wrap: brokenPDFs(mode)})
			ref, contract := e.newContract(t)
			for _, path := range []string{contractPath(contract.ContractID) + "/pdf", contractPath(contract.ContractID) + "/pdf?inline=1", auditURL(ref.QuoteID) + "/pdf"} {
				resp := e.p.get(t, e.user, path, nil)
				if resp.StatusCode != http.StatusBadGateway {
					t.Errorf("%s: %d, want 502", path, resp.StatusCode)
				}
				if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
					t.Errorf("%s: Content-Type %q: the broken answer was passed on", path, ct)
				}
				msg := parseHTML(t, resp.body).Find(`[data-testid="error-message"]`).Text()
				if !strings.Contains(msg, "that is not a PDF") {
					t.Errorf("%s: message %q", path, msg)
				}
				if strings.Contains(resp.body, "this is not a PDF") {
					t.Errorf("%s: the upstream body leaked into the page", path)
				}
			}
			// The preview's error page is shown inside the frame.
			if csp := e.p.get(t, e.user, contractPath(contract.ContractID)+"/pdf?inline=1", nil).Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'self'") {
				t.Errorf("the preview's error page cannot be framed: %q", csp)
			}
			evidence := e.p.get(t, e.user, contractPath(contract.ContractID)+"/evidence", nil)
			if evidence.StatusCode != http.StatusBadGateway || !strings.Contains(evidence.body, "that is not a PDF") {
				t.Errorf("evidence page: %d", evidence.StatusCode)
			}
			zipResp := e.p.get(t, e.user, contractPath(contract.ContractID)+"/evidence.zip", nil)
			if zipResp.StatusCode != http.StatusBadGateway || zipResp.Header.Get("Content-Type") == "application/zip" {
				t.Errorf("evidence ZIP: %d %q, want 502 before any ZIP byte", zipResp.StatusCode, zipResp.Header.Get("Content-Type"))
			}
		})
	}
}

// lookupMap answers the by-number lookup of "3" with contract 2, so that "3" is the id of one
// contract and the number of another (the simulator seeds contract 1).
func lookupMap(sim http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v2/contract/bycontractnumber/3" {
			r2 := r.Clone(r.Context())
			r2.URL.Path, r2.URL.RawPath, r2.RequestURI = "/v2/contract/2", "", "/v2/contract/2"
			sim.ServeHTTP(w, r2)
			return
		}
		sim.ServeHTTP(w, r)
	})
}

func TestContractLookup(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{wrap: lookupMap})
	_, first := e.newContract(t)
	_, second := e.newContract(t)
	if first.ContractID != 2 || second.ContractID != 3 {
		t.Fatalf("contract ids %d and %d, want 2 and 3", first.ContractID, second.ContractID)
	}

	byID := e.p.get(t, e.user, "/contracts/lookup?q=3", nil)
	doc := parseHTML(t, byID.body)
	cands := doc.Find(`[data-testid="contract-candidate"]`)
	if byID.StatusCode != http.StatusOK || cands.Length() != 2 {
		t.Fatalf("q=3 (id of one, number of the other): %d with %d candidates", byID.StatusCode, cands.Length())
	}
	if cands.Eq(0).AttrOr("data-matched-by", "") != "id" || cands.Eq(0).Find("a").AttrOr("href", "") != "/contracts/3" ||
		cands.Eq(1).AttrOr("data-matched-by", "") != "contract number" || cands.Eq(1).Find("a").AttrOr("href", "") != "/contracts/2" {
		t.Errorf("candidates: %s", cands.Text())
	}

	byNumber := e.p.get(t, e.user, "/contracts/lookup?q="+url.QueryEscape(" "+second.ContractNumber+" "), nil)
	if byNumber.StatusCode != http.StatusSeeOther || byNumber.Header.Get("Location") != "/contracts/3" {
		t.Errorf("by number: %d to %q", byNumber.StatusCode, byNumber.Header.Get("Location"))
	}
	onlyID := e.p.get(t, e.user, "/contracts/lookup?q=2", nil)
	if onlyID.StatusCode != http.StatusSeeOther || onlyID.Header.Get("Location") != "/contracts/2" {
		t.Errorf("by id: %d to %q", onlyID.StatusCode, onlyID.Header.Get("Location"))
	}
	none := e.p.get(t, e.user, "/contracts/lookup?q=C-1999-000009", nil)
	if none.StatusCode != http.StatusNotFound || parseHTML(t, none.body).Find(`[data-testid="contract-not-found"]`).Length() != 1 {
		t.Errorf("unknown: %d", none.StatusCode)
	}
	// Bigger than int32: only the number lookup is made.
	e.sim.ResetRequests()
	e.p.get(t, e.user, "/contracts/lookup?q=99999999999", nil)
	if n := len(e.requestsTo("contracts.get")); n != 0 {
		t.Errorf("an id over int32 was looked up by id (%d calls)", n)
	}
}

// Contract numbers with characters that mean something in a path travel as exactly one escaped
// segment, or are refused before anything is sent.
func TestContractLookupEscapesTheNumber(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	for _, q := range []string{"C/2026/1", "../../customer/1", "C.2026.1", "100%25", "100%", "C 2026 1", "Vertrag-Ü-ß-契約", "a?b=c", "a#b", "a;b", "%2e%2e", "a\\b"} {
		e.sim.ResetRequests()
		resp := e.p.get(t, e.user, "/contracts/lookup?q="+url.QueryEscape(q), nil)
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%q: status %d, want 404 (no such contract)", q, resp.StatusCode)
		}
		reqs := e.sim.Requests()
		if len(reqs) != 1 {
			t.Errorf("%q: the simulator received %d requests: %+v", q, len(reqs), reqs)
			continue
		}
		want := "/v2/contract/bycontractnumber/" + url.PathEscape(q)
		if reqs[0].Endpoint != "contracts.bynumber" || reqs[0].EscapedPath != want || reqs[0].RequestURI != want {
			t.Errorf("%q: the simulator received %s %q (%s), want %q", q, reqs[0].Method, reqs[0].RequestURI, reqs[0].Endpoint, want)
		}
	}
	// Invalid UTF-8 never reaches the handler: the pages' shared guard answers 400 (utf8_test.go).
	e.sim.ResetRequests()
	if resp := e.p.get(t, e.user, "/contracts/lookup?q="+url.QueryEscape("bad\xffutf8"), nil); resp.StatusCode != http.StatusBadRequest ||
		!strings.Contains(resp.body, "not valid text (UTF-8)") || len(e.sim.Requests()) != 0 {
		t.Errorf("invalid UTF-8: status %d, %d upstream requests", resp.StatusCode, len(e.sim.Requests()))
	}
	// NUL, tab and bidirectional controls are refused by the pages' shared guard, naming the field.
	for _, q := range []string{"a\x00b", "tab\there", "C-2026-000001\u202e"} {
		e.sim.ResetRequests()
		resp := e.p.get(t, e.user, "/contracts/lookup?q="+url.QueryEscape(q), nil)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(resp.body, "Search") || len(e.sim.Requests()) != 0 {
			t.Errorf("%+q: status %d, %d upstream requests: %.300s", q, resp.StatusCode, len(e.sim.Requests()), resp.body)
		}
	}
	for _, q := range []string{".", "..", strings.Repeat("x", 10<<10), "", "   "} {
		e.sim.ResetRequests()
		resp := e.p.get(t, e.user, "/contracts/lookup?q="+url.QueryEscape(q), nil)
		doc := parseHTML(t, resp.body)
		if resp.StatusCode != http.StatusBadRequest || doc.Find(`[data-testid="error-summary"]`).Length() != 1 {
			t.Errorf("%.20q: status %d, want 400 with the form's error", q, resp.StatusCode)
		}
		if n := len(e.sim.Requests()); n != 0 {
			t.Errorf("%.20q: %d requests reached the simulator", q, n)
		}
	}
}

func TestContractPageShowsItsData(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	ref, contract := e.newContract(t)
	const xss = `<script>alert(1)</script>`
	if _, err := e.api.Signatures.Create(e.ctx(), apiclient.SignatureInput{ContractID: contract.ContractID, Email: "ann@example.com",
		SignerName: "Ann " + xss, Message: "Please sign " + xss}); err != nil {
		t.Fatal(err)
	}
	resp := e.p.get(t, e.user, contractPath(contract.ContractID), nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("page: %d", resp.StatusCode)
	}
	doc := parseHTML(t, resp.body)
	if doc.Find("main script").Length() != 0 || strings.Contains(resp.body, xss) {
		t.Error("the signer's data was not escaped")
	}
	if got := doc.Find("h1").Text(); got != "Contract "+contract.ContractNumber {
		t.Errorf("h1 %q", got)
	}
	details := doc.Find(`[data-testid="contract-details"]`).Text()
	for _, want := range []string{contract.ContractNumber, contract.Customer.Name, strconv.FormatInt(ref.QuoteID, 10), "€"} {
		if !strings.Contains(details, want) {
			t.Errorf("details lack %q: %s", want, details)
		}
	}
	if got := doc.Find(`[data-testid="contract-pdf-sha256"]`).Text(); got != contract.PDF.SHA256 {
		t.Errorf("PDF hash %q", got)
	}
	if got := doc.Find(`#contract-status`).Text(); !strings.Contains(got, "Signature requested") {
		t.Errorf("status %q", got)
	}
	row := doc.Find(`[data-testid="signature-request"]`)
	if row.Length() != 1 || row.AttrOr("data-status", "") != "SENT" || !strings.Contains(row.Text(), "Please sign") {
		t.Errorf("signature rows: %d %q", row.Length(), row.Text())
	}
	if doc.Find(`[data-testid="audit-link"]`).AttrOr("href", "") != auditURL(ref.QuoteID) ||
		doc.Find(`[data-testid="quote-link"]`).AttrOr("href", "") != ref.URL() {
		t.Error("links to the audit and the quote are wrong")
	}
	for _, bad := range []string{"/contracts/0", "/contracts/abc", "/contracts/2147483648"} {
		if r := e.p.get(t, e.user, bad, nil); r.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %d", bad, r.StatusCode)
		}
	}
	if r := e.p.get(t, e.user, "/contracts/4242", nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("unknown contract: %d", r.StatusCode)
	}
}

func TestSignatureRequestSendAndRemove(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	_, contract := e.newContract(t)
	sigURL := contractPath(contract.ContractID) + "/signature"

	e.sim.ResetRequests()
	bad := e.htmxDo(t, http.MethodPost, sigURL, url.Values{"email": {"Ann <ann@example.com>"}, "signerName": {""}, "message": {"hi"}})
	if bad.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("invalid form: %d", bad.StatusCode)
	}
	doc := parseHTML(t, bad.body)
	if doc.Find(`#signature-email[aria-invalid="true"]`).Length() != 1 || doc.Find(`#signature-signer[aria-invalid="true"]`).Length() != 1 {
		t.Errorf("field errors missing: %s", bad.body)
	}
	if doc.Find(`#signature-email`).AttrOr("value", "") != "Ann <ann@example.com>" {
		t.Error("the user's input was not kept")
	}
	// Control and bidirectional characters are refused before the handler by the pages' shared
	// guard (text_input.go), naming the field and the character.
	e.sim.ResetRequests()
	badBytes := e.htmxDo(t, http.MethodPost, sigURL, url.Values{"email": {"ann@example.com"}, "signerName": {"Ann \x01"}, "message": {"bell\a"}})
	if badBytes.StatusCode != http.StatusBadRequest || !strings.Contains(badBytes.body, "Message to the signer") || !strings.Contains(badBytes.body, "U+0007") {
		t.Errorf("control characters: %d %.300s", badBytes.StatusCode, badBytes.body)
	}
	if n := len(e.sim.Requests()); n != 0 {
		t.Errorf("a refused signature request sent %d requests", n)
	}
	// Invalid UTF-8 is refused before the handler by the pages' shared guard (utf8_test.go).
	if notText := e.htmxDo(t, http.MethodPost, sigURL, url.Values{"email": {"ann@example.com"}, "signerName": {"Ann \xff"}}); notText.StatusCode != http.StatusBadRequest {
		t.Errorf("invalid UTF-8: %d, want 400", notText.StatusCode)
	}
	if n := len(e.requestsTo("signature.request")); n != 0 {
		t.Errorf("an invalid form reached the simulator (%d)", n)
	}

	sent := e.htmxDo(t, http.MethodPost, sigURL, url.Values{"email": {" ann@example.com "}, "signerName": {"Ann Signer"}, "message": {"Please sign."}})
	if sent.StatusCode != http.StatusOK {
		t.Fatalf("send: %d %s", sent.StatusCode, sent.body)
	}
	doc = parseHTML(t, sent.body)
	if doc.Find(`#contract-signature [data-testid="signature-remove"]`).Length() != 1 || doc.Find(`[data-testid="signature-active"]`).Length() != 1 {
		t.Errorf("after sending, no remove button: %s", sent.body)
	}
	if status := doc.Find(`#contract-status[hx-swap-oob="true"]`); !strings.Contains(status.Text(), "Signature requested") {
		t.Errorf("no out-of-band status update: %q", status.Text())
	}
	reqs := e.requestsTo("signature.request")
	if len(reqs) != 1 || !strings.Contains(reqs[0].Body, `"email":"ann@example.com"`) || !strings.Contains(reqs[0].Body, `"contractId":`+strconv.Itoa(int(contract.ContractID))) {
		t.Errorf("signature requests: %+v", reqs)
	}
	if !strings.Contains(sent.Header.Get("HX-Trigger"), "ann@example.com") {
		t.Errorf("toast: %q", sent.Header.Get("HX-Trigger"))
	}

	twice := e.htmxDo(t, http.MethodPost, sigURL, url.Values{"email": {"bob@example.com"}, "signerName": {"Bob"}})
	if twice.StatusCode != http.StatusConflict || twice.Header.Get("HX-Retarget") != "#toasts" {
		t.Errorf("a second active request: %d %s", twice.StatusCode, twice.body)
	}

	removed := e.htmxDo(t, http.MethodDelete, sigURL, nil)
	if removed.StatusCode != http.StatusOK {
		t.Fatalf("remove: %d %s", removed.StatusCode, removed.body)
	}
	doc = parseHTML(t, removed.body)
	if doc.Find(`[data-testid="signature-form"]`).Length() != 1 {
		t.Error("after removing, the form is not offered again")
	}
	row := doc.Find(`[data-testid="signature-request"]`)
	if row.AttrOr("data-status", "") != "REMOVED" || strings.TrimSpace(row.Find(`td[data-label="Removed"]`).Text()) == "" {
		t.Errorf("the removed request does not show when: %q", row.Text())
	}
	dels := e.requestsTo("signature.remove")
	if len(dels) != 1 || dels[0].RequestURI != "/v2/signature?contractId="+strconv.Itoa(int(contract.ContractID)) {
		t.Errorf("remove requests: %+v", dels)
	}
	if again := e.htmxDo(t, http.MethodDelete, sigURL, nil); again.StatusCode != http.StatusNotFound {
		t.Errorf("removing with none active: %d", again.StatusCode)
	}
}

func TestEmailProblem(t *testing.T) {
	t.Parallel()
	good := []string{"ann@example.com", "a.b+tag@sub.example.co.uk", "x_y@example.io"}
	bad := []string{"", "ann", "ann@", "@example.com", "ann@example", "Ann <ann@example.com>", "ann@@example.com",
		"ann example@example.com", "ann@example..com", "ann@.example.com", "ann@example.com.", "ann@[127.0.0.1]",
		strings.Repeat("a", 65) + "@example.com", "a@" + strings.Repeat("b", 260) + ".com", "ann@exa mple.com", "(c)ann@example.com"}
	for _, e := range good {
		if p := emailProblem(e); !p.IsZero() {
			t.Errorf("%q refused: %v", e, p)
		}
	}
	for _, e := range bad {
		if emailProblem(e).IsZero() {
			t.Errorf("%q accepted", e)
		}
	}
}

func TestArchiveAndPayload(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	_, contract := e.newContract(t)
	base := contractPath(contract.ContractID)

	before := e.htmxDo(t, http.MethodGet, base+"/archive-payload", nil)
	if before.StatusCode != http.StatusConflict || parseHTML(t, before.body).Find(`[data-testid="payload-not-archived"]`).Length() != 1 {
		t.Errorf("payload before archiving: %d %s", before.StatusCode, before.body)
	}
	page := parseHTML(t, e.p.get(t, e.user, base, nil).body)
	button := page.Find(`[data-testid="archive-button"]`)
	if button.AttrOr("hx-post", "") != base+"/archive" || button.AttrOr("data-confirm-url", "") != base+"/archive/confirm" {
		t.Errorf("archive button: %v", button.Nodes)
	}
	if r := e.p.get(t, e.user, base+"/archive", nil); r.StatusCode != http.StatusNotFound {
		t.Errorf("GET on the portal's archive route: %d, want 404 (it is a POST)", r.StatusCode)
	}

	resp := e.htmxDo(t, http.MethodPost, base+"/archive", url.Values{})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("archive: %d %s", resp.StatusCode, resp.body)
	}
	archived, err := e.api.Contracts.Get(e.ctx(), contract.ContractID)
	if err != nil || !archived.Archive.Archived {
		t.Fatalf("the simulator did not archive: %+v %v", archived.Archive, err)
	}
	doc := parseHTML(t, resp.body)
	if doc.Find(`[data-testid="archive-result"]`).Length() != 1 || doc.Find(`[data-testid="archive-id"]`).Text() != string(archived.Archive.ArchiveID) {
		t.Errorf("archive result: %s", resp.body)
	}
	if doc.Find(`#contract-signature[hx-swap-oob="true"] [data-testid="signature-archived"]`).Length() != 1 {
		t.Error("the signature region is not updated out of band")
	}
	// The payload comes with the answer (read beside the contract's new state, issue 27).
	if doc.Find(`#archive-payload [data-testid="json-tree"]`).Length() == 0 || doc.Find(`#archive-payload[hx-get]`).Length() != 0 {
		t.Error("the payload is not shown with the answer to archiving")
	}
	archiveCalls := e.requestsTo("contracts.archive")
	if len(archiveCalls) != 1 || archiveCalls[0].Method != http.MethodGet ||
		archiveCalls[0].EscapedPath != "/v2/contract/contractNumber/"+url.PathEscape(contract.ContractNumber)+"/archive" {
		t.Errorf("archive calls: %+v", archiveCalls)
	}

	payload := e.htmxDo(t, http.MethodGet, base+"/archive-payload", nil)
	if payload.StatusCode != http.StatusOK {
		t.Fatalf("payload: %d", payload.StatusCode)
	}
	pdoc := parseHTML(t, payload.body)
	if pdoc.Find(`#archive-payload-tree [data-testid="json-tree"] details`).Length() == 0 {
		t.Error("no collapsible JSON tree")
	}
	if pdoc.Find(`input[data-json-filter="#archive-payload-tree"]`).Length() != 1 {
		t.Error("no search box for the payload")
	}
	if !strings.Contains(pdoc.Find(`#archive-payload-tree`).Text(), contract.ContractNumber) {
		t.Error("the tree does not show the payload")
	}
	download := e.p.get(t, e.user, base+"/archive-payload/download", nil)
	direct, err := e.api.Contracts.DigitalArchivePayload(e.ctx(), contract.ContractNumber)
	if err != nil {
		t.Fatal(err)
	}
	if download.StatusCode != http.StatusOK || !bytes.Equal([]byte(download.body), direct.Raw) {
		t.Errorf("payload download: %d, same bytes %v", download.StatusCode, bytes.Equal([]byte(download.body), direct.Raw))
	}
	if cd := download.Header.Get("Content-Disposition"); cd != "attachment; filename=archive-payload-"+contract.ContractNumber+".json" {
		t.Errorf("Content-Disposition %q", cd)
	}
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(pdoc.Find(`[data-testid="payload-sha256"]`).Text()) {
		t.Error("no SHA-256 of the payload")
	}

	// An archived contract accepts no signature request: the service says so (409), shown as a toast.
	sig := e.htmxDo(t, http.MethodPost, base+"/signature", url.Values{"email": {"a@example.com"}, "signerName": {"A"}})
	if sig.StatusCode != http.StatusConflict {
		t.Errorf("signature on an archived contract: %d", sig.StatusCode)
	}
}

// The signature form offers the customer's e-mail as the signer's (issue 26), on the page and again
// when a request was removed; a sent request shows no form to fill.
func TestSignatureFormPrefillsTheCustomersEmail(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	_, contract := e.newContract(t)
	cust, err := e.api.Customers.Get(e.ctx(), contract.CustomerID)
	if err != nil || cust.Email == "" {
		t.Fatalf("the contract's customer %d has no e-mail to offer: %v", contract.CustomerID, err)
	}
	page := e.p.get(t, e.user, contractPath(contract.ContractID), nil)
	if got := parseHTML(t, page.body).Find(`#signature-email`).AttrOr("value", ""); got != cust.Email {
		t.Errorf("the signer's e-mail is %q, want the customer's %q", got, cust.Email)
	}
	sigURL := contractPath(contract.ContractID) + "/signature"
	if sent := e.htmxDo(t, http.MethodPost, sigURL, url.Values{"email": {"other@example.com"}, "signerName": {"Other"}}); sent.StatusCode != http.StatusOK {
		t.Fatalf("send: %d", sent.StatusCode)
	}
	removed := e.htmxDo(t, http.MethodDelete, sigURL, nil)
	if got := parseHTML(t, removed.body).Find(`#signature-email`).AttrOr("value", ""); removed.StatusCode != http.StatusOK || got != cust.Email {
		t.Errorf("after removing the request the form offers %q (status %d), want %q", got, removed.StatusCode, cust.Email)
	}
}

// A contract read before the removal took effect (read beside it, or from a copy a moment behind)
// is shown as the 204 says it is: the request removed at the answer's time, the contract
// generated again; a read that already shows the removal is kept as it is.
func TestContractWithoutActiveRequest(t *testing.T) {
	t.Parallel()
	sent := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	removedAt := time.Date(2026, 11, 26, 10, 30, 15, 0, time.FixedZone("CET", 3600))
	stale := &apiclient.Contract{ContractID: 7, Status: contractStatusSignatureRequested, SignatureRequests: []apiclient.SignatureRequest{
		{SignatureRequestID: "old", Status: signatureStatusRemoved, SentAt: sent, RemovedAt: sent.Add(time.Minute)},
		{SignatureRequestID: "active", Status: signatureStatusSent, SentAt: sent},
	}}
	got := contractWithoutActiveRequest(stale, removedAt)
	if got.Status != contractStatusGenerated {
		t.Errorf("status %q, want %q", got.Status, contractStatusGenerated)
	}
	if r := got.SignatureRequests[1]; r.Status != signatureStatusRemoved || !r.RemovedAt.Equal(removedAt) || r.RemovedAt.Location() != time.UTC {
		t.Errorf("the active request became %+v, want REMOVED at %s (UTC)", r, removedAt)
	}
	if r := got.SignatureRequests[0]; !r.RemovedAt.Equal(sent.Add(time.Minute)) {
		t.Errorf("the earlier removal's time changed: %+v", r)
	}
	if stale.Status != contractStatusSignatureRequested || stale.SignatureRequests[1].Status != signatureStatusSent {
		t.Error("the read contract was modified in place")
	}
	if fresh := got; contractWithoutActiveRequest(fresh, removedAt.Add(time.Hour)) != fresh {
		t.Error("a contract without an active request is not kept as it is")
	}
	archived := &apiclient.Contract{Status: contractStatusArchived, SignatureRequests: []apiclient.SignatureRequest{{SignatureRequestID: "a", Status: signatureStatusSent}}}
	if got := contractWithoutActiveRequest(archived, removedAt); got.Status != contractStatusArchived {
		t.Errorf("an archived contract's status became %q", got.Status)
	}
}

// TestGenerateContractConfirmsTheQuoteAsItIsNow: the confirmation is read when the person clicks,
// so a price changed after the page was rendered (another tab) is in it; and a quote changed
// between the confirmation and the POST is not generated: 409 with the confirmation of the quote
// as it is now, no v2 generation, and the next confirmation carries the contract through.
func TestGenerateContractConfirmsTheQuoteAsItIsNow(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	ref := e.newQuote(t)
	quoteMust(t, "documents", e.p.get(t, e.user, ref.URL()+"/documents", htmx), http.StatusOK)
	reprice := func(activation float64) {
		t.Helper()
		quote := e.quote(t, ref)
		init, err := e.api.CPQ.Init(e.ctx(), ref.CPQID, ref.CustomerID)
		if err != nil {
			t.Fatal(err)
		}
		cart := quote.Carts[0]
		if _, err := e.api.CPQ.Reprice(e.ctx(), init.SessionID, ref.CPQID, ref.QuoteID,
			apiclient.RepriceRequest{ActivationPrice: activation, RecurringPrice: 0, BasketID: cart.BasketID, CartItemID: cart.Root.NodeID}); err != nil {
			t.Fatal(err)
		}
	}

	// Another tab sets the price to €0 after the page was rendered: the confirmation says so.
	reprice(0)
	en, _ := quoteTranslators(t)
	oneOff := func(q *apiclient.Quote) string { return en.Money(cents(q.Totals.NetActivation), "EUR") }
	first := e.p.get(t, e.user, ref.URL()+"/contract/confirm", htmx)
	if want := oneOff(e.quote(t, ref)); !strings.Contains(first.body, want+" one-off") {
		t.Errorf("confirmation %s does not state the one-off total now, %s", first.body, want)
	}
	confirmed := confirmedGenerate(t, first)

	// Changed again between the confirmation and the POST: nothing is generated.
	reprice(12.34)
	resp := e.htmxDo(t, http.MethodPost, ref.URL()+"/contract", confirmed)
	if resp.StatusCode != http.StatusConflict {
		t.Fatalf("generate after a change: %d %s", resp.StatusCode, resp.body)
	}
	changed := parseHTML(t, resp.body).Find(`[data-testid="generate-changed"]`).Text()
	if want := oneOff(e.quote(t, ref)); !strings.Contains(changed, "changed after you confirmed") || !strings.Contains(changed, want+" one-off") {
		t.Errorf("refusal %q does not state the quote now (%s)", changed, want)
	}
	if n := len(e.requestsTo("contracts.generate")); n != 0 || e.quote(t, ref).Contract != nil {
		t.Fatalf("a contract was generated from a quote nobody confirmed (%d calls)", n)
	}

	// Not confirmed at all (no state): refused the same way.
	if resp := e.htmxDo(t, http.MethodPost, ref.URL()+"/contract", url.Values{}); resp.StatusCode != http.StatusConflict {
		t.Errorf("generate without a confirmation: %d", resp.StatusCode)
	}

	// Confirmed anew: generated.
	if resp := e.htmxDo(t, http.MethodPost, ref.URL()+"/contract", e.generateForm(t, ref)); resp.StatusCode != http.StatusOK {
		t.Fatalf("generate after confirming anew: %d %s", resp.StatusCode, resp.body)
	}
	if n := len(e.requestsTo("contracts.generate")); n != 1 {
		t.Errorf("generate calls: %d, want 1", n)
	}
}

// TestContractConfirmationsStateTheContractNow: archiving and removing a signature request ask
// with the contract as the v2 API answers when the person clicks: its customer, status and totals,
// the request waiting now (sent after the page was rendered), and, when none waits any more, that
// there is nothing to remove (refused, so nothing is sent).
func TestContractConfirmationsStateTheContractNow(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	_, contract := e.newContract(t)
	base := contractPath(contract.ContractID)
	page := parseHTML(t, e.p.get(t, e.user, base, nil).body)
	ask := func(url string) confirmation {
		t.Helper()
		r := e.p.get(t, e.user, url, htmx)
		var answer confirmation
		if r.StatusCode != http.StatusOK || json.Unmarshal([]byte(r.body), &answer) != nil || answer.Question == "" {
			t.Fatalf("confirmation %s: %d %s", url, r.StatusCode, r.body)
		}
		return answer
	}
	en, _ := quoteTranslators(t)

	// Sent for signature after the page was rendered: the archive question says so.
	if _, err := e.api.Signatures.Create(e.ctx(), apiclient.SignatureInput{ContractID: contract.ContractID, Email: "late@example.com", SignerName: "Late"}); err != nil {
		t.Fatal(err)
	}
	now, err := e.api.Contracts.Get(e.ctx(), contract.ContractID)
	if err != nil {
		t.Fatal(err)
	}
	archive := ask(page.Find(`[data-testid="archive-button"]`).AttrOr("data-confirm-url", ""))
	// Not signed: the question warns and names the contract's stage now (issue 32).
	for _, want := range []string{now.ContractNumber, now.Customer.Name, "is not signed", "“Out for signature”", en.Money(cents(now.Totals.NetRecurring), "EUR") + " monthly", "cannot be undone"} {
		if !strings.Contains(archive.Question, want) {
			t.Errorf("archive confirmation %q lacks %q", archive.Question, want)
		}
	}

	// The signature request: the one waiting now, then none.
	removeURL := base + "/signature/confirm"
	if got := ask(removeURL); got.Refused || !strings.Contains(got.Question, "late@example.com") {
		t.Errorf("remove confirmation %+v", got)
	}
	if resp := e.htmxDo(t, http.MethodDelete, base+"/signature", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("remove the request: %d %s", resp.StatusCode, resp.body)
	}
	if got := ask(removeURL); !got.Refused || !strings.Contains(got.Question, "nothing was removed") {
		t.Errorf("remove confirmation with no request waiting %+v", got)
	}
	// Removed, the contract is generated again: still a warning, with that stage.
	archiveURL := page.Find(`[data-testid="archive-button"]`).AttrOr("data-confirm-url", "")
	if got := ask(archiveURL); !strings.Contains(got.Question, "is not signed: its stage is “Contract generated”") {
		t.Errorf("archive confirmation after the removal %q", got.Question)
	}
	// Signed: the plain question, no warning.
	e.sign(t, contract)
	signed, err := e.api.Contracts.Get(e.ctx(), contract.ContractID)
	if err != nil {
		t.Fatal(err)
	}
	if got := ask(archiveURL); strings.Contains(got.Question, "not signed") || !strings.Contains(got.Question, contracts.StatusLabel(en, signed.Status)) ||
		!strings.Contains(got.Question, "Signed") {
		t.Errorf("archive confirmation of a signed contract %q", got.Question)
	}
}
