package handlers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/a-h/templ"
	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/workindex"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/contracts"
	"github.com/cpqportal/portal/web/templates/layout"
)

// archiveContract answers POST /contracts/:contractId/archive (after a confirmation). The v2 call
// is a GET (GET /v2/contract/contractNumber/{n}/archive, spec 4.4), but archiving changes state, so
// the portal exposes it as a POST: cross-origin protected, never triggered by a link or a prefetch.
// The button posts the contract's number signed by the portal (contract_archive_proof.go), so the
// archive call goes first; a changed number is refused before any call, and a form without one
// (a page older than the signed button) reads the contract to learn it. The answer is the archive
// region with the result and, out of band, the signature region (no more requests on an archived
// contract) and the new status.
func (h *Handler) archiveContract(c *gin.Context) {
	contractID, err := parseInt32ID(c, "contractId")
	if err != nil {
		h.fail(c, err)
		return
	}
	number, err := h.archiveNumberFromForm(c, contractID)
	if err != nil {
		h.fail(c, err)
		return
	}
	ctx := h.apiContext(c)
	if number == "" {
		contract, err := h.loadContract(ctx, contractID)
		if err != nil {
			h.fail(c, err)
			return
		}
		number = contract.ContractNumber
	}
	result, err := h.api.Contracts.Archive(ctx, number)
	if err != nil {
		h.fail(c, fmt.Errorf("contracts: archive contract %d: %w", contractID, err))
		return
	}
	if !isHTMX(c) {
		c.Redirect(http.StatusSeeOther, contractPath(contractID))
		return
	}
	// The contract's new state and the archive payload are read side by side, and the payload comes
	// with the answer instead of loading itself afterwards (issue 27: two round trips fewer).
	payloadOf := later(func() (*apiclient.DigitalArchivePayload, error) {
		return h.api.Contracts.DigitalArchivePayload(ctx, number)
	})
	defer payloadOf() //nolint:errcheck // waited for on every path; the result is read below
	contract, err := h.loadContract(ctx, contractID)
	if err != nil {
		h.fail(c, err)
		return
	}
	archive := archiveVM(tr(c), contract)
	if payload, err := payloadOf(); err == nil {
		vm := payloadVM(tr(c), contract, payload)
		archive.Payload = &vm
	} else {
		h.log(c).Info("archive payload not read with the answer; the region loads it", "err", err)
	}
	archive.Archived, archive.JustArchived = true, true
	if archive.ArchiveID == "" {
		archive.ArchiveID = string(result.ArchiveID)
	}
	if archive.ArchivedAt.IsZero() {
		archive.ArchivedAt = result.ArchivedAt
	}
	signature := signatureVM(tr(c), contract)
	signature.OOB = true
	status := contractStatusVM(tr(c), contract)
	status.OOB = true
	message := t(c, "archive.toast", contractNumberOf(contract), archive.ArchiveID)
	h.markContractSeen(c, contract)
	h.indexContract(c, contract, workindex.ActChanged)
	h.toast(c, components.ToastSuccess, message)
	announce(c, message)
	h.render(c, http.StatusOK, templ.Join(contracts.ArchivePartial(archive), contracts.SignaturePartial(signature), contracts.StatusBadge(status)))
}

// errNotArchived: the payload exists only once the contract is archived (409, A7).
var errNotArchived = errors.New("contract not archived")

// loadPayload reads a contract and its digital archive payload; errNotArchived before archiving.
func (h *Handler) loadPayload(ctx context.Context, contractID int32) (*apiclient.Contract, *apiclient.DigitalArchivePayload, error) {
	contract, err := h.loadContract(ctx, contractID)
	if err != nil {
		return nil, nil, err
	}
	payload, err := h.api.Contracts.DigitalArchivePayload(ctx, contract.ContractNumber)
	if errors.Is(err, apiclient.ErrConflict) {
		return contract, nil, fmt.Errorf("contracts: archive payload of contract %d: %w: %w", contractID, errNotArchived, err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("contracts: archive payload of contract %d: %w", contractID, err)
	}
	return contract, payload, nil
}

// payloadVM builds the payload view; hashes are of the bytes the service sent (the .json download).
func payloadVM(tr *i18n.Translator, contract *apiclient.Contract, payload *apiclient.DigitalArchivePayload) contracts.PayloadVM {
	sum := sha256.Sum256(payload.Raw)
	return contracts.PayloadVM{
		ContractID: contract.ContractID,
		Number:     contractNumberOf(contract),
		Payload:    payload.Raw,
		SHA256:     hex.EncodeToString(sum[:]),
		SizeText:   formatBytes(int64(len(payload.Raw))).In(tr),
	}
}

// showArchivePayload answers GET /contracts/:contractId/archive-payload: the digital archive payload
// as a collapsible JSON tree with a search box (the contract page loads it once archived).
func (h *Handler) showArchivePayload(c *gin.Context) {
	contractID, err := parseInt32ID(c, "contractId")
	if err != nil {
		h.fail(c, err)
		return
	}
	contract, payload, err := h.loadPayload(h.apiContext(c), contractID)
	status := http.StatusOK
	var vm contracts.PayloadVM
	switch {
	case errors.Is(err, errNotArchived):
		status = http.StatusConflict
		vm = contracts.PayloadVM{ContractID: contractID, Number: contractNumberOf(contract), NotArchived: true,
			Message: i18n.M("archive.payload.not_archived")}
	case err != nil:
		h.fail(c, err)
		return
	default:
		vm = payloadVM(tr(c), contract, payload)
	}
	if isHTMX(c) {
		h.render(c, status, contracts.PayloadPartial(vm))
		return
	}
	h.renderPage(c, status, t(c, "archive.payload.page_title", vm.Number), layout.SectionContracts, contracts.PayloadPage(vm))
}

// payloadFileName is the download name of a contract's archive payload, in tr's language.
func payloadFileName(tr *i18n.Translator, contract *apiclient.Contract) string {
	return safeFileName(tr.T("archive.payload.file", contractNumberOf(contract)), tr.T("archive.payload.file", strconv.Itoa(int(contract.ContractID))))
}

// downloadArchivePayload answers GET /contracts/:contractId/archive-payload/download: the payload as
// a .json file, byte for byte as the service sent it (so its SHA-256 is the one on the evidence page).
func (h *Handler) downloadArchivePayload(c *gin.Context) {
	contractID, err := parseInt32ID(c, "contractId")
	if err != nil {
		h.fail(c, err)
		return
	}
	contract, payload, err := h.loadPayload(h.apiContext(c), contractID)
	if err != nil {
		h.fail(c, err)
		return
	}
	err = h.streamFile(c, fileResponse{
		contentType: "application/json; charset=utf-8",
		length:      int64(len(payload.Raw)),
		disposition: "attachment",
		fileName:    payloadFileName(tr(c), contract),
	}, bytes.NewReader(payload.Raw))
	if err != nil {
		h.failDocument(c, errBrokenFile(err))
	}
}
