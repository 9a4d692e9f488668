package handlers

import (
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/quotes"
)

// Packages of a quote: the package configuration of the quote and a TOF (call 14), and adding a
// package (call 15) assigned to one of the customer's owners (the first one unless the user
// chooses another: docs/quotes.md).

const packageForm = "quote-package-form"

// showPackages is GET .../packages?tofId=: the packages offered for the TOF, those on the quote
// marked, and the form to add one. The owners come from the customer, the customer's reference
// from the quote (call 10), both fetched alongside call 14.
func (h *Handler) showPackages(c *gin.Context) {
	a, ok := h.beginQuoteAction(c)
	if !ok {
		return
	}
	tofID, err := queryID32(c, "tofId")
	if err != nil {
		h.fail(c, err)
		return
	}
	sessionID, ok := h.actionSession(c, a)
	if !ok {
		return
	}
	ctx := h.apiContext(c)
	var (
		wg          sync.WaitGroup
		customer    *apiclient.Customer
		customerErr error
		q           *apiclient.Quote
		quoteErr    error
	)
	wg.Go(func() { customer, customerErr = h.api.Customers.Get(ctx, a.ref.CustomerID) })
	wg.Go(func() { q, quoteErr = h.api.CPQ.TOFList(ctx, a.ref.CPQID, a.ref.CustomerID, a.ref.QuoteID) })
	config, err := h.api.CPQ.PackageConfig(ctx, sessionID, a.ref.CPQID, tofID, a.ref.QuoteID)
	wg.Wait()
	switch {
	case err != nil:
		h.failCPQ(c, a.key, quoteAlert(a.ref), "", nil, fmt.Errorf("packages of TOF %d for quote %d: %w", tofID, a.ref.QuoteID, err))
		return
	case quoteErr != nil:
		h.fail(c, fmt.Errorf("get quote %d: %w", a.ref.QuoteID, quoteErr))
		return
	case customerErr != nil:
		h.fail(c, fmt.Errorf("get customer %d (owners): %w", a.ref.CustomerID, customerErr))
		return
	}
	vm := quotes.PackagesVM{Ref: a.ref, TOF: quotes.TOF{ID: tofID, Name: t(c, "quote.tof.numbered_lower", idText(tofID))},
		CustomerQuoteID: q.CustomerQuoteID}
	if name := tofNameOf(c); name != "" {
		vm.TOF.Name = name
	}
	for _, p := range config.Packages {
		vm.Packages = append(vm.Packages, quotes.PackageOffer{PackageID: p.PackageID, Name: p.Name, Description: p.Description,
			Recurring: cents(p.RecurringPrice), Assigned: config.IsAssigned(p.PackageID)})
	}
	for i, o := range customer.Owners {
		value := strconv.FormatInt(o.OwnerID, 10)
		label := o.Name
		if label == "" {
			label = t(c, "quote.user.numbered", value)
		}
		vm.Owners = append(vm.Owners, components.Option{Value: value, Label: label + " (" + value + ")"})
		if i == 0 {
			vm.DefaultOwner = value
		}
	}
	h.render(c, http.StatusOK, quotes.PackagesPanel(vm))
}

// addPackage is POST .../packages (packageId, tofId, assigneeUserId, customerQuoteId): call 15.
func (h *Handler) addPackage(c *gin.Context) {
	a, ok := h.beginQuoteAction(c)
	if !ok {
		return
	}
	var errs formErrors
	packageID, okPackage := formID32(formValue(c, "packageId"))
	if !okPackage {
		errs.add(packageForm, t(c, "quote.form.package"))
	}
	assignee, okAssignee := formID(formValue(c, "assigneeUserId"), math.MaxInt64)
	if !okAssignee {
		errs.add("quote-package-assignee", t(c, "quote.form.assignee"))
	}
	tofID, okTOF := formID32(formValue(c, "tofId"))
	var reference int64
	raw := formValue(c, "customerQuoteId")
	okReference := raw == "" || digitsOnly.MatchString(raw)
	if okReference && raw != "" {
		var err error
		reference, err = strconv.ParseInt(raw, 10, 64)
		okReference = err == nil
	}
	if !okTOF || !okReference {
		errs.add(packageForm, t(c, "quote.form.incomplete"))
	}
	if len(errs) > 0 {
		h.badForm(c, packageForm, errs)
		return
	}
	sessionID, ok := h.actionSession(c, a)
	if !ok {
		return
	}
	q, err := h.api.CPQ.AddPackage(h.apiContext(c), sessionID, a.ref.CPQID, apiclient.AddPackageRequest{
		CustomerID: a.ref.CustomerID, CustomerQuoteID: reference, PackageID: packageID, TOFID: tofID,
		QuoteID: a.ref.QuoteID, AssigneeUserID: assignee,
	})
	if err != nil {
		h.failCPQ(c, a.key, quoteAlert(a.ref), packageForm, map[string]string{"assigneeUserId": "quote-package-assignee"},
			fmt.Errorf("add package %d to quote %d: %w", packageID, a.ref.QuoteID, err))
		return
	}
	name := t(c, "quote.package.numbered", idText(packageID))
	for _, p := range q.Packages {
		if p.PackageID == packageID && p.Name != "" {
			name = p.Name
		}
	}
	h.log(c).Info("package added", slog.Int("package_id", int(packageID)), slog.Int64("assignee", assignee))
	vm := newQuoteView(tr(c), a.ref, q, a.prev).update()
	vm.SummaryOnly = true
	vm.Summary.Focus = true // the package form is gone
	vm.ClearPanel = "quote-packages-panel"
	h.respondUpdate(c, q, vm, t(c, "quote.toast.added", name))
}
