package handlers

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/countries"
	"github.com/cpqportal/portal/internal/i18n"
)

// Fuzz targets for the form and query parsers of the pages (docs/security.md, suite 2): whatever
// the input, a parser either refuses it with a message or returns a value inside the bounds of
// docs/v2-assumptions.md, so nothing out of bounds is ever sent to the v2 API. The bounds below
// are written from the assumptions, not copied from the parsers, so the two are checked against
// each other. Seeds: testdata/fuzz/<FuzzName>/.

// FuzzFormQuantity: a cart quantity is a whole number from 1 to 9999 (A5 #8).
func FuzzFormQuantity(f *testing.F) {
	for _, s := range []string{"1", "9999", "10000", "0", "-1", "+1", "01", "1.0", "1e3", " 2", "２", "", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		n, msg := parseQuantity(raw)
		if !msg.IsZero() {
			if n != 0 {
				t.Fatalf("%q: refused (%q) but returned %d", raw, msg, n)
			}
			return
		}
		if n < 1 || n > 9999 {
			t.Fatalf("%q accepted as %d, outside 1..9999", raw, n)
		}
		if !regexp.MustCompile(`^[0-9]+$`).MatchString(raw) {
			t.Fatalf("%q accepted although it is not only digits", raw)
		}
	})
}

// FuzzFormPrice: a reprice is an amount in euros from 0 to 1,000,000 with at most two decimals
// (A5 #13; money has at most two decimals), whatever the reader's language.
func FuzzFormPrice(f *testing.F) {
	for _, s := range []string{"49.90", "49,90", "€ 12", "12 €", "1.234,50", "1,234.50", "0", "1000000", "1000000.01", "-1", "1e3", "NaN", "Inf", "0x10", "1.005", "", " 7 ", "١٢"} {
		f.Add(s)
	}
	translators := fuzzTranslators(f)
	f.Fuzz(func(t *testing.T, raw string) {
		for _, tr := range translators {
			v, msg := parsePrice(tr, raw, false)
			if !msg.IsZero() {
				if v != 0 {
					t.Fatalf("%s %q: refused (%q) but returned %v", tr.Lang(), raw, msg.Key, v)
				}
				continue
			}
			checkPrice(t, raw, v)
		}
	})
}

// checkPrice fails unless v is an amount the v2 API accepts for a reprice.
func checkPrice(t *testing.T, raw string, v float64) {
	t.Helper()
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 1_000_000 {
		t.Fatalf("%q accepted as %v, outside 0..1,000,000", raw, v)
	}
	if cents := v * 100; math.Abs(cents-math.Round(cents)) > 1e-6 {
		t.Fatalf("%q accepted as %v: more than two decimals", raw, v)
	}
	if _, err := json.Marshal(v); err != nil {
		t.Fatalf("%q accepted as %v, which is no JSON number: %v", raw, v, err)
	}
}

// FuzzFormPercent: an extra discount value is more than 0 and at most the discount's maximum (A5 #12),
// whatever the reader's language.
func FuzzFormPercent(f *testing.F) {
	for _, s := range []string{"5", "7.5", "7,5", "20", "20.01", "0", "0.00", "-5", "NaN", "Inf", "1e1", "", "100"} {
		f.Add(s, 20.0)
	}
	translators := fuzzTranslators(f)
	f.Fuzz(func(t *testing.T, raw string, maxValue float64) {
		if math.IsNaN(maxValue) || maxValue <= 0 || maxValue > 100 {
			return // the maximum comes from the v2 API's discount list, not from the user
		}
		for _, tr := range translators {
			v, msg := parsePercent(tr, raw, maxValue)
			if !msg.IsZero() {
				continue
			}
			if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 || v > maxValue {
				t.Fatalf("%s %q accepted as %v, outside (0, %v]", tr.Lang(), raw, v, maxValue)
			}
		}
	})
}

// fuzzTranslators are the translators of every language: numbers are read the reader's way
// (decimal comma and dot grouping in Italian, a space grouping in French).
func fuzzTranslators(f *testing.F) []*i18n.Translator {
	bundle, err := i18n.Load()
	if err != nil {
		f.Fatal(err)
	}
	out := make([]*i18n.Translator, 0, len(i18n.Languages))
	for _, tag := range i18n.Languages {
		out = append(out, bundle.Translator(tag))
	}
	return out
}

// FuzzFormOwnerIDs: an owner list is 1 to 10 distinct ids >= 1 (A8).
func FuzzFormOwnerIDs(f *testing.F) {
	en := testTranslator(f, "en")
	for _, s := range []string{"1001", "1001, 1002", "1001;1002 1003", "1001,1001", "", ",,,", "0", "-1", "1,2,3,4,5,6,7,8,9,10,11", "１００１", "1001\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		ids, problem := parseOwnerIDList(raw)
		if msg := problem.In(en); !problem.IsZero() {
			if !utf8.ValidString(msg) {
				t.Fatalf("%q: the message quoting the input is not valid UTF-8: %q", raw, msg)
			}
			return
		}
		if len(ids) < 1 || len(ids) > 10 {
			t.Fatalf("%q accepted as %d ids, want 1 to 10", raw, len(ids))
		}
		seen := map[int64]bool{}
		for _, id := range ids {
			if id < 1 || seen[id] {
				t.Fatalf("%q accepted as %v: ids must be >= 1 and distinct", raw, ids)
			}
			seen[id] = true
		}
	})
}

