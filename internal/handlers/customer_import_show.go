package handlers

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/customerimport"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/customers"
	"github.com/cpqportal/portal/web/templates/layout"
)

// The dry run's page (GET /customers/import/:importId?show=<verdict>&from=<position>) and the
// person's choices: the lines of one page included or skipped (POST .../lines), every line of a
// verdict at once (POST .../include), the import deleted (POST .../delete). Each POST answers 303
// to the page, with or without JavaScript.

// loadImport reads the :importId of the signed-in person: a 400 for a malformed id (the store is
// not asked), customerimport.ErrNotFound (404) for one that is not theirs.
func (h *Handler) loadImport(c *gin.Context) (*customerimport.Import, error) {
	if h.imports == nil {
		return nil, errImportsOff
	}
	id := c.Param("importId")
	if !statedb.ValidID(id) {
		return nil, badRequest("import.error.bad_id")
	}
	return h.imports.Get(c.Request.Context(), id, auth.CurrentUser(c).Subject)
}

// importView is what the page shows: a verdict ("" for every line) from a position.
type importView struct {
	verdict customerimport.Verdict
	from    int
}

// parseImportView reads show= and from= (of the query, or of a posted form).
func parseImportView(show, from string) (importView, error) {
	var v importView
	if show != "" {
		if !slices.Contains(customerimport.Verdicts, customerimport.Verdict(show)) {
			return v, badRequest("import.error.bad_filter")
		}
		v.verdict = customerimport.Verdict(show)
	}
	if from != "" {
		n, err := strconv.Atoi(from)
		if err != nil || n < 0 || n >= customerimport.MaxLines {
			return v, badRequest("import.error.bad_page")
		}
		v.from = n
	}
	return v, nil
}

// url is the page's address showing v.
func (v importView) url(id string) string {
	q := url.Values{}
	if v.verdict != "" {
		q.Set("show", string(v.verdict))
	}
	if v.from > 0 {
		q.Set("from", strconv.Itoa(v.from))
	}
	if len(q) == 0 {
		return importPath(id)
	}
	return importPath(id) + "?" + q.Encode()
}

