package contracts

import (
	"time"

	"github.com/cpqportal/portal/web/templates/components"
)

// OfferVM is the offer part of a quote's documents region (internal/offer): the language to make
// it in, preview and send, and the latest offer stored on the quote.
type OfferVM struct {
	// URL is the offer's portal path: GET previews (?lang=), POST stores.
	URL string
	// MailURL is the offer's e-mail region (OfferMailPartial), loaded into the card.
	MailURL string
	// Languages are the five languages, each named in itself; Lang is the one chosen (the reader's).
	Languages []components.Option
	Lang      string
	// ValidDays is how long an offer holds (offer.ValidDays).
	ValidDays int
	// Latest is the newest offer stored on the quote, nil when there is none.
	Latest *LatestOffer
}

// LatestOffer is the newest offer stored on a quote.
type LatestOffer struct {
	FileName    string
	DownloadURL string
	CreatedAt   time.Time
	// Stale: the quote changed after the offer was made (offer.Stale), so the customer's offer
	// no longer shows the quote as it stands.
	Stale bool
}
