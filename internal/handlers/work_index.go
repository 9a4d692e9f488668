package handlers

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"sync"

	"github.com/a-h/templ"
	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/recent"
	"github.com/cpqportal/portal/internal/workindex"
	"github.com/cpqportal/portal/internal/worksight"
	"github.com/cpqportal/portal/web/templates/contracts"
	"github.com/cpqportal/portal/web/templates/quotes"
	"github.com/cpqportal/portal/web/templates/work"
)

// The work index (internal/workindex, docs/work-index.md): every v2 answer that carries a quote or
// a contract is recorded here, after the answer and before the page is rendered, with one call.
// Recording never fails an action: a store problem is logged and the action answers as usual
// (the next sighting catches up).

// viewer is the signed-in user as the work index knows them; Team when one of their roles is in
// PORTAL_TEAM_ROLES.
func (h *Handler) viewer(c *gin.Context) workindex.Viewer {
	user := auth.CurrentUser(c)
	return workindex.Viewer{Subject: user.Subject, Name: user.Name, Team: hasAnyRole(auth.CurrentRoles(c), h.cfg.TeamRoles)}
}

// isBackoffice: the user's start page is the contracts list (PORTAL_BACKOFFICE_ROLES).
func (h *Handler) isBackoffice(c *gin.Context) bool {
	return hasAnyRole(auth.CurrentRoles(c), h.cfg.BackofficeRoles)
}

func hasAnyRole(roles, wanted []string) bool {
	for _, r := range roles {
		if slices.Contains(wanted, r) {
			return true
		}
	}
	return false
}

// quoteSighting is what a quote document says, for the index.
func quoteSighting(cpqID, customerID int32, q *apiclient.Quote, customerName, cpqName string) workindex.QuoteSighting {
	s := workindex.QuoteSighting{
		QuoteID: q.QuoteID, CPQID: cpqID, CustomerID: customerID, Customer: customerName, Configurator: cpqName,
		OneOffCents: cents(q.Totals.NetActivation), MonthlyCents: cents(q.Totals.NetRecurring), UpdatedAt: q.UpdatedAt,
	}
	if q.Contract != nil {
		s.ContractID, s.ContractNumber = q.Contract.ContractID, q.Contract.ContractNumber
	}
	return s
}

// contractFacts are the parts of a contract document the stage rules read (internal/worksight).
func contractFacts(contract *apiclient.Contract) workindex.ContractFacts {
	return worksight.ContractFacts(contract)
}

// contractSighting is what a contract document says, for the index (internal/worksight).
func contractSighting(contract *apiclient.Contract) workindex.ContractSighting {
	return worksight.Contract(contract)
}

// indexQuote records a quote document the user saw or changed.
func (h *Handler) indexQuote(c *gin.Context, cpqID, customerID int32, q *apiclient.Quote, customerName, cpqName string, act workindex.Act) {
	if h.work == nil || q == nil || q.QuoteID < 1 {
		return
	}
	if err := h.work.ObserveQuote(c.Request.Context(), h.viewer(c), quoteSighting(cpqID, customerID, q, customerName, cpqName), act); err != nil {
		h.log(c).Warn("work index: quote not recorded", slog.Int64("quote_id", q.QuoteID), slog.Any("err", err))
	}
}

// indexContract records a contract document the user saw or changed.
func (h *Handler) indexContract(c *gin.Context, contract *apiclient.Contract, act workindex.Act) {
	if h.work == nil || contract == nil || contract.ContractID < 1 {
		return
	}
	// A signer's answer this read learns reaches the inboxes through the index's OnAnswer.
	if err := h.work.ObserveContract(c.Request.Context(), h.viewer(c), contractSighting(contract), act); err != nil {
		h.log(c).Warn("work index: contract not recorded", slog.Int("contract_id", int(contract.ContractID)), slog.Any("err", err))
	}
}

