package handlers

import (
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/workindex"
	"github.com/cpqportal/portal/web/templates/contracts"
)

// confirmArchive answers GET /contracts/:contractId/archive/confirm, the question asked when the
// person clicks "Archive" (app.js, [data-confirm-url]): the contract as the v2 API answers it now
// (its number, customer, status and totals), not as the page rendered it.
func (h *Handler) confirmArchive(c *gin.Context) {
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
	trl := tr(c)
	// Names and the number are the v2's text, isolated in the question: a name ending in U+202E
	// reversed the amounts after it (issue 38).
	customer := i18n.Isolate(contract.Customer.Name)
	if customer == "" {
		customer = trl.T("worklist.customer_fallback", strconv.Itoa(int(contract.CustomerID)))
	}
	totals := trl.T("contracts.recent.total", trl.Money(cents(contract.Totals.NetActivation), "EUR"), trl.Money(cents(contract.Totals.NetRecurring), "EUR"))
	number := firstNonEmptyString(i18n.Isolate(contract.ContractNumber), "#"+strconv.Itoa(int(contractID)))
	// A contract that is not signed is archived only when the person says so knowing its stage
	// (issue 32): the question names it. The v2 API stays the judge of whether it may be archived.
	if stage := workindex.StageOfContract(contractFacts(contract)); stage != workindex.StageSigned && stage != workindex.StageArchived {
		answerConfirmation(c, confirmation{Question: trl.T("archive.confirm_unsigned", number, customer, stageLabel(trl, stage), totals)})
		return
	}
	answerConfirmation(c, confirmation{
		Question: trl.T("archive.confirm", number, customer, contracts.StatusLabel(trl, contract.Status), totals),
	})
}

// confirmRemoveSignatureRequest answers GET /contracts/:contractId/signature/confirm, the question
// asked when the person clicks "Remove the request": the request waiting now (a colleague may have
// replaced or removed the one the page shows), or, when none is waiting, that there is nothing to
// remove (refused: nothing is sent).
func (h *Handler) confirmRemoveSignatureRequest(c *gin.Context) {
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
	active, ok := contract.ActiveSignatureRequest()
	if !ok {
		answerConfirmation(c, confirmation{Question: t(c, "signature.remove.gone"), Refused: true})
		return
	}
	answerConfirmation(c, confirmation{Question: t(c, "signature.remove.confirm", active.Email)})
}
