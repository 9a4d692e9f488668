package handlers

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/workindex"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/contracts"
	"github.com/cpqportal/portal/web/templates/layout"
	"github.com/cpqportal/portal/web/templates/quotes"
)

// Contract and signature request statuses (docs/v2-assumptions.md A7).
const (
	// contractStatusArchived is the contract status after archiving.
	contractStatusArchived = "ARCHIVED"
	// contractStatusSignatureRequested is the status of a contract with a request out for signature.
	contractStatusSignatureRequested = "SIGNATURE_REQUESTED"
	// contractStatusGenerated is the status of a contract with no request out for signature.
	contractStatusGenerated = "GENERATED"
	// signatureStatusSent is an active signature request's status.
	signatureStatusSent = "SENT"
	// signatureStatusRemoved is the status of a request that was removed.
	signatureStatusRemoved = "REMOVED"
)

// contractStatusVM is the contract page's status badge: the v2 status, or the stage where the
// signer's answer says more than the status (declined, expired: the status is GENERATED again;
// signed, whichever status a v2 reports with a signed request). docs/v2-assumptions.md A11.
func contractStatusVM(tr *i18n.Translator, contract *apiclient.Contract) contracts.StatusVM {
	switch stage := workindex.StageOfContract(contractFacts(contract)); stage {
	case workindex.StageSigned, workindex.StageDeclined, workindex.StageExpired:
		return contracts.StatusVM{Text: stageLabel(tr, stage), Level: stageLevel(stage)}
	}
	return contracts.StatusOf(tr, contract.Status)
}

// loadContract reads a contract by id.
func (h *Handler) loadContract(ctx context.Context, contractID int32) (*apiclient.Contract, error) {
	contract, err := h.api.Contracts.Get(ctx, contractID)
	if err != nil {
		return nil, fmt.Errorf("contracts: get contract %d: %w", contractID, err)
	}
	return contract, nil
}

// isArchived reports whether the contract is archived (either field of A7 says so).
func isArchived(contract *apiclient.Contract) bool {
	return contract.Archive.Archived || contract.Status == contractStatusArchived
}

// contractNumberOf is the contract's number, or "#id" when the document has none.
func contractNumberOf(contract *apiclient.Contract) string {
	if contract.ContractNumber != "" {
		return contract.ContractNumber
	}
	return "#" + strconv.Itoa(int(contract.ContractID))
}

// quotePath is the quote page of a contract's quote.
func quotePath(contract *apiclient.Contract) string {
	return quotes.Ref{CPQID: contract.CPQID, CustomerID: contract.CustomerID, QuoteID: contract.QuoteID}.URL()
}

// money writes an amount of the v2 API (euros, a float) the way tr's language writes money.
func money(tr *i18n.Translator, v float64) string {
	return tr.Money(int64(math.Round(v*100)), "EUR")
}

// contractVM builds the contract page's view model.
func contractVM(tr *i18n.Translator, contract *apiclient.Contract) contracts.ContractVM {
	url := contractPath(contract.ContractID)
	customer := i18n.Isolate(contract.Customer.Name)
	if contract.Customer.TaxID != "" {
		customer += " (" + contract.Customer.TaxID + ")"
	}
	if customer == "" {
		customer = tr.T("contract.customer_fallback", strconv.Itoa(int(contract.CustomerID)))
	}
	vm := contracts.ContractVM{
		ID:     contract.ContractID,
		Number: contractNumberOf(contract),
		Status: contractStatusVM(tr, contract),
		Details: []components.KV{
			{Key: tr.T("contract.field.number"), Value: contractNumberOf(contract)},
			{Key: tr.T("contract.field.id"), Value: strconv.Itoa(int(contract.ContractID))},
			{Key: tr.T("contract.field.created"), At: contract.CreatedAt},
			{Key: tr.T("contract.field.customer"), Value: customer},
			{Key: tr.T("contract.field.quote"), Value: strconv.FormatInt(contract.QuoteID, 10)},
			{Key: tr.T("contract.field.configurator"), Value: tr.T("customer.configurator_id", strconv.Itoa(int(contract.CPQID)))},
			{Key: tr.T("contract.field.one_off"), Value: money(tr, contract.Totals.NetActivation)},
			{Key: tr.T("contract.field.recurring"), Value: money(tr, contract.Totals.NetRecurring)},
		},
		QuoteID:     contract.QuoteID,
		QuoteURL:    quotePath(contract),
		AuditURL:    auditURL(contract.QuoteID),
		PDFURL:      url + "/pdf",
		PreviewURL:  url + "/pdf?inline=1",
		EvidenceURL: url + "/evidence",
		PDF: contracts.PDFInfo{
			FileName: safeFileName(contract.PDF.FileName, contractPDFName(tr, contract)),
			SizeText: formatBytes(contract.PDF.Size).In(tr),
			SHA256:   contract.PDF.SHA256,
		},
		Signature: signatureVM(tr, contract),
		Archive:   archiveVM(tr, contract),
	}
	return vm
}

