// Package customerimport imports customers from a spreadsheet (docs/backoffice.md "Import
// customers"): it reads an uploaded CSV or XLSX file with the columns of the customer export, checks
// every line as the customer form does (internal/customerrules), finds duplicates against the
// customers the person's token can list and within the file (a dry run), and keeps the import with
// its lines and verdicts in the state database (table customer_imports, migration 00013), owned by
// one person, so the preview survives a restart and any replica can show it. The person then
// includes or skips lines; the included lines are what a run sends (IncludedLines, Sender).
package customerimport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/cpqportal/portal/internal/customercache"
	"github.com/cpqportal/portal/internal/customerrules"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/sheetread"
	"github.com/cpqportal/portal/internal/textfold"
)

// MaxLines bounds one import (lines with data, after the header).
const MaxLines = 10_000

// MaxFileBytes bounds an uploaded file: 10,000 customers of the export's columns are about 1.5
// MB of CSV and less as XLSX.
const MaxFileBytes = 4 << 20

// fileLimits bound what an uploaded file may hold (internal/sheetread, docs/backoffice.md
// "Limits of an uploaded file"), counted on the file before anything is kept: the export of
// MaxLines customers has 10 columns and about 8 MiB of sheet XML (cells are inline strings), well
// inside each (24 MiB inflated in all: three times that). Blank rows count to MaxRows (MaxLines
// counts the customers).
var fileLimits = sheetread.Limits{
	MaxRows:     2 * MaxLines,
	MaxColumns:  64,
	MaxCells:    64 * MaxLines,
	MaxInflated: 24 << 20,
}

// maxCellBytes bounds one cell (a customer's longest field is 200 characters).
const maxCellBytes = 4 << 10

// MaxKeptBytes bounds what an import keeps of its file (docs/backoffice.md "Limits of an uploaded
// file"): its headings' and lines' cells as stored (JSON: keptSize), which every check of the
// mapping step reads and the database holds until the import is run or deleted. The largest CSV
// (MaxFileBytes) keeps about its own size; a workbook's cells can name one shared string each and
// say far more than the file's bytes.
const MaxKeptBytes = 8 << 20

// keptSize is what a cell takes stored in a JSON array: its quotes and comma, and six bytes for
// each byte encoding/json escapes as \u00XX (control characters, <, > and &).
func keptSize(cell string) int {
	n := len(cell) + 3
	for i := 0; i < len(cell); i++ {
		switch b := cell[i]; {
		case b < 0x20 || b == '<' || b == '>' || b == '&':
			n += 5
		case b == '"' || b == '\\':
			n++
		}
	}
	return n
}

// InputError is a problem with the person's file; Message tells them, translated where shown.
type InputError struct{ Message i18n.Message }

func (e *InputError) Error() string {
	return fmt.Sprintf("customerimport: unusable file: %s %v", e.Message.Key, e.Message.Args)
}

func inputError(key string, args ...any) error { return &InputError{i18n.M(key, args...)} }

// Line is one customer of the file: the row it came from and its fields as read (trimmed; the
// tax id and country in upper case, the segment as its code when it was a segment's name).
type Line struct {
	Row    int
	Fields customerrules.Fields
	// Cells are the line's cells as read (the mapping step reads them again through another
	// mapping); Edit the fields the person fixed in the dry run (nil: none), read instead.
	Cells []string
	Edit  *customerrules.Fields
}

// The fields an import reads, by their customerrules input name.
var importFields = []string{"name", "taxId", "email", "phone", "segment", "street", "city", "postalCode", "country"}

// Reader reads import files. It knows the column headings and segment names in every language of
// the portal, so a file exported in Italian is read by a person working in German.
type Reader struct {
	headings map[string]string // folded heading to field
	segments map[string]string // folded segment name or code to code
	// country is the ISO code of a country as a file writes it ("Deutschland", "Italia", "DEU"):
	// countries.List.Resolve.
	country func(text string) (code string, ok bool)
}

