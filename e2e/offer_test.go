package e2e

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/cpqportal/portal/internal/offer"
)

// The offer document (internal/offer, docs/quotes.md "The offer"): made in the language chosen for
// the customer, previewed inline, stored on the quote through the v2 attachment call and
// downloaded byte for byte as it was stored.

// offerEuros reads an amount as the English quote page writes it ("€1,234.50", "-€3.00") in cents.
func offerEuros(t *testing.T, text string) int64 {
	t.Helper()
	digits := regexp.MustCompile(`[^0-9]`).ReplaceAllString(text, "")
	cents, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || !strings.Contains(text, ".") {
		t.Fatalf("not an amount of the English page: %q", text)
	}
	if strings.Contains(text, "-") || strings.Contains(text, "−") {
		cents = -cents
	}
	return cents
}

// offerMoneyIn writes cents as Italian or German write euros: "1234,50 €" and "12.345,50 €" in
// Italian (CLDR groups Italian amounts from five digits), "1.234,50 €" in German.
func offerMoneyIn(lang string, cents int64) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	whole := strconv.FormatInt(cents/100, 10)
	if len(whole) > 4 || (lang == "de" && len(whole) > 3) {
		var b strings.Builder
		for i, r := range whole {
			if i > 0 && (len(whole)-i)%3 == 0 {
				b.WriteByte('.')
			}
			b.WriteRune(r)
		}
		whole = b.String()
	}
	return fmt.Sprintf("%s%s,%02d €", sign, whole, cents%100)
}

// offerText is the text of an offer PDF with its no-break spaces made plain.
func offerText(t *testing.T, pdf []byte) string {
	t.Helper()
	text, err := offer.Text(pdf)
	if err != nil {
		t.Fatalf("read the offer's text: %v", err)
	}
	return strings.NewReplacer("\u00a0", " ", "\u202f", " ").Replace(text)
}

