package handlers

import (
	"net/url"
	"slices"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/textrules"
)

// multiLineField reports whether the form field key is shown as a textarea (the signature's
// message, a customer's attributes, pasted contract numbers and quote ids): the only fields where
// tab and line breaks are text. Everywhere else, and in every query parameter, they are refused
// like other controls.
func multiLineField(key string) bool {
	switch key {
	case "message", "attributes", "numbers", "quotes":
		return true
	}
	return false
}

// hiddenCharacterProblem returns the message refusing the first value of values (query
// parameters or form fields; a textarea's value may come in either, the worklist's form is a GET)
// that holds a character textrules refuses: a
// bidirectional control, another invisible format character, NUL or another control. The message
// names the field in the reader's language and the character by its code point. ok is false when
// every value is acceptable.
func hiddenCharacterProblem(values url.Values) (i18n.Message, bool) {
	keys := make([]string, 0, len(values))
	for key := range values {
		keys = append(keys, key)
	}
	slices.Sort(keys) // the same request always names the same field
	for _, key := range keys {
		if r, bad := textrules.FirstRefused(key, false); bad {
			return i18n.M("error.hidden_character", fieldLabel(key), textrules.CodePoint(r)), true
		}
		multiLine := multiLineField(key)
		for _, v := range values[key] {
			if r, bad := textrules.FirstRefused(v, multiLine); bad {
				return i18n.M("error.hidden_character", fieldLabel(key), textrules.CodePoint(r)), true
			}
		}
	}
	return i18n.Message{}, false
}

// fieldLabel is an input's name as the person reads it: the label of the field of that name,
// in their language, or the name itself for a field the person never types into.
type fieldLabel string

// In is the label in tr's language.
func (f fieldLabel) In(tr *i18n.Translator) string {
	switch f {
	case "name":
		return tr.T("text.field.name")
	case "q", "query":
		return tr.T("text.field.search")
	case "taxId":
		return tr.T("customer.field.tax_id")
	case "email":
		return tr.T("customer.field.email")
	case "phone":
		return tr.T("customer.field.phone")
	case "street":
		return tr.T("customer.field.street")
	case "city":
		return tr.T("customer.field.city")
	case "postalCode":
		return tr.T("customer.field.postal_code")
	case "country":
		return tr.T("customer.field.country")
	case "attributes":
		return tr.T("customer.detail.attributes")
	case "signerName":
		return tr.T("signature.field.name")
	case "message":
		return tr.T("signature.field.message")
	case "numbers":
		return tr.T("batch.field.numbers")
	case "quotes":
		return tr.T("worklist.field.quotes")
	}
	// The key was checked first: a refused key never reaches here as a label.
	if !textrules.Acceptable(string(f), false) {
		return "?"
	}
	return string(f)
}
