package handlers

import (
	"fmt"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
)

// downloadContractPDF answers GET /contracts/:contractId/pdf: the contract's PDF streamed from the
// v2 API (GET /v2/contract/{id} with Accept: application/pdf, docs/v2-assumptions.md A7) as a
// download named contract-<number>.pdf, or with ?inline=1 for the portal's own preview <iframe>
// (Content-Disposition inline and, for this response only, framing by the portal's pages).
func (h *Handler) downloadContractPDF(c *gin.Context) {
	inline := wantsInline(c)
	if inline {
		AllowFramingBySelf(c) // error pages, too, are shown inside the preview frame
	}
	contractID, err := parseInt32ID(c, "contractId")
	if err != nil {
		h.fail(c, err)
		return
	}
	ctx := h.apiContext(c)
	// The contract is read only for the file's name (its number): that read goes beside the
	// download, not before it (issue 27). A contract that cannot be read fails the request
	// before any byte of the PDF is sent.
	contractOf := later(func() (*apiclient.Contract, error) { return h.loadContract(ctx, contractID) })
	defer contractOf() //nolint:errcheck // waited for on every path; the result is read below
	limit := h.newStartLimit(ctx)
	defer limit.release()
	download, err := h.api.Contracts.DownloadPDF(limit.ctx, contractID)
	contract, contractErr := contractOf()
	if contractErr != nil {
		if err == nil {
			_ = download.Close()
		}
		h.fail(c, contractErr)
		return
	}
	if err = limit.started(err); err != nil {
		h.failDocument(c, asPDFError(fmt.Errorf("contracts: PDF of contract %d: %w", contractID, err), "the contract"))
		return
	}
	defer download.Close()
	h.streamPDF(c, download, contractPDFName(tr(c), contract), inline, "the contract")
}

// streamPDF checks that a PDF download starts with %PDF- and streams it to the browser.
func (h *Handler) streamPDF(c *gin.Context, download *apiclient.Download, fileName string, inline bool, what string) {
	body, err := checkPDF(download.Body, what)
	if err != nil {
		h.failDocument(c, err)
		return
	}
	disposition := "attachment"
	if inline {
		disposition = "inline"
	}
	err = h.streamFile(c, fileResponse{
		contentType: "application/pdf",
		length:      download.ContentLength,
		disposition: disposition,
		fileName:    fileName,
		inline:      inline,
	}, body)
	if err != nil {
		h.failDocument(c, errBrokenFile(err))
	}
}
