package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/customerimport"
	"github.com/cpqportal/portal/internal/customerrules"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/customers"
	"github.com/cpqportal/portal/web/templates/layout"
)

// The import's mapping step and repairs (issue 41, docs/backoffice.md "Import customers"): an
// uploaded file's page first shows each column with the field its heading proposes, changeable
// (POST /customers/import/:importId/mapping confirms it and checks every line); on the dry run,
// a value of a closed list the portal does not know is treated as one it does, in every line of
// the file (POST .../values), and an invalid line is fixed in place (POST .../fix). Each POST
// checks every line again and answers 303 to the page.

// importSamples is how many of a column's values the mapping step shows.
const importSamples = 3

// importUnknownValues is how many unknown values of a field the dry run offers to map.
const importUnknownValues = 20

// renderImportMapping shows the mapping step of imp: chosen is the mapping to show (nil: the
// import's proposed one), problem why the last one posted was refused.
func (h *Handler) renderImportMapping(c *gin.Context, status int, imp *customerimport.Import, chosen customerimport.Mapping, problem i18n.Message) {
	tr := tr(c)
	if chosen == nil {
		chosen = imp.Mapping
	}
	page, err := h.imports.Lines(c.Request.Context(), imp.ID, "", 0)
	if err != nil {
		h.fail(c, err)
		return
	}
	vm := customers.ImportMappingVM{URL: importPath(imp.ID), FileName: imp.FileName, Total: imp.Total, Problem: problem}
	if imp.Status == customerimport.StatusDraft {
		vm.DryRunURL = importPath(imp.ID)
	}
	vm.Fields = append(vm.Fields, components.Option{Value: "", Label: tr.T("import.mapping.skip")})
	for _, f := range customerimport.Fields() {
		vm.Fields = append(vm.Fields, components.Option{Value: f, Label: customerrules.Label(f).In(tr)})
	}
	for i, header := range imp.Headers {
		col := customers.ImportMappingColumn{ID: "import-map-" + strconv.Itoa(i), Header: header, Letter: columnLetters(i)}
		if i < len(chosen) {
			col.Field = chosen[i]
		}
		for _, l := range page.Lines {
			if i < len(l.Cells) && l.Cells[i] != "" && len(col.Samples) < importSamples {
				col.Samples = append(col.Samples, l.Cells[i])
			}
		}
		if col.Field == "" {
			name := header
			if name == "" {
				name = tr.T("import.mapping.column", col.Letter)
			}
			vm.Unmatched = append(vm.Unmatched, name)
		}
		vm.Columns = append(vm.Columns, col)
	}
	if !problem.IsZero() {
		vm.Errors = []components.FieldError{{FieldID: "import-map-0", Message: problem.In(tr)}}
	}
	c.Header("Cache-Control", "no-store")
	h.renderPage(c, status, t(c, "import.mapping.title", imp.FileName), layout.SectionCustomers, customers.ImportMappingPage(vm))
}

