package handlers

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/handover"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/jobs"
	"github.com/cpqportal/portal/web/templates/backoffice"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/layout"
)

// Hand customers over (issue 34, docs/backoffice.md "Hand customers over"): GET /customers/handover
// chooses the owner (among the owners the v2 API reports in the user's customer list) and shows
// the customers they own, as the user's token lists them; POST stores the handover to the chosen
// new owner as a draft job (internal/handover, one line per customer), whose page previews it;
// starting it runs it on the job engine (internal/jobs) like a batch archive.

// maxHandoverCustomersShown bounds the customers the first page lists (the preview lists them
// all, up to maxBatchRowsShown, and the CSV every line).
const maxHandoverCustomersShown = 500

// handoverOwners are the owners named in the user's customer list, by id, as select options.
func (h *Handler) handoverOwners(c *gin.Context) ([]components.Option, map[int64]string, error) {
	snap, err := h.customers.Get(h.apiContext(c), customerCacheKey(c))
	if err != nil {
		return nil, nil, fmt.Errorf("handover: the customer list: %w", err)
	}
	names := map[int64]string{}
	var options []components.Option
	for _, o := range snap.Owners() {
		label := ownerChoiceLabel(o.ID, o.Name, o.Email)
		names[o.ID] = label
		options = append(options, components.Option{Value: strconv.FormatInt(o.ID, 10), Label: label})
	}
	return options, names, nil
}

// handoverOwnerEmail is owner id's e-mail address as the user's customer list names them ("" when
// it names none): the new owner's inbox is found by it when the handover ends (handover.NewOwner).
func (h *Handler) handoverOwnerEmail(c *gin.Context, id int64) string {
	snap, err := h.customers.Get(h.apiContext(c), customerCacheKey(c))
	if err != nil {
		return ""
	}
	for _, o := range snap.Owners() {
		if o.ID == id {
			return o.Email
		}
	}
	return ""
}

// ownerChoiceLabel names an owner as the v2 API reports them: their name, else their e-mail, with the id.
func ownerChoiceLabel(id int64, name, email string) string {
	idText := strconv.FormatInt(id, 10)
	switch {
	case name != "":
		return name + " (" + idText + ")"
	case email != "":
		return email + " (" + idText + ")"
	}
	return idText
}

// ownerName is the label of owner id, or the id alone when the list does not name them.
func ownerName(names map[int64]string, id int64) string {
	if n, ok := names[id]; ok {
		return n
	}
	return strconv.FormatInt(id, 10)
}

func handoverNewVM(tr *i18n.Translator, options []components.Option, from, to string) backoffice.HandoverNewVM {
	vm := backoffice.HandoverNewVM{
		From: components.Field{ID: "handover-from", Name: "from", Label: tr.T("handover.field.from"), Value: from,
			Hint: tr.T("handover.field.from_hint"), Attrs: map[string]any{"data-testid": "handover-from"}},
		To: components.Field{ID: "handover-to", Name: "to", Label: tr.T("handover.field.to"), Value: to,
			Hint: tr.T("handover.field.to_hint"), Attrs: map[string]any{"data-testid": "handover-to"}},
	}
	vm.FromOptions = append([]components.Option{{Value: "", Label: tr.T("handover.field.choose")}}, options...)
	vm.ToOptions = []components.Option{{Value: "", Label: tr.T("handover.field.choose")}}
	for _, o := range options {
		if o.Value != from {
			vm.ToOptions = append(vm.ToOptions, o)
		}
	}
	if len(options) == 0 {
		vm.FromOptions = nil
	}
	return vm
}

// parseOwnerField reads an owner chosen in a select: a positive id that is among the owners
// listed (a value the page did not offer is a 4xx with a message, never sent upstream).
func parseOwnerField(raw string, names map[int64]string) (int64, bool) {
	id, err := parseID(strings.TrimSpace(raw), "owner", math.MaxInt64)
	if err != nil {
		return 0, false
	}
	_, known := names[id]
	return id, known
}

