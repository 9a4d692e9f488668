package contracts

import (
	"time"

	"github.com/cpqportal/portal/web/templates/components"
)

// OfferMailID is the id of the offer's e-mail region (form and sent mails).
const OfferMailID = "offer-mail"

// OfferMailVM is the offer sent by e-mail: the form (recipients, language, subject, message),
// the confirmation asked before a further send, and the mails sent so far with their delivery.
type OfferMailVM struct {
	// URL is the region's path: GET shows it (?lang= refills subject and message in that
	// language), POST sends.
	URL string
	// Enabled: an SMTP server is configured. Without one the form says so and cannot be sent.
	Enabled bool
	// HasCarts: an offer needs a cart.
	HasCarts bool
	// Lang is the language select; To, Subject and Message the fields (values kept on errors).
	Lang                 components.Field
	Languages            []components.Option
	To, Subject, Message components.Field
	Errors               []components.FieldError
	// Suggested are the addresses offered to pick (the customer's).
	Suggested []string
	// Confirm is set when the offer went before and the person has not confirmed this send.
	Confirm *OfferResend
	// Mails are the offer's mails, newest first; Polling while one is still on its way.
	Mails   []OfferMailRow
	Polling bool
	// DemoMailURL is the demo's "Sent mail" page when the demo's own mail server receives the
	// mails ("" otherwise).
	DemoMailURL string
}

// OfferResend tells what changed since the latest send.
type OfferResend struct {
	LastTo string
	LastAt time.Time
	// QuoteChanged: the quote (prices, carts, discounts) differs from the one sent.
	QuoteChanged bool
	// Added and Dropped are the recipients new to, or left out of, this send ("" when none).
	Added, Dropped string
	// LangChanged names the previous language when this send's differs ("" when the same).
	LangChanged string
}

// OfferMailRow is one mail to one recipient.
type OfferMailRow struct {
	Recipient string
	Subject   string
	CreatedAt time.Time
	SentAt    time.Time
	// Status is the outbox's (queued, sending, sent, refused, failed, unknown, bounced); Error the
	// server's answer when it refused or the last attempt failed.
	Status   string
	Error    string
	Attempts int
	// DSNStatus and DSNText are the delivery report read later from the bounce mailbox: with
	// Status "bounced" why it was not delivered; with "sent" a delay (the servers still try).
	DSNStatus, DSNText string
	// Recovery is how the copy check resolved a mail a crash left in doubt (outbox.Recovery*:
	// "confirmed", "resent", or ""); Checked: an unknown mail the copy check will resolve.
	Recovery string
	Checked  bool
}
