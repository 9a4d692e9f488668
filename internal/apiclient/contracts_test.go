package apiclient

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"
)

const fakePDF = "%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"

// The service answers the generated contract as JSON (201), or the existing
// one (200).
func TestContractsGenerate(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	status := http.StatusCreated
	f.handle("POST /v2/contract/900001/generate", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodPost, false)
		testAccept(t, r, "application/json, application/pdf")
		testNoBody(t, r)
		writeJSON(w, status, contractJSON)
	})
	ctx := authCtx(t)
	res, err := client.Contracts.Generate(ctx, 900001)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	defer res.Close()
	if !res.Created || res.PDF != nil || res.ContractID != 42 || res.ContractNumber != "C-2026-000042" {
		t.Errorf("Generate = %+v", res)
	}
	checkContract(t, res.Contract)

	status = http.StatusOK
	res, err = client.Contracts.Generate(ctx, 900001)
	if err != nil {
		t.Fatalf("Generate again: %v", err)
	}
	if res.Created || res.Contract == nil {
		t.Errorf("Generate again = %+v, want the existing contract", res)
	}
}

// The service may answer the PDF itself, naming the contract in headers.
func TestContractsGeneratePDF(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("POST /v2/contract/900001/generate", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodPost, false)
		testAccept(t, r, "application/json, application/pdf")
		testNoBody(t, r)
		w.Header().Set("Content-Type", "application/pdf")
		w.Header().Set("Content-Disposition", `attachment; filename="contract-C-2026-000042.pdf"`)
		w.Header().Set("X-Contract-Id", "42")
		w.Header().Set("X-Contract-Number", "C-2026-000042")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, fakePDF)
	})
	res, err := client.Contracts.Generate(authCtx(t), 900001)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	defer res.Close()
	if res.Contract != nil || res.PDF == nil || !res.Created || res.ContractID != 42 || res.ContractNumber != "C-2026-000042" {
		t.Fatalf("Generate = %+v", res)
	}
	if res.PDF.FileName != "contract-C-2026-000042.pdf" || res.PDF.ContentType != "application/pdf" {
		t.Errorf("PDF = %+v", res.PDF)
	}
	body, err := io.ReadAll(res.PDF.Body)
	if err != nil || string(body) != fakePDF {
		t.Errorf("PDF body = %q, err %v", body, err)
	}
}

func TestContractsGet(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("GET /v2/contract/42", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodGet, false)
		testAccept(t, r, "application/json")
		testNoBody(t, r)
		writeJSON(w, 200, contractJSON)
	})
	got, err := client.Contracts.Get(authCtx(t), 42)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	checkContract(t, got)
}

// The contract PDF is the same endpoint with Accept: application/pdf.
func TestContractsDownloadPDF(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	asJSON := false
	f.handle("GET /v2/contract/42", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodGet, false)
		testAccept(t, r, "application/pdf")
		testNoBody(t, r)
		if asJSON {
			writeJSON(w, 200, contractJSON)
			return
		}
		w.Header().Set("Content-Type", "application/pdf")
		w.Header().Set("Content-Disposition", `attachment; filename="contract-C-2026-000042.pdf"`)
		_, _ = io.WriteString(w, fakePDF)
	})
	ctx := authCtx(t)
	d, err := client.Contracts.DownloadPDF(ctx, 42)
	if err != nil {
		t.Fatalf("DownloadPDF: %v", err)
	}
	body, err := io.ReadAll(d.Body)
	d.Close()
	if err != nil || string(body) != fakePDF || d.FileName != "contract-C-2026-000042.pdf" || d.ContentLength != int64(len(fakePDF)) {
		t.Errorf("DownloadPDF = %q (%+v), err %v", body, d, err)
	}

	// A service that ignores Accept must not pass JSON off as a PDF.
	asJSON = true
	if _, err := client.Contracts.DownloadPDF(ctx, 42); !errors.Is(err, ErrMalformedResponse) {
		t.Errorf("DownloadPDF of a JSON answer: err = %v, want ErrMalformedResponse", err)
	}
}

func TestContractsGetByNumber(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("GET /v2/contract/bycontractnumber/C-2026-000042", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodGet, false)
		testNoBody(t, r)
		writeJSON(w, 200, contractJSON)
	})
	got, err := client.Contracts.GetByNumber(authCtx(t), "C-2026-000042")
	if err != nil {
		t.Fatalf("GetByNumber: %v", err)
	}
	checkContract(t, got)
}

func TestContractsArchive(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("GET /v2/contract/contractNumber/C-2026-000042/archive", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodGet, false)
		testNoBody(t, r)
		writeJSON(w, 200, `{"contractNumber": "C-2026-000042", "archived": true, "archiveId": "ARC-000042",
			"archivedAt": "2026-11-22T08:00:00Z"}`)
	})
	got, err := client.Contracts.Archive(authCtx(t), "C-2026-000042")
	if err != nil {
		t.Fatalf("Archive: %v", err)
	}
	if got.ContractNumber != "C-2026-000042" || !got.Archived || got.ArchiveID != "ARC-000042" || got.ArchivedAt.Day() != 22 {
		t.Errorf("Archive = %+v", got)
	}
}

func TestContractsDigitalArchivePayload(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	const payload = `{"contract": {"contractNumber": "C-2026-000042"}, "customer": {"id": 17},
		"quote": {"quoteId": 900001}, "signatures": [], "documentHashes": {"contract.pdf": "9f86d0"}}`
	f.handle("GET /v2/contract/digitalarchivepayload/C-2026-000042", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodGet, false)
		testNoBody(t, r)
		writeJSON(w, 200, payload)
	})
	got, err := client.Contracts.DigitalArchivePayload(authCtx(t), "C-2026-000042")
	if err != nil {
		t.Fatalf("DigitalArchivePayload: %v", err)
	}
	if string(got.Raw) != payload {
		t.Errorf("Raw = %s", got.Raw)
	}
}