// ownedCustomers lists the customers owner owns, as the user's token lists them (GET
// /v2/customer/, streamed), at most limit of them; total counts them all. Those newOwner owns as
// well are marked (0: no new owner chosen yet).
func (h *Handler) ownedCustomers(c *gin.Context, owner, newOwner int64, limit int) (rows []backoffice.HandoverCustomer, total int, err error) {
	_, _, err = h.api.Customers.ListItems(h.apiContext(c), "", func(it *apiclient.CustomerListItem) error {
		owned, alsoNew := false, false
		var owners []string
		for _, o := range it.Owners {
			owned = owned || o.OwnerID == owner
			alsoNew = alsoNew || (newOwner != 0 && o.OwnerID == newOwner)
			owners = append(owners, ownerChoiceLabel(o.OwnerID, string(o.Name), string(o.Email)))
		}
		if !owned {
			return nil
		}
		total++
		if len(rows) < limit {
			id := strconv.FormatInt(int64(it.ID), 10)
			rows = append(rows, backoffice.HandoverCustomer{ID: id, URL: customerHref(it.ID), Name: string(it.Name),
				City: string(it.City), Owners: strings.Join(owners, ", "), AlsoNew: alsoNew})
		}
		return nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("handover: list the customers of owner %d: %w", owner, err)
	}
	return rows, total, nil
}

// showHandoverNew answers GET /customers/handover[?from=<owner id>].
func (h *Handler) showHandoverNew(c *gin.Context) {
	if h.jobs == nil {
		h.fail(c, errJobsOff)
		return
	}
	options, names, err := h.handoverOwners(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	from := c.Query("from")
	vm := handoverNewVM(tr(c), options, from, "")
	status := http.StatusOK
	if from != "" {
		owner, known := parseOwnerField(from, names)
		if !known {
			vm.From.Error = t(c, "handover.error.from_unknown")
			vm.Errors = components.SummaryFrom(vm.From)
			status = http.StatusUnprocessableEntity
		} else {
			vm.Chosen, vm.FromName = true, ownerName(names, owner)
			if vm.Customers, vm.Total, err = h.ownedCustomers(c, owner, 0, maxHandoverCustomersShown); err != nil {
				h.fail(c, err)
				return
			}
		}
	}
	h.renderHandoverNew(c, status, vm)
}

func (h *Handler) renderHandoverNew(c *gin.Context, status int, vm backoffice.HandoverNewVM) {
	list, err := h.jobs.OverviewKind(c.Request.Context(), jobs.KindHandover, auth.CurrentUser(c).Subject)
	if err != nil {
		h.log(c).Warn("handover: listing the user's handovers failed", "err", err)
	}
	for _, j := range list {
		if j.Status == jobs.StatusDraft {
			continue
		}
		counts := j.Counts()
		vm.Handovers = append(vm.Handovers, backoffice.BatchSummary{URL: handoverPath(j.ID), Created: j.CreatedAt,
			Status: batchStatusText(tr(c), j), Counts: t(c, "batch.list.counts", counts.Done, counts.Failed, counts.Left, counts.Total)})
	}
	h.renderPage(c, status, t(c, "handover.title"), layout.SectionCustomers, backoffice.HandoverNewPage(vm))
}

func handoverPath(id string) string { return "/customers/handover/" + id }

// createHandover answers POST /customers/handover (from, to): the customers from owns now become
// a draft handover to to, and the browser goes to its preview.
func (h *Handler) createHandover(c *gin.Context) {
	if h.jobs == nil {
		h.fail(c, errJobsOff)
		return
	}
	if err := c.Request.ParseForm(); err != nil {
		h.fail(c, err)
		return
	}
	options, names, err := h.handoverOwners(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	rawFrom, rawTo := c.Request.PostForm.Get("from"), c.Request.PostForm.Get("to")
	vm := handoverNewVM(tr(c), options, rawFrom, rawTo)
	from, fromKnown := parseOwnerField(rawFrom, names)
	to, toKnown := parseOwnerField(rawTo, names)
	switch {
	case !fromKnown:
		vm.From.Error = t(c, "handover.error.from_unknown")
	case rawTo == "":
		vm.To.Error = t(c, "handover.error.to_required")
	case !toKnown:
		vm.To.Error = t(c, "handover.error.to_unknown")
	case to == from:
		vm.To.Error = t(c, "handover.error.same")
	}
	if fromKnown {
		vm.Chosen, vm.FromName = true, ownerName(names, from)
	}
	var owned []backoffice.HandoverCustomer
	if fromKnown {
		if owned, vm.Total, err = h.ownedCustomers(c, from, to, handover.MaxCustomers+1); err != nil {
			h.fail(c, err)
			return
		}
		vm.Customers = owned[:min(len(owned), maxHandoverCustomersShown)]
	}
	if vm.From.Error == "" && vm.To.Error == "" {
		switch {
		case vm.Total == 0:
			vm.From.Error = t(c, "handover.error.no_customers")
		case vm.Total > handover.MaxCustomers:
			vm.From.Error = t(c, "handover.error.too_many", handover.MaxCustomers, vm.Total)
		}
	}
	if vm.From.Error != "" || vm.To.Error != "" {
		vm.Errors = components.SummaryFrom(vm.From, vm.To)
		h.renderHandoverNew(c, http.StatusUnprocessableEntity, vm)
		return
	}
	items := make([]jobs.Item, 0, len(owned))
	toEmail := h.handoverOwnerEmail(c, to)
	for i, cust := range owned {
		id, _ := strconv.ParseInt(cust.ID, 10, 32)
		// A customer the new owner owns already loses the old owner instead (handover.Line.Release).
		it, err := handover.Item(i, handover.Line{CustomerID: int32(id), From: from, To: to, Release: cust.AlsoNew, ToEmail: toEmail}, cust.Name)
		if err != nil {
			h.fail(c, err)
			return
		}
		items = append(items, it)
	}
	u := auth.CurrentUser(c)
	job, err := h.jobs.CreateKind(c.Request.Context(), jobs.KindHandover, u.Subject, u.Name, items)
	if errors.Is(err, jobs.ErrNothingToArchive) {
		vm.To.Error = t(c, "handover.error.all_owned")
		vm.Errors = components.SummaryFrom(vm.From, vm.To)
		h.renderHandoverNew(c, http.StatusUnprocessableEntity, vm)
		return
	}
	if err != nil {
		var quota *jobs.QuotaError
		if errors.As(err, &quota) {
			vm.Errors = []components.FieldError{{Message: quota.Message.In(tr(c))}}
			h.renderHandoverNew(c, http.StatusTooManyRequests, vm)
			return
		}
		h.fail(c, err)
		return
	}
	h.log(c).Info("handover drafted", "job", job.ID, "customers", len(items), "from", from, "to", to)
	c.Redirect(http.StatusSeeOther, handoverPath(job.ID))
}
