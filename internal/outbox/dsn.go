package outbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cpqportal/portal/internal/statedb"
)

// DSN is one recipient's delivery status notification (RFC 3464) for a mail of the outbox, as
// internal/bounce reads it from the bounce mailbox.
type DSN struct {
	// MessageID is the original mail's Message-ID (with or without angle brackets).
	MessageID string
	// Recipient is the Final-Recipient (or Original-Recipient) address; "" when the report names
	// none (a non-standard bounce).
	Recipient string
	// Status is the RFC 3463 status code (5.1.1: failed; 4.4.7: delayed); Diagnostic the
	// reporting server's words.
	Status, Diagnostic string
}

// Failed reports whether d says the mail will not be delivered (a permanent 5.x.x).
func (d DSN) Failed() bool { return strings.HasPrefix(d.Status, "5.") }

// Bounced is a mail a DSN was applied to, as the inbox tells its sender.
type Bounced struct {
	ID, Owner, Topic, Recipient, Subject string
	Status, Diagnostic                   string
	// Bounced: the mail is "bounced" (now or by an earlier report); false: a delay was noted.
	Bounced bool
}

// ErrNoSuchMail is ApplyDSN's error when no mail of the outbox has the report's Message-ID and
// recipient: the report is of a mail the portal did not send (or one past its retention).
var ErrNoSuchMail = errors.New("outbox: no mail has this Message-ID and recipient")

// ApplyDSN records d on its mail, once: a failure (5.x.x) moves a sent (or unknown: it may have
// gone) mail to "bounced" with the status and diagnostic; a delay (4.x.x) is noted on a mail still
// "sent" and changes nothing else. Applying the same report again changes nothing: the result
// is the same Bounced, so a caller that failed to tell the sender may tell again (its item is
// deduplicated by the mail's id). A mail refused, failed or still queued is left as it is.
func (o *Outbox) ApplyDSN(ctx context.Context, d DSN) (Bounced, error) {
	messageID := "<" + strings.Trim(strings.TrimSpace(d.MessageID), "<>") + ">"
	var b Bounced
	var status string
	err := o.db.SQL.QueryRowContext(ctx, `SELECT id, owner, topic, recipient, subject, status FROM mail_outbox WHERE message_id = $1`,
		messageID).Scan(&b.ID, &b.Owner, &b.Topic, &b.Recipient, &b.Subject, &status)
	if errors.Is(err, sql.ErrNoRows) {
		return Bounced{}, ErrNoSuchMail
	}
	if err != nil {
		return Bounced{}, fmt.Errorf("outbox: find the mail of a report: %w", err)
	}
	// One row per recipient: a report about another address is not about this mail (a forward
	// rewrites Final-Recipient, so the caller also passes Original-Recipient when it has one).
	if d.Recipient != "" && !strings.EqualFold(strings.TrimSpace(d.Recipient), b.Recipient) {
		return Bounced{}, ErrNoSuchMail
	}
	b.Status, b.Diagnostic = d.Status, truncate(d.Diagnostic, 1000)
	now := statedb.Micros(time.Now())
	if d.Failed() {
		if status == StatusBounced {
			b.Bounced = true
			return b, nil // applied before: nothing changes
		}
		res, err := o.db.SQL.ExecContext(ctx, `UPDATE mail_outbox SET status = $1, dsn_status = $2, dsn_text = $3, dsn_at = $4,
			updated_at = $4 WHERE id = $5 AND status IN ($6, $7)`, StatusBounced, b.Status, b.Diagnostic, now, b.ID, StatusSent, StatusUnknown)
		if err != nil {
			return Bounced{}, fmt.Errorf("outbox: record a bounce of %s: %w", b.ID, err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			b.Bounced = true
			o.opts.Logger.Warn("outbox: a mail bounced", slog.String("mail", b.ID), slog.String("topic", b.Topic),
				slog.String("dsn_status", b.Status), slog.String("diagnostic", b.Diagnostic))
			o.changed(b.Topic, b.Owner)
			return b, nil
		}
		// Not sent (queued, refused, failed) or bounced meanwhile: read what it is now.
		if err := o.db.SQL.QueryRowContext(ctx, `SELECT status FROM mail_outbox WHERE id = $1`, b.ID).Scan(&status); err != nil {
			return Bounced{}, fmt.Errorf("outbox: record a bounce of %s: %w", b.ID, err)
		}
		b.Bounced = status == StatusBounced
		return b, nil
	}
	// A delay: the servers still try. Noted once per status on a mail still sent.
	res, err := o.db.SQL.ExecContext(ctx, `UPDATE mail_outbox SET dsn_status = $1, dsn_text = $2, dsn_at = $3
		WHERE id = $4 AND status = $5 AND dsn_status <> $1`, b.Status, b.Diagnostic, now, b.ID, StatusSent)
	if err != nil {
		return Bounced{}, fmt.Errorf("outbox: note a delay of %s: %w", b.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		o.changed(b.Topic, b.Owner)
	}
	return b, nil
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
