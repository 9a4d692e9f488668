package e2e

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// Issue 33 (the offer's customer data): every field keeps what was typed or says why not. In a
// German browser the country is chosen from countries named in German; a name too long and a
// country that is not on the list (as an old page or an autofill may send) each get their
// message next to the field, in German, and the form keeps what was typed.
func TestOfferCustomerFieldsSayWhyNot(t *testing.T) {
	page := newPageWith(t, pageOptions{locale: "de-DE"})
	login(t, page, salesUser, salesPassword)
	_, err := page.Goto("/customers/new")
	check(t, err, "open the new customer form")
	country := page.Locator(`[data-testid="customer-form"] select[name="country"]`)
	check(t, suite.expect.Locator(country.Locator(`option[value="DE"]`)).ToHaveText("Deutschland"), "Germany is named in German")
	check(t, suite.expect.Locator(country.Locator(`option[value="GE"]`)).ToHaveText("Georgien"), "Georgia too")

	long := strings.Repeat("Lange Firma", 19) // 209 characters
	custFill(t, page, "name", long)
	custFill(t, page, "taxId", custTaxID())
	_, err = country.Evaluate(`select => { select.add(new Option("Germany", "Germany", true, true)); }`, nil)
	check(t, err, "put a value that is not a code into the country")
	check(t, page.Locator(`[data-testid="customer-save"]`).Click(), "submit")

	check(t, suite.expect.Locator(page.Locator(`[data-testid="field-name"] [data-testid="field-error"]`)).
		ToContainText("Name darf höchstens 200 Zeichen lang sein"), "the name says why")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="field-country"] [data-testid="field-error"]`)).
		ToContainText("Land: Wählen Sie ein Land aus der Liste („GERMANY“ ist keiner ihrer Codes)"), "the country says why")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="customer-form"] [name="name"]`)).ToHaveValue(long), "the name is kept whole")

	custFill(t, page, "name", "Kurze Firma "+custUnique()+" GmbH")
	_, err = page.Locator(`[data-testid="customer-form"] select[name="country"]`).SelectOption(playwright.SelectOptionValues{Labels: &[]string{"Deutschland"}})
	check(t, err, "choose Deutschland")
	check(t, page.Locator(`[data-testid="customer-save"]`).Click(), "submit again")
	check(t, suite.expect.Page(page).ToHaveURL(custCustomerURL), "the customer is created")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="customer-summary"]`)).ToContainText("Deutschland"), "with the country named in German")
}

// Issue 33 (the offer's documents): random bytes named .pdf are refused with a message naming the
// file, and nothing is stored.
func TestOfferUploadRefusesAFakePDF(t *testing.T) {
	page := newPage(t)
	login(t, page, salesUser, salesPassword)
	_, quotePath := docsCreateQuote(t, page, "Fake PDF")
	region := docsOpenDocuments(t, page, quotePath)
	form := region.Locator(`[data-testid="upload-form"]`)

	content := make([]byte, 64<<10)
	rng := rand.New(rand.NewPCG(3, 3))
	for i := range content {
		content[i] = byte(rng.UintN(256))
	}
	_, err := form.Locator(`select[name=attachmentType]`).SelectOption(playwright.SelectOptionValues{Values: &[]string{"CONTRACT_ANNEX"}})
	check(t, err, "choose the attachment type")
	check(t, form.Locator(`[data-testid="file-input"]`).SetInputFiles([]playwright.InputFile{{Name: "annex.pdf", MimeType: "application/pdf", Buffer: content}}),
		"choose random bytes named annex.pdf")
	check(t, form.Locator(`[data-testid="upload-submit"]`).Click(), "click Upload")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="toast"][data-level="error"]`).First()).
		ToContainText(`"annex.pdf" is not a PDF file: its content does not match its name. Nothing was stored.`), "the upload says why not")
	check(t, suite.expect.Locator(region.Locator(`[data-testid="attachments-empty"]`)).ToBeVisible(), "nothing is listed")
}
