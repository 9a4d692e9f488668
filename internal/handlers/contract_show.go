package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/contracts"
	"github.com/cpqportal/portal/web/templates/layout"
)

// contractStatusArchived is the contract status after archiving (docs/v2-assumptions.md A7).
const contractStatusArchived = "ARCHIVED"

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
	return quoteRef{cpqID: contract.CPQID, customerID: contract.CustomerID, quoteID: contract.QuoteID}.baseURL()
}

func money(v float64) string {
	return fmt.Sprintf("%.2f EUR", v)
}

// contractVM builds the contract page's view model.
func contractVM(contract *apiclient.Contract) contracts.ContractVM {
	url := contractPath(contract.ContractID)
	customer := contract.Customer.Name
	if contract.Customer.TaxID != "" {
		customer += " (" + contract.Customer.TaxID + ")"
	}
	if customer == "" {
		customer = fmt.Sprintf("customer %d", contract.CustomerID)
	}
	vm := contracts.ContractVM{
		ID:     contract.ContractID,
		Number: contractNumberOf(contract),
		Status: contracts.StatusOf(contract.Status),
		Details: []components.KV{
			{Key: "Contract number", Value: contractNumberOf(contract)},
			{Key: "Contract id", Value: strconv.Itoa(int(contract.ContractID))},
			{Key: "Created", Value: timeText(contract.CreatedAt)},
			{Key: "Customer", Value: customer},
			{Key: "Quote", Value: strconv.FormatInt(contract.QuoteID, 10)},
			{Key: "Configurator", Value: strconv.Itoa(int(contract.CPQID))},
			{Key: "One-off total (net)", Value: money(contract.Totals.NetActivation)},
			{Key: "Recurring total (net)", Value: money(contract.Totals.NetRecurring)},
		},
		QuoteID:     contract.QuoteID,
		QuoteURL:    quotePath(contract),
		AuditURL:    auditURL(contract.QuoteID),
		PDFURL:      url + "/pdf",
		PreviewURL:  url + "/pdf?inline=1",
		EvidenceURL: url + "/evidence",
		PDF: contracts.PDFInfo{
			FileName: safeFileName(contract.PDF.FileName, contractPDFName(contract)),
			SizeText: formatBytes(contract.PDF.Size),
			SHA256:   contract.PDF.SHA256,
		},
		Signature: signatureVM(contract),
		Archive:   archiveVM(contract),
	}
	return vm
}

// contractPDFName is the download name of a contract's PDF.
func contractPDFName(contract *apiclient.Contract) string {
	return safeFileName("contract-"+contractNumberOf(contract)+".pdf", fmt.Sprintf("contract-%d.pdf", contract.ContractID))
}

// archiveVM builds the archive region.
func archiveVM(contract *apiclient.Contract) contracts.ArchiveVM {
	return contracts.ArchiveVM{
		ContractID: contract.ContractID,
		Number:     contractNumberOf(contract),
		Archived:   isArchived(contract),
		ArchiveID:  string(contract.Archive.ArchiveID),
		ArchivedAt: timeText(contract.Archive.ArchivedAt),
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
	contract, err := h.loadContract(h.apiContext(c), contractID)
	if err != nil {
		h.fail(c, err)
		return
	}
	vm := contractVM(contract)
	h.touchRecent(c, recentContractItem(contract))
	vm.LiveURL = contractPath(contract.ContractID) + "/changes"
	vm.LiveTag = contractChangeTag(contract)
	vm.LiveSince = strconv.FormatInt(h.now().UnixMilli(), 10)
	h.changes.Observe(contractWatchKey(contract.ContractID), vm.LiveTag)
	h.renderPage(c, http.StatusOK, "Contract "+vm.Number, layout.SectionContracts, contracts.ContractPage(vm))
}