func TestContractsValidationAudit(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("GET /v2/contract/getjsonvalidationaudit/900001", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodGet, false)
		testNoBody(t, r)
		writeJSON(w, 200, `{"quoteId": 900001, "customerId": 17, "entries": [
			{"entryId": 1, "at": "2026-11-21T10:00:00Z", "actor": "sales", "action": "QUOTE_CREATED", "summary": "Quote created", "changes": []},
			{"entryId": 2, "at": "2026-11-21T10:05:00Z", "actor": "backoffice", "action": "CUSTOMER_UPDATED", "summary": "Phone changed",
			 "changes": [{"field": "phone", "before": "+39 02 1", "after": "+39 02 1234567"}, {"field": "vip", "before": null, "after": true}]}]}`)
	})
	got, err := client.Contracts.ValidationAudit(authCtx(t), 900001)
	if err != nil {
		t.Fatalf("ValidationAudit: %v", err)
	}
	if got.QuoteID != 900001 || got.CustomerID != 17 || len(got.Entries) != 2 || len(got.Raw) == 0 {
		t.Fatalf("ValidationAudit = %+v", got)
	}
	e := got.Entries[1]
	if e.EntryID != "2" || e.Action != "CUSTOMER_UPDATED" || e.Actor != "backoffice" || len(e.Changes) != 2 ||
		e.Changes[0].Field != "phone" || string(e.Changes[0].After) != `"+39 02 1234567"` || string(e.Changes[1].Before) != "null" {
		t.Errorf("entry = %+v", e)
	}
}

func TestContractsValidationAuditPDF(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("GET /v2/contract/downloadvalidationauditpdf/900001", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodGet, false)
		testAccept(t, r, "application/pdf")
		testNoBody(t, r)
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = io.WriteString(w, fakePDF)
	})
	d, err := client.Contracts.ValidationAuditPDF(authCtx(t), 900001)
	if err != nil {
		t.Fatalf("ValidationAuditPDF: %v", err)
	}
	defer d.Close()
	body, err := io.ReadAll(d.Body)
	if err != nil || string(body) != fakePDF || d.FileName != "" {
		t.Errorf("ValidationAuditPDF = %q (%+v), err %v", body, d, err)
	}
}

func TestSignaturesCreate(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("POST /v2/signature", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodPost, false)
		testQuery(t, r, nil)
		testJSONBody(t, r, `{"contractId": 42, "email": "ceo@rossi.example", "signerName": "Mario Rossi", "message": "Please sign"}`)
		writeJSON(w, http.StatusCreated, `{"signatureRequestId": 7, "contractId": 42, "email": "ceo@rossi.example",
			"signerName": "Mario Rossi", "message": "Please sign", "status": "SENT", "sentAt": "2026-11-21T11:10:00Z"}`)
	})
	got, err := client.Signatures.Create(authCtx(t), SignatureInput{
		ContractID: 42, Email: "ceo@rossi.example", SignerName: "Mario Rossi", Message: "Please sign",
	})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if id, ok := got.SignatureRequestID.Int64(); !ok || id != 7 || got.Status != "SENT" || got.ContractID != 42 || !got.RemovedAt.IsZero() {
		t.Errorf("Create = %+v", got)
	}
}

func TestSignaturesDelete(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("DELETE /v2/signature", func(w http.ResponseWriter, r *http.Request) {
		testCommon(t, r, http.MethodDelete, false)
		testQuery(t, r, map[string]string{"contractId": "42"})
		testNoBody(t, r)
		w.WriteHeader(http.StatusNoContent)
	})
	if err := client.Signatures.Delete(authCtx(t), 42); err != nil {
		t.Fatalf("Delete: %v", err)
	}
}

func TestSignatureAnswerIsReadLeniently(t *testing.T) {
	var c Contract
	doc := `{"contractId": 4, "status": "GENERATED", "signatureRequests": [
		{"signatureRequestId": 1, "status": "DECLINED", "sentAt": "2026-03-01T09:00:00Z", "declinedAt": "2026-03-02T10:30:00Z", "declineReason": "Too expensive"},
		{"signatureRequestId": 2, "status": "EXPIRED", "sentAt": "2026-03-03T09:00:00Z", "expiredAt": 12345, "reason": ["x"]},
		{"signatureRequestId": "3", "status": "SIGNED", "sentAt": "2026-03-04T09:00:00Z", "signedAt": "not a time", "reason": "Fine"}]}`
	if err := json.Unmarshal([]byte(doc), &c); err != nil {
		t.Fatalf("a contract with odd answer fields is unreadable: %v", err)
	}
	d := c.SignatureRequests[0]
	if d.DeclineReason != "Too expensive" || !d.DeclinedAt.Equal(time.Date(2026, 3, 2, 10, 30, 0, 0, time.UTC)) || !d.AnsweredAt().Equal(d.DeclinedAt) {
		t.Errorf("declined request %+v", d)
	}
	if e := c.SignatureRequests[1]; !e.ExpiredAt.IsZero() || e.DeclineReason != "" {
		t.Errorf("expired request with a number for a time: %+v", e)
	}
	if s := c.SignatureRequests[2]; !s.SignedAt.IsZero() || s.DeclineReason != "Fine" {
		t.Errorf("signed request %+v", s)
	}
	if latest, ok := c.LatestSignatureRequest(); !ok || latest.SignatureRequestID != "3" {
		t.Errorf("latest request %+v", latest)
	}
}
