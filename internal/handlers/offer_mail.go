package handlers

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/auth"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/offer"
	"github.com/cpqportal/portal/internal/outbox"
	"github.com/cpqportal/portal/internal/textrules"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/contracts"
	"github.com/cpqportal/portal/web/templates/layout"
	"github.com/cpqportal/portal/web/templates/quotes"
)

// Bounds of the offer's e-mail form (docs/mail.md).
const (
	offerMailMaxRecipients  = 10
	offerMailMaxSubjectRune = 200
	offerMailMaxMessageRune = 5000
	// offerMailsShown bounds the mails the quote lists.
	offerMailsShown = 50
)

// offerMailForm is the e-mail form as posted (or prefilled).
type offerMailForm struct {
	To, Lang, Subject, Message string
	Confirmed                  bool
}

// offerTopic is the outbox topic of a quote's offers.
func offerTopic(quoteID int64) string { return "quote:" + strconv.FormatInt(quoteID, 10) }

// customerLang is the language an offer to customer is written in: the one of its country when
// the portal has it, else the reader's.
func customerLang(customer *apiclient.Customer, reader string) string {
	if customer == nil {
		return reader
	}
	switch customer.Address.Country {
	case "IT", "SM", "VA":
		return "it"
	case "DE", "AT", "LI":
		return "de"
	case "FR", "MC", "LU", "BE":
		return "fr"
	case "ES", "MX", "AR", "CO", "CL", "PE":
		return "es"
	case "GB", "IE", "US", "CA", "AU", "NZ":
		return "en"
	}
	return reader
}

// offerMailPrefill is the form as first shown: the customer's address, the subject and message
// in the language code.
func (h *Handler) offerMailPrefill(c *gin.Context, ref quotes.Ref, customer *apiclient.Customer, code string) offerMailForm {
	otr := h.offerTranslator(c, code)
	user := auth.CurrentUser(c)
	name := ""
	if customer != nil {
		name = customer.Name
	}
	return offerMailForm{
		To:      customerEmail(customer),
		Lang:    otr.Lang(),
		Subject: otr.T("offer.mail.default_subject", strconv.FormatInt(ref.QuoteID, 10), name),
		Message: otr.T("offer.mail.default_message", name, strconv.Itoa(offer.ValidDays), user.Name),
	}
}

func customerEmail(customer *apiclient.Customer) string {
	if customer == nil || !emailProblem(customer.Email).IsZero() {
		return ""
	}
	return customer.Email
}

// offerMailVM is the e-mail region for form, with field errors errs (by field name).
func (h *Handler) offerMailVM(c *gin.Context, ref quotes.Ref, quote *apiclient.Quote, customer *apiclient.Customer,
	form offerMailForm, errs map[string]string, mails []outbox.Sent) contracts.OfferMailVM {
	trr := tr(c)
	vm := contracts.OfferMailVM{
		URL:      ref.URL() + "/offer/mail",
		Enabled:  h.mail.Enabled(),
		HasCarts: len(quote.Carts) > 0,
		To: components.Field{ID: "offer-mail-to", Name: "to", Label: trr.T("offer.mail.to"), Value: form.To, Required: true,
			Hint: trr.T("offer.mail.to_hint", strconv.Itoa(offerMailMaxRecipients)), Error: errs["to"], Autocomplete: "off",
			Attrs: map[string]any{"list": "offer-mail-suggested", "data-testid": "offer-mail-to-input"}},
		Lang: components.Field{ID: "offer-mail-lang", Name: "lang", Label: trr.T("offer.mail.lang"), Value: form.Lang,
			Hint: trr.T("offer.mail.lang_hint"),
			Attrs: map[string]any{"hx-get": ref.URL() + "/offer/mail", "hx-trigger": "change", "hx-target": "#" + contracts.OfferMailID,
				"hx-swap": "outerHTML", "hx-include": "#offer-mail-to, this"}},
		Subject: components.Field{ID: "offer-mail-subject", Name: "subject", Label: trr.T("offer.mail.subject"), Value: form.Subject,
			Required: true, Error: errs["subject"], Attrs: map[string]any{"lang": form.Lang}},
		Message: components.Field{ID: "offer-mail-message", Name: "message", Label: trr.T("offer.mail.message"), Value: form.Message,
			Required: true, Error: errs["message"], Hint: trr.T("offer.mail.message_hint"),
			// lang: the text is in the mail's language, which may not be the reader's.
			Attrs: map[string]any{"rows": "8", "lang": form.Lang}},
	}
	for _, choice := range h.i18n.Choices() {
		vm.Languages = append(vm.Languages, components.Option{Value: choice.Code, Label: choice.Name})
	}
	if e := customerEmail(customer); e != "" {
		vm.Suggested = []string{e}
	}
	vm.Errors = components.SummaryFrom(vm.To, vm.Subject, vm.Message)
	for _, m := range mails {
		vm.Mails = append(vm.Mails, contracts.OfferMailRow{Recipient: m.Recipient, Subject: m.Subject, CreatedAt: m.CreatedAt,
			SentAt: m.SentAt, Status: m.Status, Error: m.Error, Attempts: m.Attempts, DSNStatus: m.DSNStatus, DSNText: m.DSNText,
			Recovery: m.Recovery, Checked: m.Checked})
		// An unknown mail the copy check resolves changes within minutes: the list follows it.
		if m.Status == outbox.StatusQueued || m.Status == outbox.StatusSending || (m.Status == outbox.StatusUnknown && m.Checked) {
			vm.Polling = true
		}
	}
	if h.demoMail != nil {
		vm.DemoMailURL = demoMailPath
	}
	return vm
}

