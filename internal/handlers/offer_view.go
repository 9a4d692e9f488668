package handlers

import (
	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/offer"
	"github.com/cpqportal/portal/web/templates/components"
	"github.com/cpqportal/portal/web/templates/contracts"
	"github.com/cpqportal/portal/web/templates/quotes"
)

// offerVM is the offer card of a quote's documents region: the reader's language chosen, and the
// newest QUOTE_PDF attachment, stale when the quote no longer makes the offer it shows
// (offer.Stale: the fingerprint in its name, else the v2 API's own times).
func (h *Handler) offerVM(tr *i18n.Translator, ref quotes.Ref, quote *apiclient.Quote) contracts.OfferVM {
	vm := contracts.OfferVM{URL: ref.URL() + "/offer", MailURL: ref.URL() + "/offer/mail", Lang: tr.Lang(), ValidDays: offer.ValidDays}
	for _, choice := range h.i18n.Choices() {
		vm.Languages = append(vm.Languages, components.Option{Value: choice.Code, Label: choice.Name})
	}
	var latest *apiclient.Attachment
	for i := range quote.Attachments {
		a := &quote.Attachments[i]
		if a.AttachmentType != offer.AttachmentType || a.AttachmentID < 1 {
			continue
		}
		if latest == nil || a.CreatedAt.After(latest.CreatedAt) ||
			(a.CreatedAt.Equal(latest.CreatedAt) && a.AttachmentID > latest.AttachmentID) {
			latest = a
		}
	}
	if latest != nil {
		vm.Latest = &contracts.LatestOffer{
			FileName:    safeFileName(latest.FileName, offer.FileName(ref.QuoteID, tr.Lang(), latest.CreatedAt, "")),
			DownloadURL: attachmentURL(ref, latest.AttachmentID),
			CreatedAt:   latest.CreatedAt,
			Stale:       offer.Stale(quote, latest.FileName, latest.CreatedAt),
		}
	}
	return vm
}