// NewReader builds the Reader from the catalogues of b: the customer export's column headings
// (customers.export.col.*) and the form's field labels (customer.field.*), in every language, and
// the headings of headingSynonyms; country reads a country cell as people write countries.
func NewReader(b *i18n.Bundle, country func(text string) (code string, ok bool)) *Reader {
	r := &Reader{headings: map[string]string{}, segments: map[string]string{}, country: country}
	keys := map[string][]string{
		"name":       {"customers.export.col.name", "customer.field.name"},
		"taxId":      {"customers.export.col.tax_id", "customer.field.tax_id"},
		"email":      {"customers.export.col.email", "customer.field.email"},
		"phone":      {"customer.field.phone"},
		"segment":    {"customers.export.col.segment", "customer.field.segment"},
		"street":     {"customer.field.street"},
		"city":       {"customers.export.col.city", "customer.field.city"},
		"postalCode": {"customer.field.postal_code"},
		"country":    {"customers.export.col.country", "customer.field.country"},
	}
	segmentKeys := map[string]string{"BUSINESS": "customer.segment.business", "CONSUMER": "customer.segment.consumer", "PUBLIC": "customer.segment.public"}
	for _, tag := range i18n.Languages {
		tr := b.Translator(tag)
		for field, ks := range keys {
			for _, k := range ks {
				r.headings[headingKey(tr.T(k))] = field
			}
		}
		for code, k := range segmentKeys {
			r.segments[headingKey(tr.T(k))] = code
		}
	}
	for _, field := range importFields { // the input names themselves ("taxId", "postalCode")
		r.headings[headingKey(field)] = field
	}
	for field, names := range headingSynonyms {
		for _, name := range names {
			if _, taken := r.headings[headingKey(name)]; !taken {
				r.headings[headingKey(name)] = field
			}
		}
	}
	for _, code := range customerrules.Segments {
		r.segments[headingKey(code)] = code
	}
	for code, names := range segmentSynonyms {
		for _, name := range names {
			if _, taken := r.segments[headingKey(name)]; !taken {
				r.segments[headingKey(name)] = code
			}
		}
	}
	return r
}

// headingSynonyms are the headings other programs and people give the columns (a CRM's export,
// a spreadsheet kept by hand), in the portal's five languages, besides the portal's own labels.
// A heading that is already one of the portal's labels keeps its field.
var headingSynonyms = map[string][]string{
	"name": {"Company", "Company name", "Customer", "Customer name", "Account", "Account name", "Organisation", "Organization",
		"Firmenname", "Firma", "Unternehmen", "Kunde", "Kundenname", "Ragione sociale", "Azienda", "Cliente", "Denominazione",
		"Raison sociale", "Société", "Entreprise", "Client", "Razón social", "Empresa", "Nombre de la empresa"},
	"taxId": {"VAT", "VAT number", "VAT no", "VAT id", "VAT reg no", "Tax number", "Tax id number", "USt-IdNr.", "USt-Id",
		"UStIdNr", "Umsatzsteuer-ID", "Umsatzsteuer-Identifikationsnummer", "USt-ID-Nr.", "P.IVA", "P. IVA", "PIVA",
		"Codice fiscale / P.IVA", "Numero partita IVA", "Numéro de TVA", "N° TVA", "TVA intracommunautaire",
		"Numéro TVA intracommunautaire", "NIF/CIF", "CIF", "NIF-IVA", "Número de IVA"},
	"email": {"E-mail", "Mail", "E-mail address", "Email address", "E-Mail-Adresse", "Indirizzo e-mail", "PEC", "Courriel",
		"Adresse e-mail", "Correo", "Correo electrónico"},
	"phone": {"Phone", "Phone number", "Telephone", "Tel", "Telefon", "Telefonnummer", "Telefono", "Tel.", "Téléphone",
		"Teléfono", "Número de teléfono"},
	"street": {"Street", "Address", "Street address", "Address line 1", "Straße", "Strasse", "Anschrift", "Adresse",
		"Indirizzo", "Via", "Rue", "Calle", "Dirección", "Domicilio"},
	"city": {"City", "Town", "Ort", "Stadt", "Wohnort", "Città", "Comune", "Località", "Ville", "Localité", "Ciudad",
		"Localidad", "Municipio"},
	"postalCode": {"Postal code", "Postcode", "Post code", "ZIP", "ZIP code", "Postleitzahl", "PLZ", "CAP",
		"Codice postale", "Code postal", "CP", "Código postal", "C.P."},
	"country": {"Country", "Country code", "Land", "Staat", "Ländercode", "Paese", "Nazione", "Stato", "Pays", "País"},
	"segment": {"Segment", "Customer segment", "Customer type", "Kundensegment", "Kundengruppe", "Kundentyp", "Segmento",
		"Tipo cliente", "Type de client", "Tipo de cliente"},
}