// showImport answers GET /customers/import/:importId.
func (h *Handler) showImport(c *gin.Context) {
	imp, err := h.loadImport(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	if imp.Status == customerimport.StatusMapping {
		h.renderImportMapping(c, http.StatusOK, imp, nil, i18n.Message{})
		return
	}
	view, err := parseImportView(c.Query("show"), c.Query("from"))
	if err != nil {
		h.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	counts, err := h.imports.Counts(ctx, imp.ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	page, err := h.imports.Lines(ctx, imp.ID, view.verdict, view.from)
	if err != nil {
		h.fail(c, err)
		return
	}
	vm := importVM(tr(c), imp, counts, view, page)
	vm.Saved = c.Query("saved") == "1"
	if err := h.importRepairs(c, imp, page, &vm); err != nil {
		h.fail(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	h.renderPage(c, http.StatusOK, t(c, "import.preview.title", imp.FileName), layout.SectionCustomers, customers.ImportPage(vm))
}

// verdictLabel is a verdict in tr's language, with its badge colour.
func verdictLabel(tr *i18n.Translator, v customerimport.Verdict) (string, components.BadgeLevel) {
	switch v {
	case customerimport.VerdictNew:
		return tr.T("import.verdict.new"), components.BadgeSuccess
	case customerimport.VerdictPossible:
		return tr.T("import.verdict.possible"), components.BadgeWarning
	case customerimport.VerdictDuplicate:
		return tr.T("import.verdict.duplicate"), components.BadgeInfo
	}
	return tr.T("import.verdict.invalid"), components.BadgeDanger
}

func importVM(tr *i18n.Translator, imp *customerimport.Import, counts customerimport.Counts, view importView, page customerimport.Page) customers.ImportVM {
	vm := customers.ImportVM{URL: importPath(imp.ID), FileName: imp.FileName, Created: imp.CreatedAt, Total: imp.Total,
		Included: counts.Included(), Verdict: string(view.verdict), From: strconv.Itoa(view.from)}
	if imp.Headers != nil {
		vm.MappingURL = importPath(imp.ID) + "/mapping"
	}
	all := importView{}
	vm.Filters = append(vm.Filters, customers.ImportFilter{Label: tr.T("import.filter.all", imp.Total), Href: all.url(imp.ID),
		Current: view.verdict == "", Verdict: "all"})
	for _, v := range customerimport.Verdicts {
		label, level := verdictLabel(tr, v)
		n := counts[v]
		vm.Counts = append(vm.Counts, customers.ImportCount{Verdict: string(v), Label: label, Total: n.Total, Included: n.Included,
			Includable: v.Includable(), Level: level})
		vm.Filters = append(vm.Filters, customers.ImportFilter{Label: tr.T("import.filter.verdict", label, n.Total),
			Href: importView{verdict: v}.url(imp.ID), Current: view.verdict == v, Verdict: string(v)})
	}
	for _, l := range page.Lines {
		row := customers.ImportLineRow{Position: strconv.Itoa(l.Position), Row: l.Row, Name: l.Fields.Name, TaxID: l.Fields.TaxID,
			City: l.Fields.City, PostalCode: l.Fields.PostalCode, Country: l.Fields.Country, Segment: l.Fields.Segment, Verdict: string(l.Verdict),
			Includable: l.Verdict.Includable(), Included: l.Included}
		row.VerdictLabel, row.Level = verdictLabel(tr, l.Verdict)
		for _, m := range l.Reason() {
			row.Reasons = append(row.Reasons, m.In(tr))
		}
		if l.MatchID != 0 {
			row.MatchHref, row.MatchText = customerHref(l.MatchID), tr.T("import.open_customer", l.MatchID)
		}
		vm.Lines = append(vm.Lines, row)
	}
	if n := len(page.Lines); n > 0 {
		vm.Shown = tr.T("import.preview.rows", page.Lines[0].Row, page.Lines[n-1].Row, n)
	}
	if page.Prev >= 0 {
		vm.Prev = importView{verdict: view.verdict, from: page.Prev}.url(imp.ID)
	}
	if page.Next >= 0 {
		vm.Next = importView{verdict: view.verdict, from: page.Next}.url(imp.ID)
	}
	return vm
}

// maxPostedPositions bounds the positions one post of a page names (a page has PageSize lines).
const maxPostedPositions = customerimport.PageSize

// saveImportLines answers POST /customers/import/:importId/lines: of the page's lines that may be
// included (shown), the ticked ones (include) are included and the others skipped.
func (h *Handler) saveImportLines(c *gin.Context) {
	imp, err := h.loadImport(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	view, err := parseImportView(c.PostForm("show"), c.PostForm("from"))
	if err != nil {
		h.fail(c, err)
		return
	}
	positions := func(name string) ([]int, error) {
		raw := c.PostFormArray(name)
		if len(raw) > maxPostedPositions {
			return nil, badRequest("import.error.bad_lines")
		}
		out := make([]int, 0, len(raw))
		for _, s := range raw {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 || n >= customerimport.MaxLines {
				return nil, badRequest("import.error.bad_lines")
			}
			out = append(out, n)
		}
		return out, nil
	}
	shown, err := positions("shown")
	if err != nil {
		h.fail(c, err)
		return
	}
	ticked, err := positions("include")
	if err != nil {
		h.fail(c, err)
		return
	}
	var include, skip []int
	for _, p := range shown {
		if slices.Contains(ticked, p) {
			include = append(include, p)
		} else {
			skip = append(skip, p)
		}
	}
	if err := h.imports.SetIncluded(c.Request.Context(), imp.ID, imp.Owner, include, skip); err != nil {
		h.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, withSaved(view.url(imp.ID)))
}

// includeImportVerdict answers POST /customers/import/:importId/include: every line of a verdict
// that may be included is included (include=1) or skipped (include=0).
func (h *Handler) includeImportVerdict(c *gin.Context) {
	imp, err := h.loadImport(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	view, err := parseImportView(c.PostForm("show"), "")
	if err != nil {
		h.fail(c, err)
		return
	}
	verdict := customerimport.Verdict(c.PostForm("verdict"))
	include := c.PostForm("include")
	if !verdict.Includable() || (include != "0" && include != "1") {
		h.fail(c, badRequest("import.error.bad_lines"))
		return
	}
	if err := h.imports.SetIncludedVerdict(c.Request.Context(), imp.ID, imp.Owner, verdict, include == "1"); err != nil {
		h.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, withSaved(view.url(imp.ID)))
}

// deleteImport answers POST /customers/import/:importId/delete.
func (h *Handler) deleteImport(c *gin.Context) {
	imp, err := h.loadImport(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	if err := h.imports.Delete(c.Request.Context(), imp.ID, imp.Owner); err != nil {
		h.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, "/customers/import")
}

// withSaved adds saved=1 to a page address (the page then says the choices were saved).
func withSaved(u string) string {
	if strings.Contains(u, "?") {
		return u + "&saved=1"
	}
	return u + "?saved=1"
}