// forgetForViewer takes a row out of the user's lists when the v2 API answered 403 or 404 for it,
// read with their token; it reports whether err was such an answer.
func (h *Handler) forgetForViewer(ctx context.Context, c *gin.Context, v workindex.Viewer, kind workindex.Kind, id int64, err error) bool {
	if !errors.Is(err, apiclient.ErrNotFound) && !errors.Is(err, apiclient.ErrForbidden) {
		return false
	}
	if h.work != nil {
		if ferr := h.work.Forget(ctx, v, kind, id); ferr != nil {
			h.log(c).Warn("work index: row not forgotten", slog.String("kind", string(kind)), slog.Int64("id", id), slog.Any("err", ferr))
		}
	}
	// Their recent items leave it too: the quote start, the lists' "recent" and the worklist's
	// pick list name it no more.
	if h.recent != nil && v.Subject != "" {
		if ferr := h.recent.Forget(ctx, v.Subject, recent.Kind(kind), id); ferr != nil {
			h.log(c).Warn("recent items: item not forgotten", slog.String("kind", string(kind)), slog.Int64("id", id), slog.Any("err", ferr))
		}
	}
	return true
}

// forgetRefusedCustomer: the v2 API refused the person a customer (403). Their cached customer
// list is read again before it is shown or searched (it named the customer), and their recent
// items of its quotes and contracts leave (docs/work-index.md "Visibility rule").
func (h *Handler) forgetRefusedCustomer(c *gin.Context, customerID int32) {
	h.customers.Invalidate(customerCacheKey(c))
	// The configuration sessions of its quotes too: the palette lists them as recent quotes.
	if s := auth.CurrentSession(c); s != nil {
		forgot := false
		for _, e := range slices.Clone(s.CPQ) {
			if e.Key.CustomerID == customerID {
				s.DeleteCPQSession(e.Key)
				forgot = true
			}
		}
		if forgot {
			if err := h.saveUserSession(c); err != nil {
				h.log(c).Warn("forgetting a refused customer's configuration sessions failed", slog.Any("err", err))
			}
		}
	}
	if subject := auth.CurrentUser(c).Subject; h.recent != nil && subject != "" {
		if err := h.recent.ForgetCustomer(c.Request.Context(), subject, customerID); err != nil {
			h.log(c).Warn("recent items: customer's items not forgotten", slog.Int("customer_id", int(customerID)), slog.Any("err", err))
		}
	}
}

// maxStaleRereads bounds the rows one page re-reads from the v2 API (the unchecked rows it checks
// and the stale rows it shows, together); staleRereadWorkers how many at a time (the page never
// sends more than this many v2 calls at once).
const (
	maxStaleRereads    = 25
	staleRereadWorkers = 4
)

// reread reads rows again with the viewer's own token, staleRereadWorkers at a time, and records
// each answer in the work index (ActRefreshed: the viewer's read of the row as it stands now). A
// row the v2 API answers 403 or 404 for is forgotten for the viewer at once (gone); read says
// which rows were read.
func (h *Handler) reread(c *gin.Context, rows []workindex.Row) (read, gone []bool) {
	read, gone = make([]bool, len(rows)), make([]bool, len(rows))
	if h.work == nil || len(rows) == 0 {
		return read, gone
	}
	ctx := h.apiContext(c)
	v := h.viewer(c)
	sem := make(chan struct{}, staleRereadWorkers)
	var wg sync.WaitGroup
	for i, r := range rows {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			switch r.Kind {
			case workindex.KindContract:
				contract, err := h.api.Contracts.Get(ctx, r.ContractID)
				if err != nil {
					gone[i] = h.forgetForViewer(ctx, c, v, r.Kind, r.ID(), err)
					return
				}
				if err := h.work.ObserveContract(ctx, v, contractSighting(contract), workindex.ActRefreshed); err != nil {
					h.log(c).Warn("work index: contract not refreshed", slog.Any("err", err))
					return
				}
			case workindex.KindQuote:
				q, err := h.api.CPQ.TOFList(ctx, r.CPQID, r.CustomerID, r.QuoteID)
				if err != nil {
					gone[i] = h.forgetForViewer(ctx, c, v, r.Kind, r.ID(), err)
					return
				}
				if err := h.work.ObserveQuote(ctx, v, quoteSighting(r.CPQID, r.CustomerID, q, "", ""), workindex.ActRefreshed); err != nil {
					h.log(c).Warn("work index: quote not refreshed", slog.Any("err", err))
					return
				}
			}
			read[i] = true
		})
	}
	wg.Wait()
	return read, gone
}

