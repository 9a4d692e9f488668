package handlers

import (
	"errors"
	"io"
	"iter"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/customercache"
	"github.com/cpqportal/portal/internal/customerimport"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/jobs"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/customers"
	"github.com/cpqportal/portal/web/templates/layout"
)

// Customer import (docs/backoffice.md "Import customers"): GET /customers/import shows the upload
// form and the person's imports; POST reads the file, checks every line (the dry run) and stores
// the import, whose page shows each line's verdict. Nothing is sent to the v2 API but the list of
// the person's customers (for the duplicates).

// errImportsOff: the portal was built without an import store (handler tests without a database).
var errImportsOff = errors.New("customer imports are off")

// errImportInFlight: the person has a dry run running on this replica (429).
var errImportInFlight = errors.New("handlers: a customer import is being checked for this user")

// importBodyLimit bounds the upload's body: the file and the rest of the multipart form.
const importBodyLimit = customerimport.MaxFileBytes + 64<<10

// importPath is the page of an import.
func importPath(id string) string { return "/customers/import/" + id }

// showImportNew answers GET /customers/import.
func (h *Handler) showImportNew(c *gin.Context) {
	if h.imports == nil {
		h.fail(c, errImportsOff)
		return
	}
	h.renderImportNew(c, http.StatusOK, customers.ImportNewVM{})
}

func (h *Handler) renderImportNew(c *gin.Context, status int, vm customers.ImportNewVM) {
	tr := tr(c)
	vm.MaxLines, vm.MaxSize = customerimport.MaxLines, formatBytes(customerimport.MaxFileBytes).In(tr)
	list, err := h.imports.List(c.Request.Context(), auth.CurrentUser(c).Subject)
	if err != nil {
		h.log(c).Warn("customer import: listing the person's imports failed", "err", err)
	}
	for _, imp := range list {
		vm.Imports = append(vm.Imports, customers.ImportSummary{URL: importPath(imp.ID), FileName: imp.FileName, Created: imp.CreatedAt,
			Counts: tr.T("import.list.counts", imp.Total)})
	}
	if h.jobs != nil {
		runs, err := h.jobs.OverviewKind(c.Request.Context(), jobs.KindCustomerImport, auth.CurrentUser(c).Subject)
		if err != nil {
			h.log(c).Warn("customer import: listing the person's runs failed", "err", err)
		}
		names, err := h.imports.RunNames(c.Request.Context(), auth.CurrentUser(c).Subject)
		if err != nil {
			h.log(c).Warn("customer import: naming the person's runs failed", "err", err)
		}
		for _, j := range runs {
			counts := j.Counts()
			// A run is named by its file (and its time, the next column); a run from before runs
			// were named says only that it is one.
			name := tr.T("import.runs.item", batchStatusText(tr, j))
			if file := names[j.ID]; file != "" {
				name = tr.T("import.runs.named", file, batchStatusText(tr, j))
			}
			vm.Runs = append(vm.Runs, customers.ImportSummary{URL: importRunPath(j.ID), FileName: name, Created: j.CreatedAt,
				Counts: tr.T("import.runs.counts", counts.Done, counts.Failed, counts.Rejected, counts.Left, counts.Total)})
		}
	}
	h.renderPage(c, status, t(c, "import.title"), layout.SectionCustomers, customers.ImportNewPage(vm))
}

