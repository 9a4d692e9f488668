package handlers

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/recent"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/contracts"
	"github.com/cpqportal/portal/web/templates/layout"
)

// contractSearchVM is the search form with the user's query.
func contractSearchVM(tr *i18n.Translator, query string) contracts.ContractSearchVM {
	return contracts.ContractSearchVM{Query: components.Field{
		ID: "contract-query", Name: "q", Label: tr.T("contracts.field.query"), Type: "search", Value: strings.ToValidUTF8(query, "\uFFFD"),
		Hint:  tr.T("contracts.field.query_hint"),
		Attrs: map[string]any{"data-search": true, "autocomplete": "off", "data-testid": "contract-query"},
	}}
}

// showContractSearch answers GET /contracts: the search box.
func (h *Handler) showContractSearch(c *gin.Context) {
	vm := contractSearchVM(tr(c), "")
	vm.CanBatchArchive = h.may(c, toolBatchArchive)
	vm.Recent = h.recentRows(c, h.recentItems(c, recent.KindContract))
	h.renderPage(c, http.StatusOK, t(c, "contracts.search.title"), layout.SectionContracts, contracts.ContractSearchPage(vm))
}

// lookupContract answers GET /contracts/lookup?q=: the query is an id, a contract number, or both.
// When it is all digits and fits an int32, the contract with that id is tried, then the contract
// with that number; one match goes straight to its page, two (the id of one contract and the number
// of another) are both offered. The number travels in the query string, never in the portal's own
// path, and the API client escapes it as exactly one path segment upstream.
func (h *Handler) lookupContract(c *gin.Context) {
	query := strings.TrimSpace(c.Query("q"))
	vm := contractSearchVM(tr(c), query)
	vm.CanBatchArchive = h.may(c, toolBatchArchive)
	if problem := contractQueryProblem(query); !problem.IsZero() {
		vm.Query.Error = problem.In(tr(c))
		vm.Errors = components.SummaryFrom(vm.Query)
		h.renderPage(c, http.StatusBadRequest, t(c, "contracts.search.title"), layout.SectionContracts, contracts.ContractSearchPage(vm))
		return
	}
	ctx := h.apiContext(c)
	var found []contracts.ContractCandidate
	if id, err := parseID(query, "id", math.MaxInt32); err == nil {
		contract, err := h.api.Contracts.Get(ctx, int32(id))
		switch {
		case err == nil:
			found = append(found, candidateOf(tr(c), contract, "id"))
		case !errors.Is(err, apiclient.ErrNotFound):
			h.fail(c, fmt.Errorf("contracts: look up id %d: %w", id, err))
			return
		}
	}
	contract, err := h.api.Contracts.GetByNumber(ctx, query)
	switch {
	case err == nil:
		if len(found) == 0 || found[0].ID != contract.ContractID {
			found = append(found, candidateOf(tr(c), contract, "contract number"))
		}
	case errors.Is(err, apiclient.ErrBadRequest):
		// The service refuses this text as a contract number (e.g. too long for it): no contract has it.
		h.log(c).Info("contract number refused by the v2 API", slog.Any("err", err))
	case !errors.Is(err, apiclient.ErrNotFound):
		h.fail(c, fmt.Errorf("contracts: look up a contract number: %w", err))
		return
	}
	if len(found) == 1 {
		c.Redirect(http.StatusSeeOther, found[0].URL)
		return
	}
	vm.Searched = true
	vm.Candidates = found
	status := http.StatusOK
	if len(found) == 0 {
		status = http.StatusNotFound
	}
	h.renderPage(c, status, t(c, "contracts.search.title"), layout.SectionContracts, contracts.ContractSearchPage(vm))
}

// contractQueryProblem checks the search text before any v2 call: present, a plausible length, no
// control characters, and not "." or ".." (which no path segment can carry). It returns the
// message for the user (translated by the form), or the zero Message when the text may be looked up.
func contractQueryProblem(query string) i18n.Message {
	if query == "" {
		return i18n.M("contracts.error.query_empty")
	}
	if query == "." || query == ".." {
		return i18n.M("contracts.error.query_dots", query)
	}
	var bad *badRequestError
	if err := validateContractNumber(query); errors.As(err, &bad) {
		return bad.msg
	}
	return i18n.Message{}
}

func candidateOf(tr *i18n.Translator, contract *apiclient.Contract, matchedBy string) contracts.ContractCandidate {
	customer := contract.Customer.Name
	if customer == "" {
		customer = tr.T("contract.customer_fallback", strconv.Itoa(int(contract.CustomerID)))
	}
	return contracts.ContractCandidate{
		MatchedBy: matchedBy,
		ID:        contract.ContractID,
		Number:    contract.ContractNumber,
		Status:    contract.Status,
		Customer:  customer,
		URL:       contractPath(contract.ContractID),
	}
}
