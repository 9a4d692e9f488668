package auditwords

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/cpqportal/portal/internal/i18n"
)

// Change is one field's change in the reader's words.
type Change struct {
	// Field is the field's label ("Price list of “Fibra 1000”").
	Field string
	// Before and After are the values in words; "" stands for empty.
	Before, After string
	// Changed is false when the v2 API recorded the same value before and after.
	Changed bool
}

// kind says how a field's values are read.
type kind int

const (
	kindText kind = iota
	kindDiscounts
	kindExtraDiscounts
	kindCarts
	kindItems
	kindPackages
	kindAttachments
	kindOwners
	kindConfigurators
	kindContractStatus
	kindSegment
	kindInteger
	kindMoney
	kindPricelist
)

// fields are the audit's fields the portal knows (A7 and what the simulator records), with the
// catalogue key of their label and how their values read.
var fields = map[string]struct {
	label string
	kind  kind
}{
	"appliedDiscounts":   {"audit.field.applied_discounts", kindDiscounts},
	"extraDiscounts":     {"audit.field.extra_discounts", kindExtraDiscounts},
	"carts":              {"audit.field.carts", kindCarts},
	"items":              {"audit.field.items", kindItems},
	"packages":           {"audit.field.packages", kindPackages},
	"attachments":        {"audit.field.attachments", kindAttachments},
	"contract":           {"audit.field.contract", kindText},
	`contract.status`:    {"audit.field.contract_status", kindContractStatus}, // a v2 field, not a catalogue key (raw literal: i18ncheck skips it)
	"owners":             {"audit.field.owners", kindOwners},
	"profiles":           {"audit.field.profiles", kindText},
	"cpqIds":             {"customer.form.configurators", kindConfigurators},
	"attributes":         {"audit.field.attributes", kindText},
	"name":               {"customer.field.name", kindText},
	"taxId":              {"customer.field.tax_id", kindText},
	"email":              {"customer.field.email", kindText},
	"phone":              {"customer.field.phone", kindText},
	"segment":            {"customer.field.segment", kindSegment},
	"address.street":     {"customer.field.street", kindText},
	"address.city":       {"customer.field.city", kindText},
	"address.postalCode": {"customer.field.postal_code", kindText},
	"address.country":    {"customer.field.country", kindText},
}

// indexedField is a field of one cart or item: carts[12].quantity, items[7].activationPrice.
var indexedField = regexp.MustCompile(`^(carts|items)\[(\d{1,19})\]\.([A-Za-z]{1,40})$`)

// Describe puts one recorded change into tr's words. before and after are the values as the v2
// API wrote them (strings; lists and objects as compact JSON, A7).
func Describe(tr *i18n.Translator, n *Names, field, before, after string) Change {
	if n == nil {
		n = &Names{}
	}
	label, k := field, kindText
	if f, ok := fields[field]; ok {
		label, k = tr.T(f.label), f.kind
	} else if m := indexedField.FindStringSubmatch(field); m != nil {
		id, _ := strconv.ParseInt(m[2], 10, 64)
		switch m[1] + "." + m[3] {
		case "carts.quantity":
			label, k = tr.T("quote.change.quantity", n.cart(tr, id)), kindInteger
		case "carts.pricelistId":
			label, k = tr.T("quote.change.pricelist", n.cart(tr, id)), kindPricelist
		case "items.activationPrice":
			label, k = tr.T("quote.change.unit_activation", n.item(tr, id)), kindMoney
		case "items.recurringPrice":
			label, k = tr.T("quote.change.unit_recurring", n.item(tr, id)), kindMoney
		}
	}
	return Change{Field: label, Before: n.value(tr, k, before), After: n.value(tr, k, after), Changed: before != after}
}

func numbered[K int32 | int64](tr *i18n.Translator, names map[K]string, id K, fallback string) string {
	if name, ok := names[id]; ok {
		return name
	}
	return tr.T(fallback, strconv.FormatInt(int64(id), 10))
}

func (n *Names) cart(tr *i18n.Translator, id int64) string {
	return numbered(tr, n.Carts, id, "audit.value.cart")
}

func (n *Names) item(tr *i18n.Translator, id int64) string {
	return numbered(tr, n.Items, id, "audit.value.item")
}

// value writes one value of kind k.
func (n *Names) value(tr *i18n.Translator, k kind, raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" || raw == "null" {
		return ""
	}
	switch k {
	case kindDiscounts, kindCarts, kindItems, kindPackages, kindAttachments, kindOwners, kindConfigurators, kindPricelist:
		ids, ok := idList(raw)
		if !ok {
			return plain(tr, raw)
		}
		words := make([]string, 0, len(ids))
		for _, id := range ids {
			words = append(words, n.named(tr, k, id))
		}
		return strings.Join(words, ", ")
	case kindExtraDiscounts:
		var extras []struct {
			DiscountID int64    `json:"discountId"`
			Value      *float64 `json:"discountValue"`
		}
		if err := json.Unmarshal([]byte(raw), &extras); err != nil {
			return plain(tr, raw)
		}
		words := make([]string, 0, len(extras))
		for _, e := range extras {
			word := n.named(tr, kindDiscounts, e.DiscountID)
			if e.Value != nil {
				// A4: an extra discount's value is a percentage.
				word = tr.T("audit.value.extra_discount", word, tr.Percent(*e.Value/100))
			}
			words = append(words, word)
		}
		return strings.Join(words, ", ")
	case kindContractStatus:
		return codeWord(tr, contractStatusKeys, raw)
	case kindSegment:
		return codeWord(tr, segmentKeys, raw)
	case kindInteger:
		if v, err := strconv.ParseInt(raw, 10, 64); err == nil {
			return tr.Integer(v)
		}
	case kindMoney:
		if v, err := strconv.ParseFloat(raw, 64); err == nil && !math.IsInf(v, 0) && !math.IsNaN(v) && math.Abs(v) < 1e15 {
			currency := n.Currency
			if currency == "" {
				currency = "EUR"
			}
			return tr.Money(int64(math.Round(v*100)), currency)
		}
	}
	return plain(tr, raw)
}

