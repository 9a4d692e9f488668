package outbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
)

// The outbox's side of the copy check (internal/mailcopy, docs/mail.md "Exactly once: the copy
// check"): the check reads the copy mailbox, then tells the outbox which copies it found; the
// outbox resolves its mails in doubt by them. Every change is one conditional UPDATE, so a check
// that races a worker (or another check) changes a row once.

// DBNow is the database's clock now: the copy check reads it before it searches the mailbox, so a
// mail is queued again only when the search came a whole grace period after it became unknown.
func (o *Outbox) DBNow(ctx context.Context) (int64, error) {
	var now int64
	if err := o.db.SQL.QueryRowContext(ctx, `SELECT `+o.db.NowMicros()).Scan(&now); err != nil {
		return 0, fmt.Errorf("outbox: read the database's clock: %w", err)
	}
	return now, nil
}

// StatusesOf reports the status of the mails of these Message-IDs (with or without angle
// brackets), keyed by the Message-ID without brackets; a Message-ID the outbox does not hold is
// absent.
func (o *Outbox) StatusesOf(ctx context.Context, messageIDs []string) (map[string]string, error) {
	out := map[string]string{}
	for start := 0; start < len(messageIDs); start += 500 {
		chunk := messageIDs[start:min(start+500, len(messageIDs))]
		args := make([]any, 0, len(chunk))
		marks := make([]string, 0, len(chunk))
		for _, id := range chunk {
			args = append(args, "<"+strings.Trim(id, "<> ")+">")
			marks = append(marks, fmt.Sprintf("$%d", len(args)))
		}
		rows, err := o.db.SQL.QueryContext(ctx, `SELECT message_id, status FROM mail_outbox WHERE message_id IN (`+
			strings.Join(marks, ", ")+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("outbox: read the mails of copies: %w", err)
		}
		for rows.Next() {
			var id, status string
			if err := rows.Scan(&id, &status); err != nil {
				rows.Close()
				return nil, fmt.Errorf("outbox: read the mails of copies: %w", err)
			}
			out[strings.Trim(id, "<>")] = status
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("outbox: read the mails of copies: %w", err)
		}
	}
	return out, nil
}

// ConfirmByCopy records that the copy of the mail of messageID arrived at at: the server took the
// mail, so a mail unknown, or queued again and not yet claimed, is sent ("confirmed", never sent
// again). ok tells whether it changed the row (false: it was sent, sending, or ended otherwise).
func (o *Outbox) ConfirmByCopy(ctx context.Context, messageID string, at time.Time) (ok bool, err error) {
	messageID = "<" + strings.Trim(messageID, "<> ") + ">"
	var id, topic, owner string
	err = o.db.SQL.QueryRowContext(ctx, `UPDATE mail_outbox SET status = $1, recovery = $2, sent_at = $3, updated_at = $4,
		error = '', attachment = NULL, lease_holder = '', lease_expires = 0
		WHERE message_id = $5 AND status IN ($6, $7) RETURNING id, topic, owner`,
		StatusSent, RecoveryConfirmed, statedb.Micros(at), statedb.Micros(time.Now()), messageID, StatusUnknown, StatusQueued).
		Scan(&id, &topic, &owner)
	if isNoRows(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("outbox: confirm %s by its copy: %w", messageID, err)
	}
	o.opts.Logger.Info("outbox: a mail in doubt was sent: its copy arrived; not sent again",
		slog.String("mail", id), slog.String("topic", topic), slog.Time("arrived", at))
	o.changed(topic, owner)
	return true, nil
}

// RequeueWithoutCopy queues again, with the same Message-ID, each mail unknown whose last attempt
// carried copyTo, that became unknown at or before cutoff (the database's clock, micros) and whose
// Message-ID is not among found (the copies the check found): the server did not take it ("resent").
// It returns how many it queued.
func (o *Outbox) RequeueWithoutCopy(ctx context.Context, copyTo string, cutoff int64, found map[string]bool) (int, error) {
	rows, err := o.db.SQL.QueryContext(ctx, `SELECT id, message_id, topic, owner FROM mail_outbox
		WHERE status = $1 AND copy_to = $2 AND updated_at <= $3`, StatusUnknown, copyTo, cutoff)
	if err != nil {
		return 0, fmt.Errorf("outbox: read the mails in doubt: %w", err)
	}
	type row struct{ id, messageID, topic, owner string }
	var doubt []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.messageID, &r.topic, &r.owner); err != nil {
			rows.Close()
			return 0, fmt.Errorf("outbox: read the mails in doubt: %w", err)
		}
		if !found[strings.Trim(r.messageID, "<>")] {
			doubt = append(doubt, r)
		}
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return 0, fmt.Errorf("outbox: read the mails in doubt: %w", err)
	}
	n := 0
	for _, r := range doubt {
		res, err := o.db.SQL.ExecContext(ctx, `UPDATE mail_outbox SET status = $1, recovery = $2, next_attempt = 0,
			lease_holder = '', lease_expires = 0, updated_at = $3
			WHERE id = $4 AND status = $5 AND copy_to = $6 AND updated_at <= $7`,
			StatusQueued, RecoveryResent, statedb.Micros(time.Now()), r.id, StatusUnknown, copyTo, cutoff)
		if err != nil {
			return n, fmt.Errorf("outbox: queue %s again: %w", r.id, err)
		}
		if k, _ := res.RowsAffected(); k == 1 {
			n++
			o.opts.Logger.Warn("outbox: a mail in doubt had no copy within the grace period: the server did not take it; sent again with the same Message-ID",
				slog.String("mail", r.id), slog.String("topic", r.topic))
			o.changed(r.topic, r.owner)
		}
	}
	if n > 0 {
		o.Wake()
	}
	return n, nil
}

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }
