package inbox

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/cpqportal/portal/internal/outbox"
	"github.com/cpqportal/portal/internal/workindex"
)

// BouncedItem tells the sender of mail b (an offer: topic "quote:<id>") that it bounced: the
// recipient's server reported later that it could not be delivered. link is the quote's page,
// customer its customer's name ("" when unknown). One item per mail, however often the report is
// read. ok is false for a mail that is no offer: the inbox's own mails bounce to nobody (telling
// a person by the mail that bounced would bounce again).
func BouncedItem(b outbox.Bounced, link, customer string) (Item, bool) {
	quote, ok := strings.CutPrefix(b.Topic, "quote:")
	if !ok || b.Owner == "" || b.ID == "" {
		return Item{}, false
	}
	if customer == "" {
		customer = "—"
	}
	reason := b.Status
	if b.Diagnostic != "" {
		reason += " " + b.Diagnostic
	}
	// No RowKind: the person sent this mail themselves, and the item tells only what they sent
	// and the recipient's server's answer.
	return Item{
		Subject: b.Owner,
		Dedupe:  "mail_bounced:" + b.ID,
		Kind:    KindMailBounced,
		Params:  map[string]string{ParamQuote: quote, ParamCustomer: customer, ParamRecipient: b.Recipient, ParamReason: reason},
		Link:    link,
	}, true
}

// MailBounced delivers BouncedItem to the sender of b (bounce.Options.OnBounce), with the quote's
// page and customer from the work index when it knows the quote.
func (s *Store) MailBounced(ctx context.Context, work *workindex.Index, b outbox.Bounced) error {
	idText, _ := strings.CutPrefix(b.Topic, "quote:")
	link, customer := "/palette/quotes/"+idText, ""
	if quoteID, err := strconv.ParseInt(idText, 10, 64); err == nil && work != nil {
		if row, ok := work.Peek(ctx, workindex.KindQuote, quoteID); ok {
			customer = row.Customer
			if row.CPQID != 0 && row.CustomerID != 0 {
				link = fmt.Sprintf("/quotes/%d/%d/%d", row.CPQID, row.CustomerID, quoteID)
			}
		}
	}
	it, ok := BouncedItem(b, link, customer)
	if !ok {
		return nil
	}
	return s.Deliver(ctx, it)
}