// segmentSynonyms are the words files use for the segments besides the portal's own names.
var segmentSynonyms = map[string][]string{
	"BUSINESS": {"B2B", "Company", "Corporate", "Geschäftskunde", "Firmenkunde", "Gewerbekunde", "Unternehmen", "Azienda",
		"Impresa", "Cliente business", "Entreprise", "Professionnel", "Empresa"},
	"CONSUMER": {"B2C", "Private", "Individual", "Privatkunde", "Endkunde", "Privato", "Consumatore", "Particulier",
		"Particular", "Consumidor"},
	"PUBLIC": {"Government", "Public sector", "Public administration", "Öffentliche Hand", "Öffentlicher Auftraggeber", "Behörde",
		"Pubblica amministrazione", "PA", "Ente pubblico", "Secteur public", "Administration", "Sector público",
		"Administración pública"},
}

// headingKey is the form headings and segment names are compared in: folded (case, accents, full
// stops), without other punctuation and spaces, so "Tax id", "tax-id" and "TAXID" are one.
func headingKey(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsPunct(r) || unicode.IsSpace(r) || unicode.IsSymbol(r) {
			return -1
		}
		return r
	}, textfold.Fold(s))
}

// Parse reads the customers of an uploaded file within fileLimits, until ctx ends (the request's,
// with a deadline), with the mapping its headings propose (ReadSheet, Propose): a CSV (separated
// by "," or ";", detected from the header; UTF-8 with or without a byte-order mark) or an XLSX
// workbook (its first sheet). The first row with text is the header: it must name the name and
// tax id columns, in any of the portal's languages; columns it does not know (the export's id,
// owners, configurators, update) are left out. Rows without any text are skipped (and count to
// the file's rows). Its errors are *InputError, or ErrReadCancelled.
func (r *Reader) Parse(ctx context.Context, name string, data []byte) ([]Line, error) {
	sheet, err := r.ReadSheet(ctx, name, data)
	if err != nil {
		return nil, err
	}
	m := r.Propose(sheet.Headers, nil)
	if !slices.Contains(m, "name") || !slices.Contains(m, "taxId") {
		return nil, inputError("import.file.no_header")
	}
	out := make([]Line, len(sheet.Rows))
	for i, row := range sheet.Rows {
		out[i] = r.LineOf(row.Row, row.Cells, m, nil, nil)
		out[i].Cells = nil // read once: nothing to read again
	}
	return out, nil
}

// Sheet is an uploaded file as read: its heading row and the cells of its lines (trimmed, at most
// as many as there are headings; a CSV's cells with the export's guard against formulas undone).
type Sheet struct {
	Headers []string
	Rows    []RawRow
}

// RawRow is a line of the file as read: the row it came from and its cells.
type RawRow struct {
	Row   int
	Cells []string
}

