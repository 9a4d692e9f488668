package handlers

import (
	"bytes"
	"fmt"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/offer"
	"github.com/cpqportal/portal/web/templates/quotes"
)

// offerLangField is the form and query field naming the offer's language.
const offerLangField = "lang"

// madeOffer is an offer made for a request: the PDF, its file name and its language.
type madeOffer struct {
	pdf      []byte
	fileName string
	lang     string
	// version is the quote's fingerprint (offer.Fingerprint); customer the quote's customer.
	version  string
	customer *apiclient.Customer
}

// offerTranslator is the translator of the language the request names in lang (one of the
// portal's five), else of the reader's; in the reader's time zone.
func (h *Handler) offerTranslator(c *gin.Context, code string) *i18n.Translator {
	reader := tr(c)
	if tag, ok := h.i18n.Supported(code); ok {
		return h.i18n.Translator(tag).InZone(reader.Zone())
	}
	return reader
}

// makeOffer reads the quote (call 10) and its customer, and makes the offer in the language
// code (docs/quotes.md, "The offer"). The rep is the signed-in user.
func (h *Handler) makeOffer(c *gin.Context, ref quotes.Ref, code string) (madeOffer, error) {
	ctx := h.apiContext(c)
	customerOf := later(func() (*apiclient.Customer, error) { return h.api.Customers.Get(ctx, ref.CustomerID) })
	quote, err := h.loadQuote(ctx, ref)
	customer, customerErr := customerOf()
	if err != nil {
		return madeOffer{}, err
	}
	if customerErr != nil {
		return madeOffer{}, fmt.Errorf("offer: read customer %d: %w", ref.CustomerID, customerErr)
	}
	if len(quote.Carts) == 0 {
		return madeOffer{}, badRequest("offer.no_carts")
	}
	otr := h.offerTranslator(c, code)
	user := auth.CurrentUser(c)
	date := h.now().In(otr.Zone())
	pdf, err := offer.Make(otr, offer.Input{
		Quote: quote,
		Customer: offer.Customer{Name: customer.Name, TaxID: customer.TaxID, Email: customer.Email, Phone: customer.Phone,
			Address: customer.Address},
		Rep:  offer.Rep{Name: user.Name, Email: user.Email},
		Date: date,
	})
	if err != nil {
		return madeOffer{}, err
	}
	version := offer.Fingerprint(quote)
	return madeOffer{pdf: pdf, fileName: offer.FileName(ref.QuoteID, otr.Lang(), date, version), lang: otr.Lang(),
		version: version, customer: customer}, nil
}

// previewOffer answers GET /quotes/:cpqId/:customerId/:quoteId/offer?lang=it: the offer shown in
// the browser (Content-Disposition inline). Nothing is stored.
func (h *Handler) previewOffer(c *gin.Context) {
	ref, err := parseQuoteRef(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	made, err := h.makeOffer(c, ref, c.Query(offerLangField))
	if err != nil {
		h.fail(c, err)
		return
	}
	err = h.streamFile(c, fileResponse{contentType: offer.ContentType, length: int64(len(made.pdf)), disposition: "inline",
		fileName: made.fileName}, bytes.NewReader(made.pdf))
	if err != nil {
		h.fail(c, err)
	}
}
