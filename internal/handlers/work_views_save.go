package handlers

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/layout"
	"github.com/cpqportal/portal/web/templates/work"
)

// saveView answers POST /work/views (list, query, name): the list's current filters saved under
// the name. With htmx it answers the list's saved views region (the new view in it, or the form
// with its problem); without, it goes back to the list with the view's filters (303), or answers
// the problem as a page.
func (h *Handler) saveView(c *gin.Context) {
	if h.views == nil {
		h.fail(c, errViewsOff)
		return
	}
	trl := tr(c)
	list := c.PostForm("list")
	path, ok := viewListPath(list)
	if !ok {
		h.fail(c, badRequest("views.error.list"))
		return
	}
	query, ok := normaliseViewQuery(trl, list, c.PostForm("query"))
	if !ok {
		h.fail(c, badRequest("views.error.query"))
		return
	}
	name := c.PostForm("name")
	saved, err := h.views.Save(c.Request.Context(), auth.CurrentUser(c).Subject, list, name, query)
	if err != nil {
		msg, status := viewProblem(err)
		if msg.IsZero() {
			h.fail(c, err)
			return
		}
		if !isHTMX(c) {
			h.renderError(c, status, trl.T("views.error.title"), msg.In(trl))
			return
		}
		vm := h.toolsFor(c, list, path, query)
		vm.Name, vm.Error = name, msg.In(trl)
		h.render(c, status, work.Tools(vm))
		return
	}
	if !isHTMX(c) {
		c.Redirect(http.StatusSeeOther, viewLink(saved, "").Href)
		return
	}
	h.toast(c, components.ToastSuccess, trl.T("views.toast.saved", i18n.Isolate(saved.Name)))
	h.render(c, http.StatusOK, work.Tools(h.toolsFor(c, list, path, query)))
}

// toolsFor is a list's saved views region for a normalised query (the work lists' with their
// exports; the customer list has its own above its results).
func (h *Handler) toolsFor(c *gin.Context, list, path, query string) work.ToolsVM {
	vm := work.ToolsVM{List: list, Query: query, Valid: true, Open: true}
	if list == viewListQuotes || list == viewListContracts {
		vm.ExportCSV, vm.ExportXLSX = path+"/export?format=csv&"+query, path+"/export?format=xlsx&"+query
	}
	vm.Views = h.viewLinks(c, list, query)
	return vm
}

// showViews answers GET /work/views: the person's saved views by list, to open, rename or delete.
func (h *Handler) showViews(c *gin.Context) {
	if h.views == nil {
		h.fail(c, errViewsOff)
		return
	}
	vm, err := h.viewsPage(c, "", "", "")
	if err != nil {
		h.fail(c, err)
		return
	}
	h.renderPage(c, http.StatusOK, t(c, "views.title"), layout.SectionWork, work.ViewsPage(vm))
}

// viewsPage is the manage page; renaming, entered and problem belong to the view being renamed.
func (h *Handler) viewsPage(c *gin.Context, renaming, entered, problem string) (work.ViewsPageVM, error) {
	trl := tr(c)
	views, err := h.views.List(c.Request.Context(), auth.CurrentUser(c).Subject, "")
	if err != nil {
		return work.ViewsPageVM{}, err
	}
	groups := []work.ViewGroup{
		{Title: trl.T("work.quotes.title"), ListHref: "/work/quotes"},
		{Title: trl.T("work.contracts.title"), ListHref: "/work/contracts"},
		{Title: trl.T("customers.list.title"), ListHref: "/customers"},
		{Title: trl.T("worklist.title"), ListHref: "/audits/worklist"},
	}
	for _, v := range views {
		link := viewLink(v, "")
		link.Rename = v.Name
		if v.ID == renaming {
			link.Rename, link.RenameError = entered, problem
		}
		switch v.List {
		case viewListQuotes:
			groups[0].Views = append(groups[0].Views, link)
		case viewListContracts:
			groups[1].Views = append(groups[1].Views, link)
		case viewListCustomers:
			groups[2].Views = append(groups[2].Views, link)
		case viewListAudits:
			groups[3].Views = append(groups[3].Views, link)
		}
	}
	return work.ViewsPageVM{Groups: groups}, nil
}

// renameView answers POST /work/views/:viewId/rename (name): back to /work/views (303), or the
// page again with the name's problem beside it.
func (h *Handler) renameView(c *gin.Context) {
	id, ok := h.viewID(c)
	if !ok {
		return
	}
	name := c.PostForm("name")
	_, err := h.views.Rename(c.Request.Context(), auth.CurrentUser(c).Subject, id, name)
	if err != nil {
		h.failView(c, id, name, err)
		return
	}
	c.Redirect(http.StatusSeeOther, "/work/views")
}

// deleteView answers POST /work/views/:viewId/delete: back to /work/views (303).
func (h *Handler) deleteView(c *gin.Context) {
	id, ok := h.viewID(c)
	if !ok {
		return
	}
	if err := h.views.Delete(c.Request.Context(), auth.CurrentUser(c).Subject, id); err != nil {
		h.failView(c, id, "", err)
		return
	}
	c.Redirect(http.StatusSeeOther, "/work/views")
}

// viewID is the :viewId of the path; a malformed one answers 404 as an unknown one does.
func (h *Handler) viewID(c *gin.Context) (string, bool) {
	if h.views == nil {
		h.fail(c, errViewsOff)
		return "", false
	}
	id := c.Param("viewId")
	if !validViewID(id) {
		h.renderError(c, http.StatusNotFound, t(c, "views.error.title"), t(c, "views.error.not_found"))
		return "", false
	}
	return id, true
}

// failView answers a rename's or delete's problem: the manage page with it beside the view (a
// name's problem) or at the top, or the error edge for what is not the person's.
func (h *Handler) failView(c *gin.Context, id, entered string, err error) {
	msg, status := viewProblem(err)
	if msg.IsZero() {
		h.fail(c, err)
		return
	}
	if status == http.StatusNotFound {
		h.renderError(c, status, t(c, "views.error.title"), msg.In(tr(c)))
		return
	}
	vm, lerr := h.viewsPage(c, id, entered, msg.In(tr(c)))
	if lerr != nil {
		h.fail(c, lerr)
		return
	}
	vm.Error = i18n.M("views.error.rename").In(tr(c))
	h.renderPage(c, status, t(c, "views.title"), layout.SectionWork, work.ViewsPage(vm))
}
