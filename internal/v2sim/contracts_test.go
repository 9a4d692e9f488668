package v2sim

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

type tContract struct {
	ContractID             int32
	ContractNumber, Status string
	QuoteID                int64
	CustomerID, CPQID      int32
	Totals                 tTotals
	Customer               struct {
		ID          int32
		Name, TaxID string
	}
	PDF struct {
		FileName, SHA256 string
		Size             int64
	}
	SignatureRequests []tSignature
	Archive           struct {
		Archived  bool
		ArchiveID string
	}
}

type tSignature struct {
	SignatureRequestID                 int64
	ContractID                         int32
	Email, SignerName, Message, Status string
	RemovedAt                          *string
}

func wantPDF(t *testing.T, r response, contains ...string) {
	t.Helper()
	if r.header.Get("Content-Type") != "application/pdf" {
		t.Fatalf("Content-Type = %q", r.header.Get("Content-Type"))
	}
	if !bytes.HasPrefix(r.body, []byte("%PDF-")) || !bytes.Contains(r.body, []byte("%%EOF")) {
		t.Fatalf("not a PDF: %q...", r.body[:min(len(r.body), 20)])
	}
	if r.header.Get("Content-Length") != strconv.Itoa(len(r.body)) {
		t.Errorf("Content-Length %s for %d bytes", r.header.Get("Content-Length"), len(r.body))
	}
	for _, s := range contains {
		if !bytes.Contains(r.body, []byte(s)) {
			t.Errorf("PDF does not contain %q", s)
		}
	}
}

func TestContractLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	sid, q := e.newQuote(12)
	e.do("PUT", path("/v2/cpq/1/quote/%d/basket/%d/quantity", q.QuoteID, q.Carts[0].BasketID), `{"quantity": 4}`, withSession(sid)).wantStatus(t, 200).decode(t, &q)

	// A quote without carts has no contract.
	_, empty := e.newQuote(12)
	e.do("DELETE", path("/v2/cpq/1/quote/%d/basket/%d", empty.QuoteID, empty.Carts[0].BasketID), nil, withSession(sid)).wantStatus(t, http.StatusNoContent)
	e.do("POST", path("/v2/contract/%d/generate", empty.QuoteID), nil).wantError(t, http.StatusUnprocessableEntity, codeValidationFailed)

	// Generate: 201, then 200 with the same contract.
	var c tContract
	e.do("POST", path("/v2/contract/%d/generate", q.QuoteID), nil, withHeader("Accept", "application/json, application/pdf")).
		wantStatus(t, http.StatusCreated).decode(t, &c)
	var customer tCustomer
	e.do("GET", "/v2/customer/12", nil).wantStatus(t, 200).decode(t, &customer)
	if c.ContractNumber != "C-2026-000002" || c.Status != "GENERATED" || c.QuoteID != q.QuoteID || c.CustomerID != 12 || c.CPQID != 1 ||
		c.Customer.Name != customer.Name || c.Customer.TaxID != customer.TaxID || cents(c.Totals.NetRecurring) != cents(q.Totals.NetRecurring) ||
		c.PDF.FileName != "contract-C-2026-000002.pdf" || c.PDF.Size == 0 || len(c.SignatureRequests) != 0 || c.Archive.Archived {
		t.Fatalf("generated contract %+v", c)
	}
	var again tContract
	e.do("POST", path("/v2/contract/%d/generate", q.QuoteID), nil).wantStatus(t, http.StatusOK).decode(t, &again)
	if again.ContractID != c.ContractID {
		t.Fatalf("second generate made contract %d, want %d", again.ContractID, c.ContractID)
	}
	var doc tQuote
	e.do("GET", path("/v2/cpq/1/customer/12/quote/%d/toflist", q.QuoteID), nil).wantStatus(t, 200).decode(t, &doc)
	if doc.Contract == nil || doc.Contract.ContractNumber != c.ContractNumber {
		t.Fatalf("quote document contract = %+v", doc.Contract)
	}

	// JSON by id and by number; the PDF by content negotiation.
	contractPath := path("/v2/contract/%d", c.ContractID)
	var byID, byNumber tContract
	e.do("GET", contractPath, nil).wantStatus(t, 200).decode(t, &byID)
	e.do("GET", "/v2/contract/bycontractnumber/"+c.ContractNumber, nil).wantStatus(t, 200).decode(t, &byNumber)
	if byID.ContractNumber != c.ContractNumber || byNumber.ContractID != c.ContractID {
		t.Fatalf("by id %+v, by number %+v", byID, byNumber)
	}
	e.do("GET", contractPath, nil, withHeader("Accept", "application/json, application/pdf;q=0.5")).wantStatus(t, 200).decode(t, &byID)
	pdf := e.do("GET", contractPath, nil, withHeader("Accept", "application/pdf")).wantStatus(t, 200)
	wantPDF(t, pdf, c.ContractNumber, c.Customer.TaxID, "Business Mobile 50GB", `Totals \(EUR\)`, strconv.FormatFloat(q.Totals.NetRecurring, 'f', 2, 64))
	sum := sha256.Sum256(pdf.body)
	if hex.EncodeToString(sum[:]) != c.PDF.SHA256 || int64(len(pdf.body)) != c.PDF.Size {
		t.Errorf("PDF sha256/size differ from the contract document")
	}
	if cd := pdf.header.Get("Content-Disposition"); cd != `attachment; filename="contract-C-2026-000002.pdf"` {
		t.Errorf("Content-Disposition = %q", cd)
	}
	// The PDF is generated once and cached: the same bytes every time.
	if again := e.do("GET", contractPath, nil, withHeader("Accept", "application/pdf")); !bytes.Equal(again.body, pdf.body) {
		t.Error("the contract PDF changed between downloads")
	}

	// Signature: 201, one active request, removal via query parameter.
	sigBody := path(`{"contractId": %d, "email": "ceo@example.com", "signerName": "Carla Neri", "message": "Please sign"}`, c.ContractID)
	var sig tSignature
	e.do("POST", "/v2/signature", sigBody).wantStatus(t, http.StatusCreated).decode(t, &sig)
	if sig.SignatureRequestID == 0 || sig.Status != "SENT" || sig.Email != "ceo@example.com" || sig.ContractID != c.ContractID {
		t.Fatalf("signature request %+v", sig)
	}
	e.do("POST", "/v2/signature", sigBody).wantError(t, http.StatusConflict, codeConflict)
	e.do("GET", contractPath, nil).wantStatus(t, 200).decode(t, &byID)
	if byID.Status != "SIGNATURE_REQUESTED" || len(byID.SignatureRequests) != 1 {
		t.Fatalf("after signature request: %+v", byID)
	}
	bad := e.do("POST", "/v2/signature", path(`{"contractId": %d, "email": "nope", "signerName": "", "message": "%s"}`, c.ContractID, strings.Repeat("m", 2001))).
		wantError(t, http.StatusUnprocessableEntity, codeValidationFailed)
	for _, f := range []string{"email", "signerName", "message"} {
		if !bad.hasFieldError(f) {
			t.Errorf("signature fieldErrors %+v do not name %s", bad.FieldErrors, f)
		}
	}
	e.do("POST", "/v2/signature", `{"contractId": 999, "email": "a@b.co", "signerName": "A"}`).wantError(t, http.StatusNotFound, codeNotFound)
	e.do("DELETE", "/v2/signature", nil).wantError(t, http.StatusBadRequest, codeBadRequest)
	e.do("DELETE", path("/v2/signature?contractId=%d", c.ContractID), nil).wantStatus(t, http.StatusNoContent)
	e.do("DELETE", path("/v2/signature?contractId=%d", c.ContractID), nil).wantError(t, http.StatusNotFound, codeNotFound)
	e.do("GET", contractPath, nil).wantStatus(t, 200).decode(t, &byID)
	if byID.Status != "GENERATED" || byID.SignatureRequests[0].Status != "REMOVED" || byID.SignatureRequests[0].RemovedAt == nil {
		t.Fatalf("after removal: %+v", byID)
	}
	e.do("POST", "/v2/signature", sigBody).wantStatus(t, http.StatusCreated)

	// The archive payload exists only after archiving; archiving is idempotent.
	payloadPath := "/v2/contract/digitalarchivepayload/" + c.ContractNumber
	e.do("GET", payloadPath, nil).wantError(t, http.StatusConflict, codeConflict)
	var archive, archiveAgain struct {
		ContractNumber, ArchiveID, ArchivedAt string
		Archived                              bool
	}
	e.clock.Advance(3600e9)
	e.do("GET", "/v2/contract/contractNumber/"+c.ContractNumber+"/archive", nil).wantStatus(t, 200).decode(t, &archive)
	e.clock.Advance(3600e9)
	e.do("GET", "/v2/contract/contractNumber/"+c.ContractNumber+"/archive", nil).wantStatus(t, 200).decode(t, &archiveAgain)
	if !archive.Archived || archive.ArchiveID == "" || archive != archiveAgain || archive.ContractNumber != c.ContractNumber {
		t.Fatalf("archive %+v, again %+v", archive, archiveAgain)
	}
	var payload struct {
		Archive  struct{ ArchiveID string }
		Contract struct {
			ContractNumber string
			Totals         tTotals
		}
		Customer struct{ Name, TaxID string }
		Quote    struct {
			QuoteID int64
			Carts   []struct {
				Items []struct {
					Name string
				}
			}
		}
		Signatures []tSignature
		Documents  []struct{ Kind, FileName, SHA256 string }
	}
	e.do("GET", payloadPath, nil).wantStatus(t, 200).decode(t, &payload)
	if payload.Archive.ArchiveID != archive.ArchiveID || payload.Contract.ContractNumber != c.ContractNumber || payload.Customer.TaxID != customer.TaxID ||
		payload.Quote.QuoteID != q.QuoteID || len(payload.Quote.Carts) != 1 || payload.Quote.Carts[0].Items[0].Name != "Business Mobile 50GB" ||
		len(payload.Signatures) != 2 || len(payload.Documents) != 1 || payload.Documents[0].SHA256 != c.PDF.SHA256 {
		t.Fatalf("payload %+v", payload)
	}
	e.do("GET", contractPath, nil).wantStatus(t, 200).decode(t, &byID)
	if byID.Status != "ARCHIVED" || !byID.Archive.Archived {
		t.Fatalf("after archive: %+v", byID)
	}
	// An archived contract takes no more signature changes.
	e.do("DELETE", path("/v2/signature?contractId=%d", c.ContractID), nil).wantError(t, http.StatusConflict, codeConflict)

	// The validation audit lists every action with its actor, and its PDF shows them.
	var audit struct {
		Entries []struct{ Action, Actor string }
	}
	e.do("GET", path("/v2/contract/getjsonvalidationaudit/%d", q.QuoteID), nil).wantStatus(t, 200).decode(t, &audit)
	var actions []string
	for _, en := range audit.Entries {
		actions = append(actions, en.Action)
		if en.Actor != anonymousActor {
			t.Errorf("entry %s actor %q", en.Action, en.Actor)
		}
	}
	want := "QUOTE_CREATED CART_ADDED QUANTITY_CHANGED CONTRACT_GENERATED SIGNATURE_REQUESTED SIGNATURE_REMOVED SIGNATURE_REQUESTED CONTRACT_ARCHIVED"
	if got := strings.Join(actions, " "); got != want {
		t.Errorf("audit actions:\n got %s\nwant %s", got, want)
	}
	auditPDF := e.do("GET", path("/v2/contract/downloadvalidationauditpdf/%d", q.QuoteID), nil).wantStatus(t, 200)
	wantPDF(t, auditPDF, "CONTRACT_ARCHIVED", "QUANTITY_CHANGED", c.ContractNumber, strconv.FormatInt(q.QuoteID, 10))
}

