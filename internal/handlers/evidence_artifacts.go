package handlers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/i18n"
)

// The evidence of a contract is a fixed set of artifacts, each read from the v2 API: the contract
// PDF, the contract document (with its signature requests and archive state), the digital archive
// payload (once archived), and the quote's validation audit as JSON and as PDF. The evidence page
// hashes each, the single downloads and the ZIP serve the same bytes, so the SHA-256 shown on the
// page is the one of the file a user downloads (as long as nothing changed in between).

// Artifact keys (stable: they are URL segments and test ids).
const (
	artifactContractPDF  = "contract-pdf"
	artifactContractJSON = "contract-json"
	artifactPayload      = "archive-payload"
	artifactAuditJSON    = "audit-json"
	artifactAuditPDF     = "audit-pdf"
)

// evidenceArtifact is one artifact: JSON documents are held (they are small, bounded by the API
// client), PDFs are opened and streamed when needed.
type evidenceArtifact struct {
	key      string
	label    string
	fileName string
	// data is the JSON document as the service sent it; nil for PDFs.
	data []byte
	// open streams a PDF from the v2 API; nil for JSON documents.
	open func(ctx context.Context) (*apiclient.Download, error)
	// published is the SHA-256 the service states for it, if any.
	published string
}

func (a evidenceArtifact) isPDF() bool { return a.open != nil }

// evidence is everything the evidence page and downloads need.
type evidence struct {
	contract  *apiclient.Contract
	audit     *apiclient.ValidationAudit
	payload   *apiclient.DigitalArchivePayload // nil until archived
	artifacts []evidenceArtifact
}

// loadEvidence reads the contract's documents (contract, audit, payload) and lists the artifacts,
// labelled and named in tr's language.
func (h *Handler) loadEvidence(ctx context.Context, tr *i18n.Translator, contractID int32) (*evidence, error) {
	contract, err := h.loadContract(ctx, contractID)
	if err != nil {
		return nil, err
	}
	audit, err := h.api.Contracts.ValidationAudit(ctx, contract.QuoteID)
	if err != nil {
		return nil, fmt.Errorf("evidence: validation audit of quote %d: %w", contract.QuoteID, err)
	}
	ev := &evidence{contract: contract, audit: audit}
	if isArchived(contract) {
		payload, err := h.api.Contracts.DigitalArchivePayload(ctx, contract.ContractNumber)
		switch {
		case errors.Is(err, apiclient.ErrConflict):
			// Not archived after all (the document and the payload call disagree): no payload.
		case err != nil:
			return nil, fmt.Errorf("evidence: archive payload of contract %d: %w", contractID, err)
		default:
			ev.payload = payload
		}
	}
	number := contractNumberOf(contract)
	quoteID := contract.QuoteID
	ev.artifacts = []evidenceArtifact{{
		key: artifactContractPDF, label: tr.T("evidence.artifact.contract_pdf"), fileName: contractPDFName(tr, contract), published: contract.PDF.SHA256,
		open: func(ctx context.Context) (*apiclient.Download, error) {
			d, err := h.api.Contracts.DownloadPDF(ctx, contractID)
			return d, asPDFError(err, "the contract")
		},
	}, {
		key: artifactContractJSON, label: tr.T("evidence.artifact.contract_json"),
		fileName: safeFileName(tr.T("contract.file.json", number), tr.T("contract.file.json", strconv.Itoa(int(contractID)))), data: contract.Raw,
	}}
	if ev.payload != nil {
		ev.artifacts = append(ev.artifacts, evidenceArtifact{
			key: artifactPayload, label: tr.T("evidence.artifact.payload"), fileName: payloadFileName(tr, contract), data: ev.payload.Raw,
		})
	}
	ev.artifacts = append(ev.artifacts, evidenceArtifact{
		key: artifactAuditJSON, label: tr.T("evidence.artifact.audit_json"), fileName: tr.T("audit.file.json", strconv.FormatInt(quoteID, 10)), data: audit.Raw,
	}, evidenceArtifact{
		key: artifactAuditPDF, label: tr.T("evidence.artifact.audit_pdf"), fileName: auditPDFName(tr, quoteID),
		open: func(ctx context.Context) (*apiclient.Download, error) {
			d, err := h.api.Contracts.ValidationAuditPDF(ctx, quoteID)
			return d, asPDFError(err, "the audit")
		},
	})
	return ev, nil
}