// checkUnchecked re-reads with the viewer's token up to budget of the rows of kind in scope they
// may list but that are not revealed to them (workindex.Unchecked: never read, changed by
// someone's read since), those the index last saw in one of prefer first; it returns how many
// v2 reads it sent. A page calls it before it reads its rows from the index, so what the
// viewer's token answers is shown on the first visit, and a refused row is forgotten.
func (h *Handler) checkUnchecked(c *gin.Context, kind workindex.Kind, scope workindex.Scope, prefer []workindex.Stage, budget int) int {
	if h.work == nil || budget <= 0 {
		return 0
	}
	ctx := c.Request.Context()
	v := h.viewer(c)
	// Counted first (a few small rows for a team or My quotes): when every row is revealed, no
	// search for unchecked rows reads the rows.
	if u, err := h.work.Unchecked(ctx, v, kind, scope, 0); err == nil && u.Count == 0 {
		return 0
	}
	rows, err := h.work.UncheckedIn(ctx, v, kind, scope, prefer, budget)
	if err != nil {
		h.log(c).Warn("work index: unchecked rows unavailable", slog.Any("err", err))
		return 0
	}
	if len(rows) < budget {
		u, err := h.work.Unchecked(ctx, v, kind, scope, budget)
		if err != nil {
			h.log(c).Warn("work index: unchecked rows unavailable", slog.Any("err", err))
		}
		have := make(map[int64]bool, len(rows))
		for _, r := range rows {
			have[r.ID()] = true
		}
		for _, r := range u.Rows {
			if len(rows) < budget && !have[r.ID()] {
				rows = append(rows, r)
			}
		}
	}
	h.reread(c, rows)
	return len(rows)
}

// uncheckedCount is how many rows of kind in scope the viewer may list but are not revealed to
// them, in words with no stage, value or filter ("" when none, or when it cannot be read).
func (h *Handler) uncheckedCount(c *gin.Context, kinds []workindex.Kind, scope workindex.Scope) string {
	if h.work == nil {
		return ""
	}
	n, capped := 0, false
	for _, kind := range kinds {
		u, err := h.work.Unchecked(c.Request.Context(), h.viewer(c), kind, scope, 0)
		if err != nil {
			h.log(c).Warn("work index: unchecked rows unavailable", slog.Any("err", err))
			return ""
		}
		n += u.Count
		capped = capped || u.Capped
	}
	return uncheckedText(tr(c), n, capped)
}

// uncheckedText is "N not checked yet" ("" for none).
func uncheckedText(trl *i18n.Translator, n int, capped bool) string {
	switch {
	case n == 0:
		return ""
	case capped:
		return trl.T("work.unchecked_count.more", trl.Integer(int64(n)))
	}
	return trl.Plural(n, "work.unchecked_count.one", "work.unchecked_count.other")
}