// showImportMapping answers GET /customers/import/:importId/mapping: the mapping step again for
// an import whose dry run is shown (back from the dry run, without a new upload), with the
// mapping the person confirmed; confirming it checks every line again (confirmImportMapping), and
// the value choices and fixes made stay.
func (h *Handler) showImportMapping(c *gin.Context) {
	imp, err := h.loadImportWithCells(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	h.renderImportMapping(c, http.StatusOK, imp, nil, i18n.Message{})
}

// loadImportWithCells is loadImport for the mapping step: an import from before the mapping
// step keeps no cells to map (a 400).
func (h *Handler) loadImportWithCells(c *gin.Context) (*customerimport.Import, error) {
	imp, err := h.loadImport(c)
	if err != nil {
		return nil, err
	}
	if imp.Headers == nil {
		return nil, badRequest("import.error.no_cells")
	}
	return imp, nil
}

// columnLetters is a column's letters as a spreadsheet names it (0 is A).
func columnLetters(i int) string {
	s := ""
	for i++; i > 0; i = (i - 1) / 26 {
		s = string(rune('A'+(i-1)%26)) + s
	}
	return s
}

// confirmImportMapping answers POST /customers/import/:importId/mapping: field (one a column, in
// the file's order; "" for a column not imported) is the mapping the person confirms. A mapping
// the page cannot have posted (another number of columns, a field the import does not read) is a
// 400; one without the name or tax id, or with a field twice, shows the step again (422).
func (h *Handler) confirmImportMapping(c *gin.Context) {
	imp, err := h.loadImportWithCells(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	posted := c.PostFormArray("field")
	m := customerimport.Mapping(posted)
	err = customerimport.CheckMapping(m, len(imp.Headers))
	var input *customerimport.InputError
	switch {
	case errors.As(err, &input) && (input.Message.Key == "import.mapping.error.columns" || input.Message.Key == "import.mapping.error.field"):
		h.fail(c, badRequestMessage(input.Message))
		return
	case errors.As(err, &input):
		h.renderImportMapping(c, http.StatusUnprocessableEntity, imp, m, input.Message)
		return
	}
	if err := h.recheckImport(c, imp, customerimport.Change{Mapping: m}); err != nil {
		h.fail(c, err)
		return
	}
	if err := h.imports.RememberMapping(c.Request.Context(), imp.Owner, imp.Headers, m); err != nil {
		// The import goes on; only the next file is not proposed this mapping.
		h.log(c).Warn("customer import: remembering the mapping failed", "err", err)
	}
	c.Redirect(http.StatusSeeOther, importPath(imp.ID))
}

// recheckImport applies ch to imp and checks every line again against the person's current
// customers (revalidated with the v2 API, as the upload's dry run did), one check at a time per
// person on this replica.
func (h *Handler) recheckImport(c *gin.Context, imp *customerimport.Import, ch customerimport.Change) error {
	release, ok := h.importsInFlight.Acquire(auth.CurrentUser(c).Subject)
	if !ok {
		return errImportInFlight
	}
	defer release()
	userKey := customerCacheKey(c)
	h.customers.Invalidate(userKey)
	snap, err := h.customers.Get(h.apiContext(c), userKey)
	if err != nil {
		return fmt.Errorf("customer import: read the customer list for the duplicates: %w", err)
	}
	err = h.imports.Recheck(c.Request.Context(), imp.ID, imp.Owner, h.importReader, ch, existingCustomers(snap), h.countries.Has)
	switch {
	case errors.Is(err, customerimport.ErrNoCells):
		return badRequest("import.error.no_cells")
	case errors.Is(err, customerimport.ErrNoLine):
		return badRequest("import.error.bad_lines")
	case errors.Is(err, customerimport.ErrTooManyChoices):
		return badRequest("import.error.too_many_choices", strconv.Itoa(customerimport.MaxValueChoices))
	}
	return err
}

// mapImportValue answers POST /customers/import/:importId/values: the value (as the file has
// it) of field (segment or country) is read as to in every line of the file.
func (h *Handler) mapImportValue(c *gin.Context) {
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
	field, from, to := c.PostForm("field"), c.PostForm("value"), c.PostForm("to")
	if err := customerimport.CheckValue(from); err != nil {
		h.fail(c, importValueError(err))
		return
	}
	switch {
	case !slices.Contains(customerimport.ValueFields, field), from == "":
		h.fail(c, badRequest("import.error.bad_value"))
		return
	case field == "segment" && !slices.Contains(customerrules.Segments, to),
		field == "country" && !h.countries.Has(to):
		h.fail(c, badRequest("import.error.bad_value"))
		return
	}
	if err := h.recheckImport(c, imp, customerimport.Change{Value: &customerimport.ValueChoice{Field: field, From: from, To: to}}); err != nil {
		h.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, withSaved(view.url(imp.ID)))
}

// fixImportLine answers POST /customers/import/:importId/fix: the line at position, with the
// fields as the person fixed them (every field the import reads, as the fix form posts them).
func (h *Handler) fixImportLine(c *gin.Context) {
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
	position, err := strconv.Atoi(c.PostForm("position"))
	if err != nil || position < 0 || position >= customerimport.MaxLines {
		h.fail(c, badRequest("import.error.bad_lines"))
		return
	}
	var fix customerimport.Fix
	fix.Position = position
	for _, field := range customerimport.Fields() {
		v := c.PostForm(field)
		if err := customerimport.CheckValue(v); err != nil {
			h.fail(c, importValueError(err))
			return
		}
		fix.Fields.Set(field, v)
	}
	if err := h.recheckImport(c, imp, customerimport.Change{Fix: &fix}); err != nil {
		h.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, withSaved(view.url(imp.ID)))
}

// importValueError is a refused value as a 400 in the person's words.
func importValueError(err error) error {
	var input *customerimport.InputError
	if errors.As(err, &input) {
		return badRequestMessage(input.Message)
	}
	return err
}

// importRepairs adds to the dry run's page what the person can repair: the unknown values of
// closed lists, each with the values it may be treated as, and a fix form for every invalid line
// of the page (not for an import from before the mapping step, which keeps no cells).
func (h *Handler) importRepairs(c *gin.Context, imp *customerimport.Import, page customerimport.Page, vm *customers.ImportVM) error {
	if imp.Headers == nil {
		return nil
	}
	tr := tr(c)
	unknown, err := h.imports.UnknownValues(c.Request.Context(), imp.ID, h.countries.Has, importUnknownValues)
	if err != nil {
		return err
	}
	for _, field := range customerimport.ValueFields {
		var options []components.Option
		if field == "segment" {
			for _, code := range customerrules.Segments {
				options = append(options, components.Option{Value: code, Label: segmentLabel(tr, code)})
			}
		} else {
			options = countryOptions(tr, h.countries, "")[1:]
		}
		for i, v := range unknown[field] {
			vm.ValueChoices = append(vm.ValueChoices, customers.ImportValueChoice{ID: "import-value-" + field + "-" + strconv.Itoa(i),
				Field: field, FieldLabel: customerrules.Label(field).In(tr), Value: v, Options: options})
		}
	}
	for _, l := range page.Lines {
		if l.Verdict != customerimport.VerdictInvalid {
			continue
		}
		fix := customers.ImportFix{Position: strconv.Itoa(l.Position), Row: l.Row}
		problems := map[string]string{}
		for _, p := range l.Problems {
			if _, ok := problems[p.Field]; !ok {
				problems[p.Field] = p.Message().In(tr)
			}
		}
		for _, field := range customerimport.Fields() {
			fix.Inputs = append(fix.Inputs, customers.ImportFixInput{Name: field, Label: customerrules.Label(field).In(tr),
				ID: "import-fix-" + strconv.Itoa(l.Position) + "-" + field, Value: l.Fields.Get(field), Error: problems[field]})
		}
		vm.Fixes = append(vm.Fixes, fix)
	}
	return nil
}