// FuzzCustomerListQuery: the customer list's query string (q, cpqId, sort, dir, page) is either
// refused with a 400 or read into bounded values.
func FuzzCustomerListQuery(f *testing.F) {
	for _, s := range []string{"q=rossi&sort=name&dir=asc&page=2", "cpqId=0", "cpqId=2147483648", "page=0", "page=99999999",
		"sort=__proto__", "dir=sideways", "q=%FF", "q=" + strings.Repeat("a", 201), "q=a&q=b", "page=1e3", "%zz"} {
		f.Add(s)
	}
	gin.SetMode(gin.ReleaseMode)
	f.Fuzz(func(t *testing.T, rawQuery string) {
		c, _ := gin.CreateTestContext(httptest.NewRecorder())
		c.Request = httptest.NewRequest(http.MethodGet, "/customers", nil)
		c.Request.URL.RawQuery = rawQuery
		p, err := parseCustomerListParams(c)
		if err != nil {
			wantBadRequest(t, rawQuery, err)
			return
		}
		if !utf8.ValidString(p.Query) || utf8.RuneCountInString(p.Query) > 200 {
			t.Fatalf("%q: search text %q accepted", rawQuery, p.Query)
		}
		if p.CPQID < 0 || p.Page < 1 || p.Page > 1_000_000 {
			t.Fatalf("%q: accepted cpqId %d, page %d", rawQuery, p.CPQID, p.Page)
		}
		// The list's own links rebuild a query that reads back the same.
		u := p.url()
		c.Request.URL.RawQuery = u.RawQuery
		again, err := parseCustomerListParams(c)
		if err != nil || again != p {
			t.Fatalf("%q: the list's own link %q reads back as %+v, %v (want %+v)", rawQuery, u.RawQuery, again, err, p)
		}
	})
}

// FuzzCustomerForm: a customer form the portal accepts satisfies every rule of A8 the v2 API
// checks, so a valid-looking form never turns into a 422 round trip with data the user cannot see.
func FuzzCustomerForm(f *testing.F) {
	en := testTranslator(f, "en")
	f.Add("Rossi S.p.A.", "it01234567890", "info@rossi.example", "+39 02 1234567", "BUSINESS", "it", `{"tier":"gold"}`)
	f.Add("<script>alert(1)</script>", "IT0123", "not-an-email", "12", "ADMIN", "ITA", `[1,2]`)
	f.Add("\x00", "IT01234567890\n", "a@b.c", "+390212345678901234567", "PUBLIC", "", `{"a":`)
	f.Add(strings.Repeat("N", 201), "XX"+strings.Repeat("9", 15), "", "", "CONSUMER", "DE", "null")
	gin.SetMode(gin.ReleaseMode)
	taxID := regexp.MustCompile(`^[A-Z]{2}[A-Z0-9]{8,14}$`)
	phone := regexp.MustCompile(`^\+?[0-9 ]{6,20}$`)
	known := countries.New()
	f.Fuzz(func(t *testing.T, name, tax, email, tel, segment, ctry, attributes string) {
		form := url.Values{"name": {name}, "taxId": {tax}, "email": {email}, "phone": {tel}, "segment": {segment},
			"country": {ctry}, "attributes": {attributes}, "street": {name}, "city": {name}}
		c, _ := gin.CreateTestContext(httptest.NewRecorder())
		c.Request = httptest.NewRequest(http.MethodPost, "/customers", strings.NewReader(form.Encode()))
		c.Request.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		cf, err := readCustomerForm(c)
		if err != nil {
			return
		}
		if errs := cf.validate(en, known.Has); len(errs) > 0 {
			return
		}
		for label, v := range map[string]string{"name": cf.Name, "street": cf.Street, "city": cf.City} {
			if !utf8.ValidString(v) || utf8.RuneCountInString(v) > 200 || strings.ContainsFunc(v, unicode.IsControl) {
				t.Fatalf("%s %q accepted", label, v)
			}
		}
		if n := utf8.RuneCountInString(cf.Name); n < 1 {
			t.Fatalf("an empty name was accepted")
		}
		if !taxID.MatchString(cf.TaxID) {
			t.Fatalf("tax id %q accepted", cf.TaxID)
		}
		if cf.Phone != "" && !phone.MatchString(cf.Phone) {
			t.Fatalf("phone %q accepted", cf.Phone)
		}
		if cf.Country != "" && !known.Has(cf.Country) {
			t.Fatalf("country %q accepted", cf.Country)
		}
		if segment := cf.Segment; segment != "BUSINESS" && segment != "CONSUMER" && segment != "PUBLIC" {
			t.Fatalf("segment %q accepted", segment)
		}
		if cf.Email != "" && (!strings.Contains(cf.Email, "@") || strings.ContainsAny(cf.Email, " <>\"")) {
			t.Fatalf("e-mail %q accepted", cf.Email)
		}
		if cf.Attributes != "" {
			var obj map[string]any
			if json.Unmarshal([]byte(cf.Attributes), &obj) != nil || obj == nil {
				t.Fatalf("attributes %q accepted, not a JSON object", cf.Attributes)
			}
		}
	})
}