// checkImport answers POST /customers/import: reads the uploaded file (within its limits) and
// stores it with the mapping its headings propose; the import's page shows the mapping step
// (customer_import_mapping.go), whose confirmation checks every line (the dry run).
func (h *Handler) checkImport(c *gin.Context) {
	if h.imports == nil {
		h.fail(c, errImportsOff)
		return
	}
	// One dry run at a time per person on this replica: it reads a file of up to 10,000 lines and
	// the person's whole customer list.
	release, ok := h.importsInFlight.Acquire(auth.CurrentUser(c).Subject)
	if !ok {
		h.fail(c, errImportInFlight)
		return
	}
	defer release()
	formErr := errors.New("not multipart")
	if strings.HasPrefix(c.ContentType(), "multipart/") {
		formErr = c.Request.ParseMultipartForm(customerimport.MaxFileBytes)
	}
	var tooLarge *http.MaxBytesError
	if errors.As(formErr, &tooLarge) {
		h.fail(c, formErr)
		return
	}
	tr := tr(c)
	name, data, fileErr := h.readImportFile(c, formErr)
	var sheet *customerimport.Sheet
	if fileErr.IsZero() {
		var stop error
		if sheet, fileErr, stop = h.parseImportFile(c, name, data); stop != nil {
			h.fail(c, stop)
			return
		}
	}
	if !fileErr.IsZero() {
		vm := customers.ImportNewVM{FileError: fileErr}
		vm.Errors = []components.FieldError{{FieldID: "import-file", Message: fileErr.In(tr)}}
		h.renderImportNew(c, http.StatusUnprocessableEntity, vm)
		return
	}
	// The mapping step: the columns matched to fields by the person's own mapping for a file of
	// these headings, else by the headings; nothing is checked until the person confirms it.
	ctx := c.Request.Context()
	owner := auth.CurrentUser(c).Subject
	remembered, err := h.imports.RememberedMapping(ctx, owner, sheet.Headers)
	if err != nil {
		h.log(c).Warn("customer import: reading the remembered mapping failed", "err", err)
	}
	imp, err := h.imports.CreateSheet(ctx, owner, clipFileName(name), h.importReader, sheet, h.importReader.Propose(sheet.Headers, remembered))
	var quota *customerimport.QuotaError
	switch {
	case errors.As(err, &quota):
		vm := customers.ImportNewVM{FileError: quota.Message}
		vm.Errors = []components.FieldError{{FieldID: "import-file", Message: quota.Message.In(tr)}}
		h.renderImportNew(c, http.StatusTooManyRequests, vm)
		return
	case err != nil:
		h.fail(c, err)
		return
	}
	h.log(c).Info("customer import uploaded", "import_id", imp.ID, "lines", len(sheet.Rows), "columns", len(sheet.Headers))
	c.Redirect(http.StatusSeeOther, importPath(imp.ID))
}

// parseImportFile reads an uploaded customer file within the limits of a read (upload_parse.go):
// its lines, or the message for the form, or an error that ends the request (the person has a
// read in flight, the replica is busy, the read was cancelled).
func (h *Handler) parseImportFile(c *gin.Context, name string, data []byte) (*customerimport.Sheet, i18n.Message, error) {
	ctx, done, err := h.startParse(c)
	if err != nil {
		return nil, i18n.Message{}, err
	}
	defer done()
	sheet, err := h.importReader.ReadSheet(ctx, name, data)
	var unusable *customerimport.InputError
	switch {
	case errors.As(err, &unusable):
		return nil, unusable.Message, nil
	case errors.Is(err, customerimport.ErrReadCancelled):
		return nil, i18n.Message{}, h.readCancelled(c, err)
	case err != nil:
		return nil, i18n.M("import.file.unreadable"), nil
	}
	return sheet, i18n.Message{}, nil
}

// readImportFile returns the uploaded file's name and bytes, or why there is none to read.
func (h *Handler) readImportFile(c *gin.Context, formErr error) (string, []byte, i18n.Message) {
	if formErr != nil {
		return "", nil, i18n.M("import.file.missing")
	}
	header, err := c.FormFile("file")
	if err != nil || header.Size == 0 {
		return "", nil, i18n.M("import.file.missing")
	}
	if header.Size > customerimport.MaxFileBytes {
		return "", nil, i18n.M("import.file.too_large", i18n.Bytes(customerimport.MaxFileBytes))
	}
	f, err := header.Open()
	if err != nil {
		return "", nil, i18n.M("import.file.unreadable")
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, customerimport.MaxFileBytes+1))
	if err != nil {
		return "", nil, i18n.M("import.file.unreadable")
	}
	return header.Filename, data, i18n.Message{}
}

// clipFileName keeps the last part of an uploaded file's name, valid UTF-8, at most 100
// characters (it is shown, never used as a path).
func clipFileName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.ToValidUTF8(name, "\uFFFD")
	if r := []rune(name); len(r) > 100 {
		name = string(r[:100])
	}
	return name
}

// existingCustomers walks the person's customer list for the dry run.
func existingCustomers(snap *customercache.Snapshot) iter.Seq[customerimport.Existing] {
	return func(yield func(customerimport.Existing) bool) {
		stop := errors.New("stop")
		_ = snap.Walk(customercache.Query{}, func(r customercache.Row) error {
			if !yield(customerimport.Existing{ID: r.ID, Name: r.Name, TaxID: r.TaxID, City: r.City}) {
				return stop
			}
			return nil
		})
	}
}
