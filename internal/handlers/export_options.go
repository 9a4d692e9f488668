package handlers

import (
	"github.com/cpqportal/portal/internal/export"
	"github.com/cpqportal/portal/internal/i18n"
)

// exportOptions are the options of an export read by the person of tr: the CSV convention of
// their locale (semicolons and a comma decimal where the decimal mark is a comma, docs/i18n.md)
// and their time zone, which the headings of time columns name (exportZoneHeader).
func exportOptions(tr *i18n.Translator, sheet string, columns []export.Column) export.Options {
	return export.Options{Sheet: sheet, Columns: columns, CSV: export.ConventionFor(tr.DecimalSeparator()), Zone: tr.Zone()}
}

// exportZoneHeader is the heading of a time column with the zone its times are in.
func exportZoneHeader(tr *i18n.Translator, header string) string {
	return tr.T("export.col.zone", header, tr.Zone().String())
}