func TestOfferInItalianAndGermanIsStoredAndDownloadsAsStored(t *testing.T) {
	page := newPage(t)
	login(t, page, salesUser, salesPassword)
	docsAcceptDialogs(page)
	customer, quotePath := docsCreateQuote(t, page, "Offer")
	region := docsOpenDocuments(t, page, quotePath)

	// What the quote page shows: its lines and its net totals (the page is in English).
	names, err := page.Locator(`[data-testid="line-name"]`).AllInnerTexts()
	check(t, err, "read the quote's lines")
	if len(names) == 0 {
		t.Fatal("the quote page shows no lines")
	}
	oneOffText, err := page.Locator(`[data-testid="quote-net-activation"]`).First().InnerText()
	check(t, err, "read the one-off total")
	monthlyText, err := page.Locator(`[data-testid="quote-net-recurring"]`).First().InnerText()
	check(t, err, "read the monthly total")
	oneOff, monthly := offerEuros(t, oneOffText), offerEuros(t, monthlyText)

	section := region.Locator(`[data-testid="offer-section"]`)
	check(t, suite.expect.Locator(section.Locator(`[data-testid="offer-none"]`)).ToBeVisible(), "no offer yet")

	languages := []struct {
		code  string
		words []string
	}{
		{"it", []string{"Offerta", "Valida fino al", "Carrello 1", "Totale", "Il vostro referente", "prodotto principale"}},
		{"de", []string{"Angebot", "Gültig bis", "Warenkorb 1", "Gesamtsumme", "Ihr Ansprechpartner", "Hauptprodukt"}},
	}
	for i, lang := range languages {
		section := page.Locator(`[data-testid="offer-section"]`)
		_, err := section.Locator(`#offer-lang`).SelectOption(playwright.SelectOptionValues{Values: &[]string{lang.code}})
		check(t, err, "choose the offer's language "+lang.code)

		// The preview: the button opens the offer in a tab of its own, inline, nothing stored.
		previewURL := quotePath + "/offer?lang=" + lang.code
		popup, err := page.ExpectPopup(func() error { return section.Locator(`[data-testid="offer-preview"]`).Click() })
		check(t, err, "preview the offer in "+lang.code)
		check(t, popup.WaitForURL(portalURL(previewURL)), "the preview tab shows the "+lang.code+" offer")
		check(t, popup.Close(), "close the preview")
		check(t, page.BringToFront(), "back to the quote's tab") // a background tab draws no frames
		check(t, suite.expect.Locator(page.Locator(`[data-testid="attachment-row"]`)).ToHaveCount(i), "a preview stores nothing")
		resp, err := page.Request().Get(portalURL(previewURL))
		check(t, err, "preview the offer in "+lang.code)
		preview, _ := resp.Body()
		if resp.Status() != 200 || resp.Headers()["content-type"] != "application/pdf" ||
			!strings.HasPrefix(resp.Headers()["content-disposition"], "inline") {
			t.Fatalf("the preview %s answered %d %q %q", previewURL, resp.Status(), resp.Headers()["content-type"], resp.Headers()["content-disposition"])
		}

		// Send: stored on the quote, listed with its documents.
		clickSettled(t, page, section.Locator(`[data-testid="offer-send"]`), "send the offer in "+lang.code)
		rows := page.Locator(`[data-testid="attachment-row"][data-file-name*="-` + lang.code + `-"]`)
		check(t, suite.expect.Locator(rows).ToHaveCount(1), "the "+lang.code+" offer is listed with the quote's documents")
		check(t, suite.expect.Locator(page.Locator(`[data-testid="attachment-row"]`)).ToHaveCount(i+1), "one document per offer sent")
		check(t, suite.expect.Locator(rows.Locator(`[data-testid="attachment-type"]`)).ToHaveText("Offer (PDF)"), "listed as an offer")
		check(t, suite.expect.Locator(page.Locator(`[data-testid="offer-latest"]`)).ToContainText("-"+lang.code+"-"), "the latest offer is named")
		check(t, suite.expect.Locator(page.Locator(`[data-testid="offer-stale"]`)).ToHaveCount(0), "a fresh offer is not stale")

		// Downloaded, it is what was stored (its SHA-256 as the v2 API computed it) and what the
		// preview showed.
		stored, err := rows.Locator(`.hash`).GetAttribute("title")
		check(t, err, "read the stored offer's hash")
		data, name := docsDownload(t, page, "the "+lang.code+" offer", func() error {
			return rows.Locator(`[data-testid="attachment-download"]`).Click()
		})
		if stored != "SHA-256 "+docsSHA(data) {
			t.Errorf("the %s offer downloaded (%s) is not the one stored (%s)", lang.code, docsSHA(data), stored)
		}
		if !bytes.Equal(data, preview) {
			t.Errorf("the %s offer downloaded differs from its preview", lang.code)
		}
		if listed, _ := rows.GetAttribute("data-file-name"); name != listed {
			t.Errorf("the %s offer downloads as %q, listed as %q", lang.code, name, listed)
		}

		text := offerText(t, data)
		want := append([]string{customer.Name, offerMoneyIn(lang.code, oneOff), offerMoneyIn(lang.code, monthly),
			quotePath[strings.LastIndex(quotePath, "/")+1:], displayName(t, salesUser)}, lang.words...)
		want = append(want, names...)
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("the %s offer does not show %q; it shows:\n%s", lang.code, w, text)
			}
		}
	}

	// A change of the quote after the latest offer: the page says the offer is older.
	quantity := page.Locator(`[data-testid="cart-quantity"]`).First()
	check(t, quantity.Fill("3"), "change the quantity")
	clickSettled(t, page, page.Locator(`[data-testid="cart-quantity-submit"]`).First(), "update the quantity")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="cart-quantity-was"]`).First()).ToBeVisible(), "the quantity changed")
	docsOpenDocuments(t, page, quotePath)
	check(t, suite.expect.Locator(page.Locator(`[data-testid="offer-stale"]`)).ToBeVisible(), "the offer is older than the quote's last change")
}