func TestGeneratePDFOption(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{GeneratePDF: true})
	_, q := e.newQuote(20)
	r := e.do("POST", path("/v2/contract/%d/generate", q.QuoteID), nil, withHeader("Accept", "application/json, application/pdf")).wantStatus(t, http.StatusCreated)
	number := r.header.Get("X-Contract-Number")
	if number == "" || r.header.Get("X-Contract-Id") == "" {
		t.Fatalf("headers %v", r.header)
	}
	wantPDF(t, r, number)
	e.do("POST", path("/v2/contract/%d/generate", q.QuoteID), nil).wantStatus(t, http.StatusOK)
	// A client that accepts only JSON still gets JSON.
	var c tContract
	e.do("POST", path("/v2/contract/%d/generate", q.QuoteID), nil, withHeader("Accept", "application/json")).wantStatus(t, http.StatusOK).decode(t, &c)
	if c.ContractNumber != number || strconv.Itoa(int(c.ContractID)) != r.header.Get("X-Contract-Id") {
		t.Errorf("JSON %+v, headers %v", c, r.header)
	}
}

func TestSeededContractAndQuotes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	var c tContract
	e.do("GET", "/v2/contract/1", nil).wantStatus(t, 200).decode(t, &c)
	if c.Status != "SIGNATURE_REQUESTED" || c.QuoteID != 900003 || len(c.SignatureRequests) != 1 {
		t.Fatalf("seeded contract %+v", c)
	}
	wantPDF(t, e.do("GET", "/v2/contract/1", nil, withHeader("Accept", "application/pdf")), c.ContractNumber)
	var q tQuote
	e.do("GET", "/v2/cpq/1/customer/1/quote/900001/toflist", nil).wantStatus(t, 200).decode(t, &q)
	if len(q.Carts) != 2 || len(q.AppliedDiscounts) != 1 || len(q.ExtraDiscounts) != 1 || len(q.Packages) != 1 || q.Totals.NetRecurring <= 0 {
		t.Fatalf("seeded quote %+v", q)
	}
}