// ReadSheet reads an uploaded file within fileLimits, until ctx ends: the first row with text is
// the header, and at least one of its headings must be one the Reader knows (a file whose first
// row names nothing is not a customer list, or has no header); the mapping step (Propose,
// CheckMapping) says which column fills which field. Its errors are *InputError, or
// ErrReadCancelled.
func (r *Reader) ReadSheet(ctx context.Context, name string, data []byte) (*Sheet, error) {
	if len(data) > MaxFileBytes {
		return nil, inputError("import.file.too_large", i18n.Bytes(MaxFileBytes))
	}
	var sheet Sheet
	lower := strings.ToLower(name)
	isCSV := strings.HasSuffix(lower, ".csv") || strings.HasSuffix(lower, ".txt")
	clean := func(cell string) string {
		if len(cell) > maxCellBytes {
			cell = strings.ToValidUTF8(cell[:maxCellBytes], "") // too long either way: the check says so
		}
		if isCSV {
			cell = unneutralise(cell)
		}
		return strings.TrimSpace(cell)
	}
	// What is kept is bounded whatever the file's cells say: its cells as stored (JSON) add up to
	// MaxKeptBytes at most (a workbook's one shared string of 4 KB in every cell read as 500 MB
	// of text from a 259 KB file), and blank cells at the end of a row are not kept.
	kept, width := 0, 0
	keepCell := func(cell string) error {
		if kept += keptSize(cell); kept > MaxKeptBytes {
			return inputError("import.file.too_much_text", i18n.Bytes(MaxKeptBytes))
		}
		return nil
	}
	keep := func(row int, cells []string) error {
		cells = cells[:min(len(cells), fileLimits.MaxColumns)]
		for len(cells) > 0 && strings.TrimSpace(cells[len(cells)-1]) == "" {
			cells = cells[:len(cells)-1]
		}
		if len(cells) == 0 {
			return nil
		}
		width = max(width, len(cells))
		if sheet.Headers == nil {
			sheet.Headers = make([]string, len(cells))
			known := false
			for i, cell := range cells {
				sheet.Headers[i] = clean(cell)
				if err := keepCell(sheet.Headers[i]); err != nil {
					return err
				}
				_, ok := r.headings[headingKey(sheet.Headers[i])]
				known = known || ok
			}
			if !known {
				return inputError("import.file.no_header")
			}
			return nil
		}
		if len(sheet.Rows) >= MaxLines {
			return inputError("import.file.too_many_lines", strconv.Itoa(MaxLines))
		}
		out := make([]string, len(cells))
		for i, cell := range cells {
			out[i] = clean(cell)
			if err := keepCell(out[i]); err != nil {
				return err
			}
		}
		for len(out) > 0 && out[len(out)-1] == "" { // blank once cleaned
			out = out[:len(out)-1]
		}
		sheet.Rows = append(sheet.Rows, RawRow{Row: row, Cells: out})
		return nil
	}
	opts := sheetread.Options{Limits: fileLimits}
	if isCSV {
		opts.Comma = r.csvComma(data)
	}
	if err := sheetread.Read(ctx, name, data, opts, keep); err != nil {
		var unusable *sheetread.Error
		if errors.As(err, &unusable) {
			return nil, fileError(unusable)
		}
		return nil, err
	}
	if sheet.Headers == nil || len(sheet.Rows) == 0 {
		return nil, inputError("import.file.empty")
	}
	// A column with values but no heading is a column of the file too (named by its letter on
	// the mapping step, never dropped in silence); columns after the last with a heading or a
	// value are none.
	for len(sheet.Headers) < width {
		sheet.Headers = append(sheet.Headers, "")
	}
	return &sheet, nil
}

// ErrReadCancelled: the file's read ended with its context (the person went away, the portal
// stops); nobody is left to tell.
var ErrReadCancelled = errors.New("customerimport: reading the file was cancelled")

