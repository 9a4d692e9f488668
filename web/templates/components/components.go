// Package components holds the portal's shared widgets: error page, toast, form fields with
// their error messages, GOV.UK-style error summary, JSON viewer, pagination, spinner, empty state,
// badge and key/value list.
//
// Components take plain values or small view-model structs, escape everything they print (never
// templ.Raw), and carry data-testid attributes so tests can find them with goquery or Playwright.
package components

import (
	"net/url"
	"strconv"
	"time"

	"github.com/a-h/templ"
)

// Link is a labelled URL (a local path such as "/customers").
type Link struct {
	Href  string
	Label string
}

// ToastLevel is the kind of a toast; it picks the colour and the ARIA role.
type ToastLevel string

// Toast levels. Errors and warnings stay until dismissed; info and success fade (app.js).
const (
	ToastInfo    ToastLevel = "info"
	ToastSuccess ToastLevel = "success"
	ToastWarning ToastLevel = "warning"
	ToastError   ToastLevel = "error"
)

func (l ToastLevel) role() string {
	if l == ToastError {
		return "alert"
	}
	return "status"
}

func (l ToastLevel) valid() ToastLevel {
	switch l {
	case ToastInfo, ToastSuccess, ToastWarning, ToastError:
		return l
	}
	return ToastInfo
}

// BadgeLevel colours a badge.
type BadgeLevel string

// Badge levels.
const (
	BadgeNeutral BadgeLevel = ""
	BadgeInfo    BadgeLevel = "info"
	BadgeSuccess BadgeLevel = "success"
	BadgeWarning BadgeLevel = "warning"
	BadgeDanger  BadgeLevel = "danger"
)

func (l BadgeLevel) class() string {
	if l == BadgeNeutral {
		return "badge"
	}
	return "badge badge--" + string(l)
}

// Field is the view model of one form field (TextField, TextArea, Select).
//
// The input's id is ID, or "field-"+Name when ID is empty; ErrorSummary links point to it.
// The hint and error get ids <id>-hint and <id>-error and are referenced by aria-describedby;
// a field with an Error has aria-invalid="true".
type Field struct {
	ID           string
	Name         string
	Label        string
	Type         string // input type; "text" when empty
	Value        string // the user's input, kept when the form is shown again with errors
	Hint         string
	Error        string
	Required     bool
	Autocomplete string
	// Attrs are extra attributes for the input: maxlength, pattern, inputmode, data-search, hx-*...
	Attrs templ.Attributes
}

// InputID is the id of the field's control.
func (f Field) InputID() string {
	if f.ID != "" {
		return f.ID
	}
	return "field-" + f.Name
}

func (f Field) hintID() string  { return f.InputID() + "-hint" }
func (f Field) errorID() string { return f.InputID() + "-error" }

func (f Field) inputType() string {
	if f.Type == "" {
		return "text"
	}
	return f.Type
}

// describedBy lists the hint and error ids, or "" when there are none.
func (f Field) describedBy() string {
	ids := ""
	if f.Hint != "" {
		ids = f.hintID()
	}
	if f.Error != "" {
		if ids != "" {
			ids += " "
		}
		ids += f.errorID()
	}
	return ids
}

// controlAttrs are the attributes every control of a field shares.
func (f Field) controlAttrs() templ.Attributes {
	attrs := templ.Attributes{"id": f.InputID(), "name": f.Name}
	if d := f.describedBy(); d != "" {
		attrs["aria-describedby"] = d
	}
	if f.Error != "" {
		attrs["aria-invalid"] = "true"
	}
	if f.Required {
		attrs["required"] = true
		attrs["aria-required"] = "true"
	}
	if f.Autocomplete != "" {
		attrs["autocomplete"] = f.Autocomplete
	}
	for k, v := range f.Attrs {
		attrs[k] = v
	}
	return attrs
}

// Option is one choice of a Select.
type Option struct {
	Value string
	Label string
}

// FieldError is one entry of the error summary: the message and the id of the field it is about
// ("" when it is about no one field: shown without a link).
type FieldError struct {
	FieldID string
	Message string
}

// SummaryFrom lists the errors of the given fields, in form order, for ErrorSummary.
func SummaryFrom(fields ...Field) []FieldError {
	var out []FieldError
	for _, f := range fields {
		if f.Error != "" {
			out = append(out, FieldError{FieldID: f.InputID(), Message: f.Error})
		}
	}
	return out
}

// KV is one entry of a KeyValues list.
type KV struct {
	Key   string
	Value string    // shown when At is the zero time
	At    time.Time // an instant, shown as DateTime
}

// Pager is the view model of Pagination. Build it with NewPager.
type Pager struct {
	Page, Pages int
	Prev, Next  string // URLs; empty on the first/last page
	Links       []PageLink
	// Target, when set, makes the links htmx requests that swap this element (e.g. "#customer-list")
	// and push the URL; without htmx they still work as plain links.
	Target string
}

// PageLink is one entry of the pager: a page number or a gap ("…").
type PageLink struct {
	Page    int
	Href    string
	Current bool
	Gap     bool
}

// NewPager builds a pager for page (1-based) of pages. Links keep base's path and query and set
// param (e.g. "page") to the page number. Pages shown: first, last, and two either side of the current.
func NewPager(base url.URL, param string, page, pages int, target string) Pager {
	if pages < 1 {
		pages = 1
	}
	page = min(max(page, 1), pages)
	href := func(n int) string {
		u := base
		q := u.Query()
		q.Set(param, strconv.Itoa(n))
		u.RawQuery = q.Encode()
		return u.RequestURI()
	}
	p := Pager{Page: page, Pages: pages, Target: target}
	if page > 1 {
		p.Prev = href(page - 1)
	}
	if page < pages {
		p.Next = href(page + 1)
	}
	last := 0
	for n := 1; n <= pages; n++ {
		if n != 1 && n != pages && (n < page-2 || n > page+2) {
			continue
		}
		if last != 0 && n > last+1 {
			p.Links = append(p.Links, PageLink{Gap: true})
		}
		p.Links = append(p.Links, PageLink{Page: n, Href: href(n), Current: n == page})
		last = n
	}
	return p
}

// linkAttrs are the htmx attributes of a pager link when the pager has a Target.
func (p Pager) linkAttrs(href string) templ.Attributes {
	if p.Target == "" {
		return nil
	}
	return templ.Attributes{"hx-get": href, "hx-target": p.Target, "hx-push-url": "true", "hx-swap": "outerHTML"}
}

// RecentRow is one of the user's recent quotes or contracts (internal/recent), as RecentTable shows it.
type RecentRow struct {
	Label    string // "Quote 900001", "Contract C-2026-000042"
	Href     string // a local path
	Customer string
	Total    string
	Status   string
	When     time.Time
	QuoteID  int64
}

// TimeMark stands for a time inside a sentence while it is translated, so TimeSentence can render
// that part as a <time> element app.js can show in the browser's time zone.
const TimeMark = "\x00time\x00"

// ZoneMark stands for a time zone's name inside a sentence while it is translated, so
// ZoneSentence can render it as an element app.js can rename when it shows the page's times in
// the browser's zone.
const ZoneMark = "\x00zone\x00"

// ISOTime is the machine-readable form of at for <time datetime>: RFC 3339 in UTC, whatever zone
// the page is shown in, so app.js reads the same instant in every zone.
func ISOTime(at time.Time) string { return at.UTC().Format(time.RFC3339) }