// contractPDFName is the download name of a contract's PDF, in tr's language (contratto-C-1.pdf).
func contractPDFName(tr *i18n.Translator, contract *apiclient.Contract) string {
	return safeFileName(tr.T("contract.file.pdf", contractNumberOf(contract)), tr.T("contract.file.pdf", strconv.Itoa(int(contract.ContractID))))
}

// archiveVM builds the archive region.
func archiveVM(tr *i18n.Translator, contract *apiclient.Contract) contracts.ArchiveVM {
	return contracts.ArchiveVM{
		ContractID: contract.ContractID,
		Number:     contractNumberOf(contract),
		Archived:   isArchived(contract),
		ArchiveID:  string(contract.Archive.ArchiveID),
		ArchivedAt: contract.Archive.ArchivedAt,
	}
}

// showContract answers GET /contracts/:contractId: the contract's data, its PDF (download and
// preview), signature requests and archive.
func (h *Handler) showContract(c *gin.Context) {
	contractID, err := parseInt32ID(c, "contractId")
	if err != nil {
		h.fail(c, err)
		return
	}
	// The product catalogue's name (call 1, kept per user for a minute) is read beside the
	// contract, so a clerk who never opened a quote sees it by name (issue 33), in one round trip.
	ctx, user := h.apiContext(c), customerCacheKey(c)
	var (
		wg       sync.WaitGroup
		cpqNames map[int32]string
	)
	wg.Go(func() { cpqNames, _ = h.configuratorNamesNow(ctx, user) }) // without them: the numbered word
	contract, err := h.loadContract(ctx, contractID)
	wg.Wait()
	if err != nil {
		h.fail(c, err)
		return
	}
	vm := contractVM(tr(c), contract)
	vm.Archive = h.withArchiveProof(vm.Archive, contract.ContractNumber)
	nameConfiguratorFrom(tr(c), contract, cpqNames, &vm)
	h.prefillSigner(c, contract, &vm.Signature)
	h.touchRecent(c, recentContractItem(contract))
	h.indexContract(c, contract, workindex.ActOpened)
	vm.LiveURL = contractPath(contract.ContractID) + "/changes"
	vm.LiveTag = contractChangeTag(contract)
	vm.LiveSince = strconv.FormatInt(h.now().UnixMilli(), 10)
	h.changes.ObserveBy(contractWatchKey(contract.ContractID), customerCacheKey(c), vm.LiveTag)
	h.renderPage(c, http.StatusOK, t(c, "contract.title", vm.Number), layout.SectionContracts, contracts.ContractPage(vm))
}

// nameConfiguratorFrom names the contract's configurator in vm's details from names (id to name,
// may be nil: the numbered word stays).
func nameConfiguratorFrom(tr *i18n.Translator, contract *apiclient.Contract, names map[int32]string, vm *contracts.ContractVM) {
	name := names[contract.CPQID]
	if name == "" {
		return
	}
	key := tr.T("contract.field.configurator")
	for i := range vm.Details {
		if vm.Details[i].Key == key {
			vm.Details[i].Value = name
		}
	}
}

// prefillSigner puts the customer's e-mail into an empty signature form (issue 26): from the
// user's cached customer list when it has the customer, else from the customer itself (one read,
// only when the form is offered). A failed read leaves the field empty: it is a convenience.
func (h *Handler) prefillSigner(c *gin.Context, contract *apiclient.Contract, vm *contracts.SignatureVM) {
	if vm.Archived || vm.Active != nil || vm.Email.Value != "" || contract.CustomerID == 0 {
		return
	}
	if snap, ok := h.customers.Peek(customerCacheKey(c)); ok {
		if row, ok := snap.Lookup(contract.CustomerID); ok && row.Email != "" {
			vm.Email.Value = row.Email
			return
		}
	}
	if cust, err := h.api.Customers.Get(h.apiContext(c), contract.CustomerID); err == nil && cust.Email != "" {
		vm.Email.Value = cust.Email
	}
}
