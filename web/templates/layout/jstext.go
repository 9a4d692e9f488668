package layout

import (
	"encoding/json"
	"html"

	"github.com/cpqportal/portal/internal/i18n"
)

// JSText is the JSON object of app.js's messages in tr's language, for <body data-i18n> (the CSP
// forbids inline script, so the words travel in an attribute). Names drop the "js." of their
// catalogue keys; {1}, {2} stand for the arguments app.js fills in. It is built once per language.
func JSText(tr *i18n.Translator) string {
	return tr.Derived("app.js messages", jsText)
}

// BodyOpenTag is the page's <body> start tag with JSText as its data-i18n attribute, escaped as
// templ escapes an attribute value (html.EscapeString). It is built once per language: templ
// would escape the 1.8 kB of JSON, nearly every character a quote, on every page.
func BodyOpenTag(tr *i18n.Translator) string {
	return tr.Derived("<body> start tag", func(tr *i18n.Translator) string {
		return `<body data-i18n="` + html.EscapeString(JSText(tr)) + `">`
	})
}

// htmxConfigMeta is the <meta name="htmx-config"> element, HTMXConfig escaped once (as templ
// escapes an attribute value) instead of on every page.
var htmxConfigMeta = `<meta name="htmx-config" content="` + html.EscapeString(HTMXConfig) + `">`

func jsText(tr *i18n.Translator) string {
	text := map[string]string{
		"request_id":        tr.T("js.request_id", "{1}"),
		"dismiss":           tr.T("js.dismiss"),
		"unreachable":       tr.T("js.unreachable"),
		"file_missing":      tr.T("js.file_missing"),
		"file_empty":        tr.T("js.file_empty", "{1}"),
		"file_too_large":    tr.T("js.file_too_large", "{1}", "{2}", "{3}"),
		"drop_one":          tr.T("js.drop_one"),
		"uploading":         tr.T("js.uploading"),
		"uploaded":          tr.T("js.uploaded"),
		"upload_failed":     tr.T("js.upload_failed"),
		"matches_none":      tr.T("js.matches_none"),
		"matches_one":       tr.T("js.matches_one"),
		"matches":           tr.T("js.matches", "{1}"),
		"draft_restored":    tr.T("js.draft_restored"),
		"confirm_failed":    tr.T("js.confirm_failed"),
		"draft_restored_at": tr.T("js.draft_restored_at", "{1}"),
		"draft_discard":     tr.T("js.draft_discard"),
		"draft_discarded":   tr.T("js.draft_discarded"),
		"session_ended":     tr.T("js.session_ended"),
		"ago_seconds":       tr.T("quote.ago.seconds", "{1}"),
		"ago_minutes":       tr.T("quote.ago.minutes", "{1}"),
		"ago_hours":         tr.T("quote.ago.hours", "{1}"),
	}
	encoded, err := json.Marshal(text)
	if err != nil {
		return "{}" // a map of strings: cannot fail
	}
	return string(encoded)
}
