package outbox

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
)

// EnqueueTx writes mails as one batch in the caller's transaction tx, so a mail is written if and
// only if what it reports is (the inbox writes an item and its mail together: a mail is never
// written twice for one item, nor lost). The worker sees the rows once tx commits; call Wake then.
func (o *Outbox) EnqueueTx(ctx context.Context, tx *sql.Tx, domain string, mails []Mail) (string, error) {
	if !o.Enabled() {
		return "", ErrDisabled
	}
	return insertMails(ctx, tx, domain, mails)
}

// insertMails writes mails as one batch in tx and returns the batch's id.
func insertMails(ctx context.Context, tx *sql.Tx, domain string, mails []Mail) (string, error) {
	batch := statedb.NewID()
	now := statedb.Micros(time.Now())
	for _, m := range mails {
		id := statedb.NewID()
		if m.Batch == "" {
			m.Batch = batch
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO mail_outbox (id, owner, topic, batch, recipient, lang, message_id,
			from_name, reply_to, subject, text_body, html_body, attachment_name, attachment_type, attachment, version,
			status, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $18)`,
			id, m.Owner, m.Topic, m.Batch, m.Recipient, m.Lang, "<"+id+"@"+domain+">", m.FromName, m.ReplyTo,
			m.Subject, m.Text, m.HTML, m.AttachmentName, m.AttachmentType, m.Attachment, m.Version, StatusQueued, now)
		if err != nil {
			return "", fmt.Errorf("outbox: write mail: %w", err)
		}
	}
	return batch, nil
}

// Offer is the last offer of a topic the server took (status sent), and who sent it.
type Offer struct {
	Topic, Owner string
	SentAt       time.Time
}

// SentBetween lists, for each topic starting with prefix and each sender, the last mail the server
// took (sent), when that was within [from, to). The inbox's reminder "the offer expires in N days"
// reads the offers sent by e-mail with it.
func (o *Outbox) SentBetween(ctx context.Context, prefix string, from, to time.Time) ([]Offer, error) {
	rows, err := o.db.SQL.QueryContext(ctx, `SELECT topic, owner, MAX(sent_at) FROM mail_outbox
		WHERE status = $1 AND topic LIKE $2 ESCAPE '\' GROUP BY topic, owner HAVING MAX(sent_at) >= $3 AND MAX(sent_at) < $4`,
		StatusSent, statedb.EscapeLike(prefix)+"%", statedb.Micros(from), statedb.Micros(to))
	if err != nil {
		return nil, fmt.Errorf("outbox: read the offers sent: %w", err)
	}
	defer rows.Close()
	var out []Offer
	for rows.Next() {
		var s Offer
		var at int64
		if err := rows.Scan(&s.Topic, &s.Owner, &at); err != nil {
			return nil, fmt.Errorf("outbox: read the offers sent: %w", err)
		}
		s.SentAt = statedb.Time(at)
		out = append(out, s)
	}
	return out, rows.Err()
}