// named is the name of id as a thing of kind k, or its numbered word.
func (n *Names) named(tr *i18n.Translator, k kind, id int64) string {
	switch k {
	case kindDiscounts:
		return numbered(tr, n.Discounts, int32(id), "audit.value.discount")
	case kindCarts:
		return n.cart(tr, id)
	case kindItems:
		return n.item(tr, id)
	case kindPackages:
		return numbered(tr, n.Packages, int32(id), "audit.value.package")
	case kindAttachments:
		return numbered(tr, n.Attachments, int32(id), "audit.value.attachment")
	case kindOwners:
		return numbered(tr, n.Owners, id, "audit.value.user")
	case kindConfigurators:
		return numbered(tr, n.Configurators, int32(id), "customer.configurator_id")
	case kindPricelist:
		return numbered(tr, n.Pricelists, int32(id), "quote.pricelist.numbered")
	}
	return strconv.FormatInt(id, 10)
}

// idList reads one id ("12") or a JSON list of ids ("[1,2]").
func idList(raw string) ([]int64, bool) {
	if id, err := strconv.ParseInt(raw, 10, 64); err == nil {
		return []int64{id}, true
	}
	var ids []int64
	if err := json.Unmarshal([]byte(raw), &ids); err != nil {
		return nil, false
	}
	return ids, true
}

// contractStatusKeys and segmentKeys are the catalogue's words of the codes (A7, A8).
var (
	contractStatusKeys = map[string]string{"GENERATED": "contract.status.generated",
		"SIGNATURE_REQUESTED": "contract.status.signature_requested", "SIGNED": "contract.status.signed", "ARCHIVED": "contract.status.archived"}
	segmentKeys = map[string]string{"BUSINESS": "customer.segment.business", "CONSUMER": "customer.segment.consumer",
		"PUBLIC": "customer.segment.public"}
)

// codeWord is a code (GENERATED) as the catalogue's word, or the code made readable.
func codeWord(tr *i18n.Translator, keys map[string]string, code string) string {
	if key, ok := keys[code]; ok {
		return tr.T(key)
	}
	return readable(code)
}

// readable turns a code (SIGNATURE_REQUESTED) into words (Signature requested).
func readable(code string) string {
	if code == "" || strings.ToUpper(code) != code {
		return code
	}
	words := strings.ToLower(strings.ReplaceAll(code, "_", " "))
	return strings.ToUpper(words[:1]) + words[1:]
}

// plain writes a value that is not one of the known kinds: text as it is, JSON as words (lists
// joined with commas, objects as "key: value" pairs in key order, numbers in the reader's format,
// true and false as yes and no), so no reader meets braces and quotes.
func plain(tr *i18n.Translator, raw string) string {
	if raw == "" || (raw[0] != '{' && raw[0] != '[') {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw
	}
	return words(tr, v)
}

func words(tr *i18n.Translator, v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case bool:
		if v {
			return tr.T("audit.value.yes")
		}
		return tr.T("audit.value.no")
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return tr.Integer(i)
		}
		if f, err := v.Float64(); err == nil {
			text := strconv.FormatFloat(f, 'f', -1, 64)
			digits := 0
			if _, frac, ok := strings.Cut(text, "."); ok {
				digits = min(len(frac), 6)
			}
			return tr.Decimal(f, digits)
		}
		return v.String()
	case []any:
		parts := make([]string, 0, len(v))
		for _, e := range v {
			parts = append(parts, words(tr, e))
		}
		return strings.Join(parts, ", ")
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, k+": "+words(tr, v[k]))
		}
		return strings.Join(parts, "; ")
	}
	return ""
}

// toldByChanges are the actions (A7) whose changes, in words, tell what happened: the v2's
// summary of such an entry (an English sentence with internal ids, "Cart 700007 added with ...")
// is left out of the pages, where the changes are shown (it stays in the raw JSON and the
// exports). The others (QUOTE_CREATED, SIGNATURE_REQUESTED, ...) keep it: their changes say less
// than their summary (who was asked to sign).
var toldByChanges = map[string]bool{
	"CART_ADDED": true, "CART_REMOVED": true, "ITEM_ADDED": true, "ITEM_REMOVED": true, "QUANTITY_CHANGED": true,
	"DISCOUNTS_APPLIED": true, "REPRICED": true, "PACKAGE_ADDED": true, "PRICELIST_CHANGED": true,
	"ATTACHMENT_ADDED": true, "ATTACHMENT_DELETED": true, "CONTRACT_GENERATED": true, "CUSTOMER_UPDATED": true,
}

// ShowSummary reports whether a page shows the v2's summary of an entry of action with
// changes recorded: not when the changes in words tell the same.
func ShowSummary(action string, changes int) bool {
	return changes == 0 || !toldByChanges[action]
}