// refreshRows keeps a page's rows as fresh as its budget allows. The rows come from the work
// index, so every one is revealed to the viewer (docs/work-index.md "Visibility rule": their own
// token read it as it stands); those their token has not read within PORTAL_WORK_STALE_AFTER (all
// of them when force: the list's "Refresh") are re-read in parallel, at most budget. A row the v2
// API answers 403 or 404 for is forgotten for the viewer and leaves the page; the others are
// updated in place. A row that could not be re-read keeps what the viewer's token read, "as of"
// says when.
func (h *Handler) refreshRows(c *gin.Context, rows []workindex.Row, force bool, budget int) []workRow {
	out := make([]workRow, len(rows))
	for i, r := range rows {
		out[i] = workRow{Row: r, unchecked: !r.Revealed()}
	}
	if h.work == nil {
		return out
	}
	now := h.now()
	var stale []int
	var again []workindex.Row
	for i, r := range rows {
		if len(stale) == budget {
			break
		}
		if force || now.Sub(r.ViewerSeenAt) > h.cfg.WorkStaleAfter {
			stale = append(stale, i)
			again = append(again, r)
		}
	}
	if len(stale) == 0 {
		return out
	}
	read, gone := h.reread(c, again)
	ctx, v := c.Request.Context(), h.viewer(c)
	dropped := make([]bool, len(rows))
	for j, i := range stale {
		if gone[j] {
			dropped[i] = true
			continue
		}
		if read[j] {
			if fresh, ok := h.work.Lookup(ctx, v, rows[i].Kind, rows[i].ID()); ok {
				out[i] = workRow{Row: fresh}
			}
		}
	}
	kept := out[:0]
	for i, r := range out {
		if !dropped[i] && !r.unchecked {
			kept = append(kept, r)
		}
	}
	return kept
}

// workRow is a row of a list page with what the visibility rule allows to show of it.
type workRow struct {
	workindex.Row
	// unchecked: not revealed to the viewer (never the case of a row the index lists; kept so a
	// row that is not revealed can never be shown whole by mistake).
	unchecked bool
}

// indexGenerated records a generated contract and its quote. The service answers with the
// contract document or with the PDF alone (docs/v2-assumptions.md A7); after a PDF answer with 201
// the contract is new, so it is recorded as GENERATED with the quote's totals until its page or a
// list reads the document.
func (h *Handler) indexGenerated(c *gin.Context, ref quotes.Ref, quote *apiclient.Quote, result *apiclient.GenerateResult) {
	act := workindex.ActOpened
	if result.Created {
		act = workindex.ActCreated
	}
	// The quote is read beside the generation (issue 27), so it may predate the contract: the
	// answer names it, and the quote's row must not fall back to "draft".
	if (quote.Contract == nil || quote.Contract.ContractID < 1) && result.ContractID > 0 {
		withContract := *quote
		withContract.Contract = &apiclient.ContractRef{ContractID: result.ContractID, ContractNumber: result.ContractNumber}
		quote = &withContract
	}
	switch {
	case result.Contract != nil:
		h.indexContract(c, result.Contract, act)
	case result.Created && result.ContractID > 0:
		h.indexContract(c, &apiclient.Contract{ContractID: result.ContractID, ContractNumber: result.ContractNumber,
			QuoteID: ref.QuoteID, CPQID: ref.CPQID, CustomerID: ref.CustomerID, Status: contractStatusGenerated, Totals: quote.Totals}, act)
	}
	h.indexQuote(c, ref.CPQID, ref.CustomerID, quote, "", "", workindex.ActChanged)
}

// followingRegions are the contract page's status badge, signature region and archive region as
// out-of-band swaps, sent with a live notice: the page follows a colleague's change at once (an
// archived contract loses its signature and archive actions, so no click ends in an error), and
// the notice still offers the reload for the rest.
func (h *Handler) followingRegions(tr *i18n.Translator, contract *apiclient.Contract) templ.Component {
	status := contractStatusVM(tr, contract)
	status.OOB = true
	signature := signatureVM(tr, contract)
	signature.OOB = true
	archive := h.withArchiveProof(archiveVM(tr, contract), contract.ContractNumber)
	archive.OOB = true
	return templ.Join(contracts.StatusBadge(status), contracts.SignaturePartial(signature), contracts.ArchivePartial(archive))
}