// fileError says what a sheetread refusal means for a customer file.
func fileError(e *sheetread.Error) error {
	switch e.Kind {
	case sheetread.WrongType:
		return inputError("import.file.wrong_type")
	case sheetread.NotUTF8:
		return inputError("import.file.not_utf8")
	case sheetread.CSVSyntax:
		return inputError("import.file.csv_line", strconv.Itoa(e.Line))
	case sheetread.InflatesTooMuch:
		return inputError("import.file.inflates_too_much", i18n.Bytes(e.Limit))
	case sheetread.TooManyColumns:
		return inputError("import.file.too_many_columns", strconv.FormatInt(e.Limit, 10), strconv.Itoa(e.Line), sheetread.ColumnName(e.Column))
	case sheetread.TooManyRows:
		return inputError("import.file.too_many_rows", strconv.FormatInt(e.Limit, 10))
	case sheetread.TooManyCells:
		return inputError("import.file.too_many_cells", strconv.FormatInt(e.Limit, 10))
	case sheetread.NUL:
		return inputError("import.file.nul", strconv.Itoa(e.Line))
	case sheetread.TooSlow:
		return inputError("import.file.too_slow")
	case sheetread.Cancelled:
		return ErrReadCancelled
	}
	return inputError("import.file.not_xlsx")
}

// set puts one cell into its field, normalised as the form normalises what a person types; values
// holds the person's choices for the values of closed lists ("treat X as Y").
func (r *Reader) set(f *customerrules.Fields, field, v string, values ValueMap) {
	switch field {
	case "taxId":
		v = customercache.NormalizeTaxID(v)
	case "segment":
		if code, ok := values[field][headingKey(v)]; ok && v != "" {
			v = code
		} else if code, ok := r.segments[headingKey(v)]; ok && v != "" {
			v = code
		}
	case "country":
		// A country the file names is its code; one it does not stays as the file has it, so the
		// dry run shows the person what they wrote.
		if code, ok := values[field][headingKey(v)]; ok && v != "" {
			v = code
		} else if code, ok := r.country(v); ok {
			v = code
		}
	}
	if slices.Contains(importFields, field) {
		f.Set(field, v)
	}
}

// postalDigits is the length of the postal codes of countries whose codes are digits only: a
// spreadsheet that stored "01067" as the number 1067 gets its leading zeros back.
var postalDigits = map[string]int{"AT": 4, "BE": 4, "CH": 4, "DE": 5, "DK": 4, "ES": 5, "FI": 5, "FR": 5, "GR": 5, "HU": 4,
	"IT": 5, "LI": 4, "LU": 4, "MC": 5, "NO": 4, "SM": 5, "US": 5, "VA": 5, "HR": 5, "SI": 4, "BG": 4, "EE": 5, "LT": 5}

// finish completes a line once every cell is read: what depends on two cells.
func finish(f *customerrules.Fields) {
	f.TaxID = customerrules.TaxID(f.TaxID, f.Country)
	if n := postalDigits[f.Country]; n > 0 && len(f.PostalCode) < n && f.PostalCode != "" &&
		strings.Trim(f.PostalCode, "0123456789") == "" {
		f.PostalCode = strings.Repeat("0", n-len(f.PostalCode)) + f.PostalCode
	}
}

// csvComma is the separator of a CSV file: the one of "," and ";" that makes more of the first
// line's cells known headings (a file in the Italian convention uses ";" and a decimal comma, so
// counting characters alone could be fooled by its numbers).
func (r *Reader) csvComma(data []byte) rune {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	first := data
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		first = data[:i]
	}
	known := func(sep rune) int {
		n := 0
		for cell := range strings.SplitSeq(string(first), string(sep)) {
			if _, ok := r.headings[headingKey(strings.Trim(strings.TrimSpace(cell), `"`))]; ok {
				n++
			}
		}
		return n
	}
	if semi, commas := known(';'), known(','); semi > commas || (semi == commas && bytes.Count(first, []byte(";")) > bytes.Count(first, []byte(","))) {
		return ';'
	}
	return ','
}

// unneutralise undoes the customer export's guard against formula injection (internal/export:
// a CSV cell starting with =, +, -, @, a tab or a carriage return gets a leading apostrophe), so
// an exported CSV imports the values it was made from.
func unneutralise(cell string) string {
	if len(cell) >= 2 && cell[0] == '\'' && strings.ContainsRune("=+-@\t\r", rune(cell[1])) {
		return cell[1:]
	}
	return cell
}
