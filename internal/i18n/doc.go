// Package i18n is the portal's one translator: the message catalogues of the five languages the
// portal speaks (English, the source, Italian, French, German and Spanish), the choice of a
// person's language (their preference cookie, else their browser's Accept-Language), and the
// formatting of what a person reads in their language: money (CLDR patterns through
// github.com/bojanz/currency: "€19.00", "19,00 €", "19,00 €", "19,00 €", "19,00 €"), numbers and
// percentages (golang.org/x/text/number), dates and date-times (day, month and year in the
// language's order and words, with the time zone shown), and the reading of decimal numbers typed
// with the language's separator ("12,5" in Italian).
//
// Catalogues live in locales/<language>.json, one flat object of key -> message per language,
// embedded in the binary and checked when the bundle loads: every language has exactly the keys
// of the source language, with the same printf verbs in the same order. Messages are printf
// formats for golang.org/x/text/message, so numbers in them are localised too.
//
// Text that comes from the v2 API (product names, audit messages) is never translated.
package i18n