// contractBanner is the quote page's banner when the quote has a contract (the quote document's
// contract), with the stage the work index last saw (generated when it has not seen the contract
// yet: workindex.StageOfQuote), the question asked before every change of the quote, and the
// quote's stage (draft without a contract), which the page's badge names the same way.
func (h *Handler) contractBanner(c *gin.Context, q *apiclient.Quote) (templ.Component, string, workindex.Stage) {
	if q.Contract == nil || q.Contract.ContractID < 1 {
		return nil, "", workindex.StageOfQuote(false, "")
	}
	trl := tr(c)
	number := firstNonEmptyString(q.Contract.ContractNumber, "#"+strconv.Itoa(int(q.Contract.ContractID)))
	vm := work.BannerVM{Number: number, Href: contractPath(q.Contract.ContractID)}
	stage := workindex.StageOfQuote(true, "")
	if h.work != nil {
		if row, ok := h.work.Lookup(c.Request.Context(), h.viewer(c), workindex.KindContract, int64(q.Contract.ContractID)); ok {
			stage = workindex.StageOfQuote(true, row.Stage)
			vm.AsOf = row.SeenAt
		}
	}
	vm.StageLabel, vm.StageLevel = stageLabel(trl, stage), stageLevel(stage)
	confirm := "work.banner.confirm.generated"
	vm.Warning = trl.T("work.banner.warning.generated")
	switch stage {
	case workindex.StageSignature:
		confirm, vm.Warning = "work.banner.confirm.signature", trl.T("work.banner.warning.signature")
	case workindex.StageSigned:
		confirm, vm.Warning = "work.banner.confirm.signed", trl.T("work.banner.warning.signed")
	case workindex.StageArchived:
		confirm, vm.Warning, vm.Archived = "work.banner.confirm.archived", trl.T("work.banner.warning.archived"), true
	}
	return work.ContractBanner(vm), trl.T(confirm, number), stage
}

// generateSummary is what "Generate contract" asks to confirm before it creates the legal
// document: the customer (its name as the work index last saw it, else its number), the carts and
// the net totals of the quote document just read.
func (h *Handler) generateSummary(ctx context.Context, trl *i18n.Translator, ref quotes.Ref, quote *apiclient.Quote) string {
	customer := trl.T("worklist.customer_fallback", strconv.Itoa(int(ref.CustomerID)))
	if h.work != nil {
		if row, ok := h.work.Peek(ctx, workindex.KindQuote, ref.QuoteID); ok && row.Customer != "" {
			customer = i18n.Isolate(row.Customer) // a name in a sentence: its direction stays its own
		}
	}
	carts := trl.Plural(len(quote.Carts), "work.generate.carts.one", "work.generate.carts.other")
	return trl.T("work.generate.confirm", strconv.FormatInt(ref.QuoteID, 10), customer, carts,
		trl.Money(cents(quote.Totals.NetActivation), "EUR"), trl.Money(cents(quote.Totals.NetRecurring), "EUR"))
}

// customerWorkRows is how many quotes and contracts the customer page shows (the full lists are
// a link away).
const customerWorkRows = 10

// customerWork is the customer page's section of the customer's quotes and contracts the user
// may see, most recently changed first, stale rows re-read with the user's token.
func (h *Handler) customerWork(c *gin.Context, customerID int32) templ.Component {
	if h.work == nil {
		return nil
	}
	trl := tr(c)
	id := strconv.Itoa(int(customerID))
	vm := work.CustomerWorkVM{QuotesURL: "/work/quotes?scope=all&customer=" + id, ContractsURL: "/work/contracts?customer=" + id}
	v := h.viewer(c)
	names := workNames{configurators: h.configuratorNamesHeld(c), customer: func(id int32) string { return h.customerNameHeld(c, id) }}
	// The section shows neither a count nor a filter: one statement reads both kinds' rows (a full
	// list's count and filter options would be four more).
	quotes, contracts, err := h.work.CustomerWork(c.Request.Context(), v, customerID, customerWorkRows)
	if err != nil {
		h.log(c).Warn("work index: customer's work unavailable", slog.Any("err", err))
		return work.CustomerWork(work.CustomerWorkVM{Unavailable: true})
	}
	for _, r := range h.refreshRows(c, quotes, false, maxStaleRereads) {
		names.nameRow(&r.Row)
		vm.Quotes = append(vm.Quotes, workRowVM(trl, r))
	}
	for _, r := range h.refreshRows(c, contracts, false, maxStaleRereads) {
		names.nameRow(&r.Row)
		vm.Contracts = append(vm.Contracts, workRowVM(trl, r))
	}
	return work.CustomerWork(vm)
}