// offerMails is the quote's mails (none when e-mail is off and nothing was ever sent).
func (h *Handler) offerMails(ctx context.Context, quoteID int64) ([]outbox.Sent, error) {
	if h.mail == nil {
		return nil, nil
	}
	return h.mail.Topic(ctx, offerTopic(quoteID), offerMailsShown)
}

// showOfferMail answers GET /quotes/:cpqId/:customerId/:quoteId/offer/mail (?lang=): the offer's
// e-mail region, prefilled in lang (else the customer's language). The quote is read first, with
// the person's token: who cannot read the quote sees none of its mails.
func (h *Handler) showOfferMail(c *gin.Context) {
	ref, err := parseQuoteRef(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	ctx := h.apiContext(c)
	customerOf := later(func() (*apiclient.Customer, error) { return h.api.Customers.Get(ctx, ref.CustomerID) })
	quote, err := h.loadQuote(ctx, ref)
	customer, customerErr := customerOf()
	if err != nil {
		h.fail(c, err)
		return
	}
	if customerErr != nil {
		h.fail(c, fmt.Errorf("offer mail: read customer %d: %w", ref.CustomerID, customerErr))
		return
	}
	mails, err := h.offerMails(c.Request.Context(), ref.QuoteID)
	if err != nil {
		h.fail(c, err)
		return
	}
	code := c.Query(offerLangField)
	if _, ok := h.i18n.Supported(code); !ok {
		code = customerLang(customer, tr(c).Lang())
	}
	form := h.offerMailPrefill(c, ref, customer, code)
	if to := c.Query("to"); to != "" && len(to) < 4096 {
		form.To = to // the language changed: the recipients typed so far stay
	}
	h.renderOfferMail(c, http.StatusOK, h.offerMailVM(c, ref, quote, customer, form, nil, mails))
}

// renderOfferMail answers the e-mail region: alone for htmx, as a page of its own for a plain
// request (the form without JavaScript).
func (h *Handler) renderOfferMail(c *gin.Context, status int, vm contracts.OfferMailVM) {
	if isHTMX(c) {
		h.render(c, status, contracts.OfferMailPartial(vm))
		return
	}
	h.renderPage(c, status, t(c, "offer.mail.title"), layout.SectionQuotes, contracts.OfferMailPartial(vm))
}

// parseRecipients splits the typed recipients (commas, semicolons, new lines), checks each with
// net/mail (emailProblem) and drops repeats.
func parseRecipients(raw string) ([]string, i18n.Message) {
	fields := strings.FieldsFunc(raw, func(r rune) bool { return r == ',' || r == ';' || r == '\n' || r == '\r' })
	var out []string
	for _, f := range fields {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if msg := emailProblem(f); !msg.IsZero() {
			return nil, i18n.M("offer.mail.error.address", f)
		}
		if !slices.ContainsFunc(out, func(s string) bool { return strings.EqualFold(s, f) }) {
			out = append(out, f)
		}
		if len(out) > offerMailMaxRecipients {
			return nil, i18n.M("offer.mail.error.too_many", strconv.Itoa(offerMailMaxRecipients))
		}
	}
	if len(out) == 0 {
		return nil, i18n.M("offer.mail.error.no_recipient")
	}
	return out, i18n.Message{}
}

// validateOfferMail checks the form; it returns the recipients and the problems by field.
func validateOfferMail(trr *i18n.Translator, form offerMailForm) ([]string, map[string]string) {
	errs := map[string]string{}
	recipients, msg := parseRecipients(form.To)
	if !msg.IsZero() {
		errs["to"] = msg.In(trr)
	}
	switch n := utf8.RuneCountInString(form.Subject); {
	case n == 0:
		errs["subject"] = trr.T("offer.mail.error.subject_empty")
	case n > offerMailMaxSubjectRune:
		errs["subject"] = trr.T("offer.mail.error.subject_too_long", strconv.Itoa(offerMailMaxSubjectRune))
	case !textrules.Acceptable(form.Subject, false):
		errs["subject"] = trr.T("offer.mail.error.chars")
	}
	switch n := utf8.RuneCountInString(form.Message); {
	case n == 0:
		errs["message"] = trr.T("offer.mail.error.message_empty")
	case n > offerMailMaxMessageRune:
		errs["message"] = trr.T("offer.mail.error.message_too_long", strconv.Itoa(offerMailMaxMessageRune))
	case !textrules.Acceptable(form.Message, true):
		errs["message"] = trr.T("offer.mail.error.chars")
	}
	if len(errs) == 0 {
		return recipients, nil
	}
	return recipients, errs
}

// offerResend is what changed since the latest send (nil when the offer never went).
func offerResend(mails []outbox.Sent, recipients []string, version, lang string) *contracts.OfferResend {
	if len(mails) == 0 {
		return nil
	}
	last := mails[0].Batch
	r := &contracts.OfferResend{LastAt: mails[0].CreatedAt, QuoteChanged: mails[0].Version != version}
	var before []string
	for _, m := range mails {
		if m.Batch != last {
			break
		}
		before = append(before, m.Recipient)
		if m.Lang != lang {
			r.LangChanged = m.Lang
		}
	}
	slices.Sort(before)
	r.LastTo = strings.Join(before, ", ")
	var added, dropped []string
	for _, to := range recipients {
		if !slices.ContainsFunc(before, func(b string) bool { return strings.EqualFold(b, to) }) {
			added = append(added, to)
		}
	}
	for _, b := range before {
		if !slices.ContainsFunc(recipients, func(to string) bool { return strings.EqualFold(b, to) }) {
			dropped = append(dropped, b)
		}
	}
	r.Added, r.Dropped = strings.Join(added, ", "), strings.Join(dropped, ", ")
	return r
}

// sendOfferMail answers POST /quotes/:cpqId/:customerId/:quoteId/offer/mail (to, lang, subject,
// message, confirm): the offer is made in lang, stored on the quote as "Save" does, and written
// to the outbox once per recipient with the PDF attached (docs/mail.md). A further send of the
// same quote's offer first shows what changed since the latest and asks to confirm (confirm=1).
// Bad input is 422 with the form and its errors; no SMTP server is 409.
func (h *Handler) sendOfferMail(c *gin.Context) {
	ref, err := parseQuoteRef(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	if err := c.Request.ParseForm(); err != nil {
		h.fail(c, fmt.Errorf("offer mail: read the form: %w", err))
		return
	}
	if !h.mail.Enabled() {
		h.failDocument(c, &documentError{status: http.StatusConflict, title: i18n.M("offer.mail.disabled_title"), message: i18n.M("offer.mail.disabled")})
		return
	}
	pf := c.Request.PostForm
	form := offerMailForm{To: pf.Get("to"), Lang: pf.Get("lang"), Subject: strings.TrimSpace(pf.Get("subject")),
		Message: strings.TrimSpace(strings.ReplaceAll(pf.Get("message"), "\r\n", "\n")), Confirmed: pf.Get("confirm") == "1"}
	if _, ok := h.i18n.Supported(form.Lang); !ok {
		form.Lang = tr(c).Lang()
	}
	recipients, errs := validateOfferMail(tr(c), form)
	ctx := h.apiContext(c)
	mails, err := h.offerMails(c.Request.Context(), ref.QuoteID)
	if err != nil {
		h.fail(c, err)
		return
	}
	if errs != nil {
		quote, err := h.loadQuote(ctx, ref)
		if err != nil {
			h.fail(c, err)
			return
		}
		h.renderOfferMail(c, http.StatusUnprocessableEntity, h.offerMailVM(c, ref, quote, nil, form, errs, mails))
		return
	}
	made, err := h.makeOffer(c, ref, form.Lang)
	if err != nil {
		h.fail(c, err)
		return
	}
	if resend := offerResend(mails, recipients, made.version, made.lang); resend != nil && !form.Confirmed {
		quote, err := h.loadQuote(ctx, ref)
		if err != nil {
			h.fail(c, err)
			return
		}
		vm := h.offerMailVM(c, ref, quote, made.customer, form, nil, mails)
		vm.Confirm = resend
		h.renderOfferMail(c, http.StatusOK, vm)
		return
	}
	attachment, err := h.api.Attachments.Upload(ctx, ref.QuoteID, offer.AttachmentType, made.fileName,
		offer.ContentType, int64(len(made.pdf)), bytes.NewReader(made.pdf))
	if err != nil {
		h.fail(c, fmt.Errorf("offer mail: store on quote %d: %w", ref.QuoteID, err))
		return
	}
	otr := h.offerTranslator(c, made.lang)
	user := auth.CurrentUser(c)
	text, html, err := outbox.Body{Lang: made.lang, Message: form.Message, LinkText: otr.T("offer.mail.portal_link"),
		LinkURL: h.cfg.PublicURL.String(), Footer: otr.T("offer.mail.footer", user.Name)}.Render()
	if err != nil {
		h.fail(c, fmt.Errorf("offer mail: render: %w", err))
		return
	}
	replyTo := ""
	if emailProblem(user.Email).IsZero() {
		replyTo = user.Email
	}
	var out []outbox.Mail
	for _, to := range recipients {
		out = append(out, outbox.Mail{Owner: user.Subject, Topic: offerTopic(ref.QuoteID), Recipient: to, Lang: made.lang,
			FromName: user.Name, ReplyTo: replyTo, Subject: form.Subject, Text: text, HTML: html,
			AttachmentName: made.fileName, AttachmentType: offer.ContentType, Attachment: made.pdf, Version: made.version})
	}
	if _, err := h.mail.Enqueue(c.Request.Context(), h.cfg.PublicURL.Hostname(), out); err != nil {
		h.fail(c, err)
		return
	}
	h.log(c).Info("offer mailed", slog.Int64("quote_id", ref.QuoteID), slog.Int("attachment_id", int(attachment.AttachmentID)),
		slog.String("lang", made.lang), slog.Int("recipients", len(recipients)))
	if !isHTMX(c) {
		c.Redirect(http.StatusSeeOther, ref.URL()+"/documents")
		return
	}
	quote, err := h.loadQuote(ctx, ref)
	if err != nil {
		h.fail(c, err)
		return
	}
	message := t(c, "offer.mail.queued", strings.Join(recipients, ", "))
	h.toast(c, components.ToastSuccess, message)
	announce(c, message)
	c.Header("HX-Retarget", "#"+contracts.DocumentsID)
	c.Header("HX-Reswap", "outerHTML")
	h.render(c, http.StatusOK, contracts.DocumentsPartial(h.documentsVM(c.Request.Context(), tr(c), ref, quote)))
}