// artifact returns the artifact with the given key.
func (ev *evidence) artifact(key string) (evidenceArtifact, bool) {
	for _, a := range ev.artifacts {
		if a.key == key {
			return a, true
		}
	}
	return evidenceArtifact{}, false
}

// openArtifact returns a reader of the artifact's bytes: the held JSON, or the PDF streamed from the
// v2 API (which must start answering within PORTAL_V2_TIMEOUT) after the %PDF- check. The caller
// must call the returned close function.
func (h *Handler) openArtifact(ctx context.Context, a evidenceArtifact) (io.Reader, int64, func(), error) {
	if !a.isPDF() {
		return bytes.NewReader(a.data), int64(len(a.data)), func() {}, nil
	}
	limit := h.newStartLimit(ctx)
	download, err := a.open(limit.ctx)
	if err = limit.started(err); err != nil {
		limit.release()
		return nil, 0, nil, fmt.Errorf("evidence: %s: %w", a.key, err)
	}
	closeFn := func() {
		_ = download.Close()
		limit.release()
	}
	body, err := checkPDF(download.Body, a.fileName)
	if err != nil {
		closeFn()
		return nil, 0, nil, err
	}
	return body, download.ContentLength, closeFn, nil
}

// hashArtifact streams an artifact through SHA-256 and returns its hex digest and size.
func (h *Handler) hashArtifact(ctx context.Context, a evidenceArtifact) (string, int64, error) {
	body, length, closeFn, err := h.openArtifact(ctx, a)
	if err != nil {
		return "", 0, err
	}
	defer closeFn()
	hash := sha256.New()
	n, err := io.Copy(hash, body)
	if err == nil && length >= 0 && n != length {
		err = errShortBody
	}
	if err != nil {
		return "", 0, errBrokenFile(fmt.Errorf("evidence: reading %s: %w", a.key, err))
	}
	return hex.EncodeToString(hash.Sum(nil)), n, nil
}

// downloadEvidenceArtifact answers GET /contracts/:contractId/evidence/:artifact: one artifact, the
// same bytes that the page hashed and the ZIP holds.
func (h *Handler) downloadEvidenceArtifact(c *gin.Context) {
	contractID, err := parseInt32ID(c, "contractId")
	if err != nil {
		h.fail(c, err)
		return
	}
	key := c.Param("artifact")
	switch key {
	case artifactContractPDF, artifactContractJSON, artifactPayload, artifactAuditJSON, artifactAuditPDF:
	default:
		h.fail(c, badRequest("evidence.error.unknown_artifact", key))
		return
	}
	ctx := h.apiContext(c)
	ev, err := h.loadEvidence(ctx, tr(c), contractID)
	if err != nil {
		h.fail(c, err)
		return
	}
	a, ok := ev.artifact(key)
	if !ok {
		h.failDocument(c, &documentError{status: 404, title: i18n.M("evidence.error.not_available.title"),
			message: i18n.M("evidence.error.not_available.message")})
		return
	}
	body, length, closeFn, err := h.openArtifact(ctx, a)
	if err != nil {
		h.failDocument(c, err)
		return
	}
	defer closeFn()
	contentType := "application/json; charset=utf-8"
	if a.isPDF() {
		contentType = "application/pdf"
	}
	if err := h.streamFile(c, fileResponse{contentType: contentType, length: length, disposition: "attachment", fileName: a.fileName}, body); err != nil {
		h.failDocument(c, errBrokenFile(err))
	}
}
