package handlers

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/web/templates/customers"
)

// The customer page's confirmations (issue 33): replacing an owner, replacing all owners and
// deleting a profile take something away that the portal cannot give back, so the question is
// read when the person acts (app.js, [data-confirm-url], with the form's fields), from the
// customer as the v2 API answers it now: a colleague may have changed the owners or deleted the
// profile in another tab since the page was rendered.

// confirmChangeOwner answers GET /customers/:customerId/owners/change/confirm?currentOwnerId=&newOwnerId=.
func (h *Handler) confirmChangeOwner(c *gin.Context) {
	customerID, err := parseInt32ID(c, "customerId")
	if err != nil {
		h.fail(c, err)
		return
	}
	currentOwnerID, err := parseID(strings.TrimSpace(c.Query("currentOwnerId")), "currentOwnerId", math.MaxInt64)
	if err != nil {
		h.fail(c, badRequest("customer.error.owner_missing"))
		return
	}
	cust, err := h.api.Customers.Get(h.apiContext(c), customerID)
	if err != nil {
		h.fail(c, err)
		return
	}
	newOwnerID, problem := parseOwnerID(strings.TrimSpace(c.Query("newOwnerId")))
	if !problem.IsZero() || newOwnerID == currentOwnerID {
		// What was typed is refused by the change itself, next to the field: nothing to ask.
		answerConfirmation(c, confirmation{Unasked: true})
		return
	}
	trl := tr(c)
	current := strconv.FormatInt(currentOwnerID, 10)
	i := slices.IndexFunc(cust.Owners, func(o apiclient.Owner) bool { return o.OwnerID == currentOwnerID })
	if i < 0 {
		answerConfirmation(c, confirmation{
			Question: trl.T("customer.owners.change_gone", current, i18n.Isolate(cust.Name), ownersNow(trl, cust.Owners)),
			Refused:  true,
		})
		return
	}
	answerConfirmation(c, confirmation{
		Question: trl.T("customer.owners.change_confirm", ownerLabel(cust.Owners[i]), ownerNamed(cust.Owners, newOwnerID), i18n.Isolate(cust.Name), ownersNow(trl, cust.Owners)),
	})
}

// confirmReplaceOwners answers GET /customers/:customerId/owners/confirm?ownerIds=.
func (h *Handler) confirmReplaceOwners(c *gin.Context) {
	customerID, err := parseInt32ID(c, "customerId")
	if err != nil {
		h.fail(c, err)
		return
	}
	// The customer first: a customer that cannot be read now is said so, whatever was typed.
	cust, err := h.api.Customers.Get(h.apiContext(c), customerID)
	if err != nil {
		h.fail(c, err)
		return
	}
	ids, problem := parseOwnerIDList(strings.TrimSpace(c.Query("ownerIds")))
	if !problem.IsZero() {
		answerConfirmation(c, confirmation{Unasked: true})
		return
	}
	trl := tr(c)
	typed := make([]string, 0, len(ids))
	for _, id := range ids {
		typed = append(typed, ownerNamed(cust.Owners, id))
	}
	answerConfirmation(c, confirmation{
		Question: trl.T("customer.owners.replace_confirm", i18n.Isolate(cust.Name), strings.Join(typed, ", "), ownersNow(trl, cust.Owners)),
	})
}

// confirmDeleteProfile answers GET /customers/:customerId/profiles/:profileId/delete/confirm: the
// profile as it is now, or, when it is gone, that there is nothing to delete (refused).
func (h *Handler) confirmDeleteProfile(c *gin.Context) {
	customerID, err := parseInt32ID(c, "customerId")
	if err != nil {
		h.fail(c, err)
		return
	}
	profileID, err := parseInt32ID(c, "profileId")
	if err != nil {
		h.fail(c, err)
		return
	}
	cust, err := h.api.Customers.Get(h.apiContext(c), customerID)
	if err != nil {
		h.fail(c, err)
		return
	}
	trl := tr(c)
	i := slices.IndexFunc(cust.Profiles, func(p apiclient.Profile) bool { return p.ProfileID == profileID })
	if i < 0 {
		answerConfirmation(c, confirmation{Question: trl.T("customer.profiles.delete_gone", strconv.FormatInt(int64(profileID), 10)), Refused: true})
		return
	}
	answerConfirmation(c, confirmation{Question: profileDeleteQuestion(trl, cust.Profiles[i])})
}

// profileDeleteQuestion asks before deleting p: by its type and contact, by its id without one.
func profileDeleteQuestion(tr *i18n.Translator, p apiclient.Profile) string {
	kind := customers.ProfileTypeLabel(tr, p.ProfileType)
	if p.ContactName != "" {
		return tr.T("customer.profiles.delete_confirm_contact", kind, i18n.Isolate(p.ContactName))
	}
	return tr.T("customer.profiles.delete_confirm_id", kind, strconv.FormatInt(int64(p.ProfileID), 10))
}

// ownerLabel names an owner with its id: "Anna Rossi (1003)", the id alone without a name.
func ownerLabel(o apiclient.Owner) string {
	id := strconv.FormatInt(o.OwnerID, 10)
	if o.Name == "" {
		return id
	}
	return o.Name + " (" + id + ")"
}

// ownerNamed is owner id by name when it is one of owners (the directory is not exposed, A8).
func ownerNamed(owners []apiclient.Owner, id int64) string {
	if i := slices.IndexFunc(owners, func(o apiclient.Owner) bool { return o.OwnerID == id }); i >= 0 {
		return ownerLabel(owners[i])
	}
	return strconv.FormatInt(id, 10)
}

// ownersNow lists a customer's owners, or says there is none.
func ownersNow(tr *i18n.Translator, owners []apiclient.Owner) string {
	if len(owners) == 0 {
		return tr.T("customer.owners.none")
	}
	names := make([]string, 0, len(owners))
	for _, o := range owners {
		names = append(names, ownerLabel(o))
	}
	return strings.Join(names, ", ")
}