// TestArchiveIsStrict: archiving an unknown number answers 404 and changes nothing; a number the
// service cannot hold answers 400; archiving twice answers the same archive (same id and time)
// and records one CONTRACT_ARCHIVED entry (A7), so a client that repeats the call (a batch
// resumed after a stop) never archives twice.
func TestArchiveIsStrict(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	e.do("GET", "/v2/contract/contractNumber/C-1999-999999/archive", nil).wantError(t, http.StatusNotFound, codeNotFound)
	e.do("GET", "/v2/contract/contractNumber/"+strings.Repeat("9", 101)+"/archive", nil).wantError(t, http.StatusBadRequest, codeBadPathParameter)

	_, q := e.newQuote(13)
	var c tContract
	e.do("POST", path("/v2/contract/%d/generate", q.QuoteID), nil).wantStatus(t, http.StatusCreated).decode(t, &c)
	var first, second struct {
		ContractNumber, ArchiveID, ArchivedAt string
		Archived                              bool
	}
	e.do("GET", "/v2/contract/contractNumber/"+c.ContractNumber+"/archive", nil).wantStatus(t, 200).decode(t, &first)
	e.do("GET", "/v2/contract/contractNumber/"+c.ContractNumber+"/archive", nil).wantStatus(t, 200).decode(t, &second)
	if first != second || !first.Archived || first.ArchiveID == "" {
		t.Fatalf("first %+v, second %+v", first, second)
	}
	var audit struct {
		Entries []struct{ Action string }
	}
	e.do("GET", path("/v2/contract/getjsonvalidationaudit/%d", q.QuoteID), nil).wantStatus(t, 200).decode(t, &audit)
	archived := 0
	for _, entry := range audit.Entries {
		if entry.Action == "CONTRACT_ARCHIVED" {
			archived++
		}
	}
	if archived != 1 {
		t.Fatalf("%d CONTRACT_ARCHIVED entries after archiving twice, want 1", archived)
	}
}
