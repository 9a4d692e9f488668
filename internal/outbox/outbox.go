// Package outbox sends the portal's e-mail: each mail to one recipient is a row of the state
// database (table mail_outbox, migration 00016) written before anything is sent, and a worker on
// every replica sends the rows that are due, one replica per row by a lease on the database's
// clock. docs/mail.md states the guarantees; in short:
//
//   - at most once: a row is moved to "sending" (committed) before its SMTP conversation starts,
//     and only the holder that started it may move it on. A holder that vanished (SIGKILL, a
//     database that stayed down past the lease) leaves the row "unknown": it is never sent again
//     blindly, and the person who sent it is told to check with the recipient;
//   - exactly once with the copy check (Options.CopyTo, internal/mailcopy): each mail also goes
//     to a copy address whose mailbox the portal reads; a mail left "unknown" is then resolved
//     by its copy: found, it was sent ("confirmed"); absent past a grace period, it is queued
//     again with the same Message-ID ("resent");
//   - a refusal that happened before the server took the message (a 4xx answer, a connection
//     that failed before the end of DATA) is retried with back-off, up to MaxAttempts;
//   - a 5xx answer ends the row as "refused", with the server's words shown to the sender.
package outbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cpqportal/portal/internal/lease"
	"github.com/cpqportal/portal/internal/statedb"
)

// The statuses of a row.
const (
	StatusQueued  = "queued"  // due at next_attempt (a retry keeps the last error)
	StatusSending = "sending" // a holder is in the SMTP conversation
	StatusSent    = "sent"    // the server took it (250 after DATA)
	StatusRefused = "refused" // the server answered 5xx: not sent, error says why
	StatusFailed  = "failed"  // every attempt failed temporarily: not sent
	StatusUnknown = "unknown" // its holder vanished mid-send: it may or may not have arrived
	// StatusBounced: the server took it, and later a delivery status notification said it could
	// not be delivered (DSNStatus 5.x.x, DSNText the reporting server's words; ApplyDSN).
	StatusBounced = "bounced"
)

// Defaults of Options.
const (
	DefaultLeaseTerm    = 2 * time.Minute
	DefaultSendTimeout  = 60 * time.Second
	DefaultPollInterval = 2 * time.Second
	DefaultBackoff      = 30 * time.Second
	DefaultMaxBackoff   = time.Hour
	DefaultMaxAttempts  = 8
	// DefaultPurgeEvery is how often each replica deletes the mails past Options.Retention.
	DefaultPurgeEvery = time.Hour
	// claimLimit bounds the rows one scan picks up.
	claimLimit = 20
)

// Mail is one e-mail to one recipient, as written to the outbox.
type Mail struct {
	// Owner is the subject of the sender; Topic what it is about ("quote:123"); Batch the send it
	// belongs to (set by Enqueue when empty: one batch per call).
	Owner, Topic, Batch string
	Recipient           string
	Lang                string
	// FromName is shown as the sender's name (the From address is the operator's); ReplyTo is
	// the person's own address, so the customer's answer reaches them.
	FromName, ReplyTo string
	Subject           string
	Text, HTML        string
	// Attachment, when AttachmentName is set.
	AttachmentName, AttachmentType string
	Attachment                     []byte
	// Version is the topic's state the mail shows (the quote's fingerprint for an offer).
	Version string
}

// Sent is a row as the sender's pages show it.
type Sent struct {
	ID, Batch, Recipient, Subject, Lang, Version string
	MessageID, AttachmentName                    string
	Status                                       string
	Error                                        string
	Attempts                                     int
	CreatedAt, SentAt, NextAttempt               time.Time
	// DSNStatus and DSNText are the last delivery status notification read for it (bounced: a
	// 5.x.x; a sent mail with a 4.x.x was delayed and is still tried by the servers), DSNAt when
	// it was read.
	DSNStatus, DSNText string
	DSNAt              time.Time
	// Recovery is how a mail in doubt (unknown after a crash) was resolved by the copy check:
	// RecoveryConfirmed, RecoveryResent, or '' (never in doubt, or not resolved).
	Recovery string
	// Checked: its last attempt carried the copy, so the copy check resolves it if it is unknown.
	Checked bool
}

// The recoveries of a mail in doubt (Sent.Recovery, docs/mail.md "Exactly once: the copy check").
const (
	// RecoveryConfirmed: its copy was found, so the server had taken it; it was not sent again.
	RecoveryConfirmed = "confirmed"
	// RecoveryResent: no copy arrived within the grace period, so the server had not taken it; it
	// was queued again with the same Message-ID.
	RecoveryResent = "resent"
)

// Message is what a Sender sends: the row's mail and its fixed Message-ID.
type Message struct {
	Mail
	ID, MessageID string
	// CopyTo, when set, is a further envelope recipient (never in the headers): the copy mailbox
	// the copy check reads (Options.CopyTo).
	CopyTo string
}

// Sender sends one message. Its error tells what happened (*SendFailure): a refusal, a failure
// before the server took the message (retried), or an outcome that cannot be told.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// Outcome classifies a failed send.
type Outcome int

const (
	// Retry: the server did not take the message (4xx, no connection, a break before the end of
	// DATA); another attempt is safe.
	Retry Outcome = iota
	// Refuse: the server answered 5xx; no attempt will succeed.
	Refuse
	// Unclear: the conversation broke after the end of DATA was sent and before the answer; the
	// message may have been taken. Never retried.
	Unclear
)

// SendFailure is a Sender's error with its classification.
type SendFailure struct {
	Outcome Outcome
	// Text is the server's answer or the failure, as shown to the sender (no credentials).
	Text string
	Err  error
}

func (e *SendFailure) Error() string { return "outbox: send: " + e.Text }
func (e *SendFailure) Unwrap() error { return e.Err }

// Options configure an Outbox.
type Options struct {
	DB     *statedb.DB
	Sender Sender
	Logger *slog.Logger
	// LeaseTerm: a row "sending" longer than this (by the database's clock) whose holder did not
	// record an answer is "unknown". It must exceed SendTimeout.
	LeaseTerm time.Duration
	// SendTimeout bounds one SMTP conversation.
	SendTimeout time.Duration
	// PollInterval is how often the worker looks for due rows (Enqueue on this replica wakes it
	// at once).
	PollInterval time.Duration
	// Backoff is the delay after the first failed attempt, doubled after each further one up to
	// MaxBackoff; MaxAttempts attempts in all, then the row fails.
	Backoff, MaxBackoff time.Duration
	MaxAttempts         int
	// OnChange, when set, is called with a row's topic and owner after its status changed. It
	// must not block.
	OnChange func(topic, owner string)
	// Retention: rows that ended (sent, refused, failed, unknown) longer ago than this are
	// deleted, at most once every PurgeEvery on each replica (0 keeps them).
	Retention  time.Duration
	PurgeEvery time.Duration
	// CopyTo, when set, is the copy address every send also goes to (PORTAL_MAIL_COPY_TO): the
	// copy check (internal/mailcopy) reads its mailbox to resolve the mails left unknown. A mail
	// sent with a copy keeps its attachment while it is unknown, as it may be sent again.
	CopyTo string
}

// Outbox writes mails and sends them.
type Outbox struct {
	opts   Options
	db     *statedb.DB
	holder string
	loop   lease.Loop

	mu       sync.Mutex
	purgedAt time.Time
}

// New returns an Outbox on opts.DB; Run starts its worker. A nil Sender is an outbox that
// writes nothing (Enabled false).
func New(opts Options) *Outbox {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.SendTimeout <= 0 {
		opts.SendTimeout = DefaultSendTimeout
	}
	if opts.LeaseTerm <= 0 {
		opts.LeaseTerm = DefaultLeaseTerm
	}
	if opts.LeaseTerm <= opts.SendTimeout {
		opts.LeaseTerm = opts.SendTimeout + opts.SendTimeout/2
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.Backoff <= 0 {
		opts.Backoff = DefaultBackoff
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = DefaultMaxBackoff
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = DefaultMaxAttempts
	}
	if opts.PurgeEvery <= 0 {
		opts.PurgeEvery = DefaultPurgeEvery
	}
	return &Outbox{opts: opts, db: opts.DB, holder: statedb.NewID()}
}

// Enabled reports whether mail can be sent (an SMTP server is configured).
func (o *Outbox) Enabled() bool { return o != nil && o.opts.Sender != nil }

// ErrDisabled is Enqueue's error when no SMTP server is configured.
var ErrDisabled = errors.New("outbox: no SMTP server is configured (PORTAL_SMTP_URL)")

// Enqueue writes mails as one batch (their rows commit together) and wakes the worker; it
// returns the batch's id.
func (o *Outbox) Enqueue(ctx context.Context, domain string, mails []Mail) (string, error) {
	if !o.Enabled() {
		return "", ErrDisabled
	}
	var batch string
	err := o.db.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		batch, err = insertMails(ctx, tx, domain, mails)
		return err
	})
	if err != nil {
		return "", err
	}
	o.Wake()
	return batch, nil
}

// Wake makes the worker look for due rows now.
func (o *Outbox) Wake() { o.loop.Wake() }

// Topic is a topic's mails, newest first (at most limit).
func (o *Outbox) Topic(ctx context.Context, topic string, limit int) ([]Sent, error) {
	rows, err := o.db.SQL.QueryContext(ctx, `SELECT id, batch, recipient, subject, lang, version, message_id,
		attachment_name, status, error, attempts, created_at, sent_at, next_attempt, dsn_status, dsn_text, dsn_at, recovery, copy_to
		FROM mail_outbox WHERE topic = $1 ORDER BY created_at DESC, recipient LIMIT $2`, topic, limit)
	if err != nil {
		return nil, fmt.Errorf("outbox: read %s: %w", topic, err)
	}
	defer rows.Close()
	var out []Sent
	for rows.Next() {
		var s Sent
		var created, sent, next, dsnAt int64
		var copyTo string
		if err := rows.Scan(&s.ID, &s.Batch, &s.Recipient, &s.Subject, &s.Lang, &s.Version, &s.MessageID,
			&s.AttachmentName, &s.Status, &s.Error, &s.Attempts, &created, &sent, &next, &s.DSNStatus, &s.DSNText, &dsnAt, &s.Recovery, &copyTo); err != nil {
			return nil, fmt.Errorf("outbox: read %s: %w", topic, err)
		}
		s.CreatedAt, s.SentAt, s.NextAttempt = statedb.Time(created), statedb.Time(sent), statedb.Time(next)
		s.Checked = copyTo != ""
		if dsnAt != 0 {
			s.DSNAt = statedb.Time(dsnAt)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("outbox: read %s: %w", topic, err)
	}
	return out, nil
}

// Run starts the worker (once); Close stops it.
func (o *Outbox) Run() {
	if !o.Enabled() {
		return
	}
	o.loop.Start(o.opts.PollInterval, o.tick)
}

// Close stops the worker after the send in flight has recorded its answer (or its context ended).
func (o *Outbox) Close() { o.loop.Close() }

// tick sends what is due, and deletes the old mails when this replica's purge is due.
func (o *Outbox) tick(ctx context.Context) {
	if err := o.RunOnce(ctx); err != nil && ctx.Err() == nil {
		o.opts.Logger.Warn("outbox: scan failed; retried at the next", slog.Any("err", err))
	}
	if o.purgeDue() {
		if n, err := o.Purge(ctx); err != nil && ctx.Err() == nil {
			o.opts.Logger.Warn("outbox: deleting old mails failed; tried again later", slog.Any("err", err))
		} else if n > 0 {
			o.opts.Logger.Info("outbox: old mails deleted", slog.Int("mails", n), slog.Duration("retention", o.opts.Retention))
		}
	}
}

// RunOnce marks the rows of vanished holders unknown, then sends the rows that are due, one at a
// time, until none is left.
func (o *Outbox) RunOnce(ctx context.Context) error {
	if err := o.expire(ctx); err != nil {
		return err
	}
	for ctx.Err() == nil {
		ids, err := o.due(ctx)
		if err != nil || len(ids) == 0 {
			return err
		}
		for _, id := range ids {
			if ctx.Err() != nil {
				return nil
			}
			m, ok, err := o.claim(ctx, id)
			if err != nil {
				return err
			}
			if ok {
				o.send(ctx, m)
			}
		}
	}
	return nil
}

// purgeBatch bounds the rows one purge statement deletes (one short transaction each, so a
// large backlog never holds the table or the log up).
const purgeBatch = 1000

// purgeDue reports whether this replica's purge is due, and takes its turn.
func (o *Outbox) purgeDue() bool {
	if o.opts.Retention <= 0 {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	now := time.Now()
	if now.Sub(o.purgedAt) < o.opts.PurgeEvery {
		return false
	}
	o.purgedAt = now
	return true
}

// Purge deletes the rows that ended longer than Retention ago (by their last change), purgeBatch
// at a time, and reports how many. Rows still queued or sending are never deleted, whatever their
// age. Replicas purging at once delete disjoint or already deleted rows: no harm.
func (o *Outbox) Purge(ctx context.Context) (int, error) {
	if o.opts.Retention <= 0 {
		return 0, nil
	}
	before := statedb.Micros(time.Now().Add(-o.opts.Retention))
	// The ended statuses are written out (StatusSent, StatusRefused, StatusFailed, StatusUnknown,
	// StatusBounced) as in the partial index mail_outbox_ended (migration 00030), so the planner
	// uses it.
	total := 0
	for ctx.Err() == nil {
		res, err := o.db.SQL.ExecContext(ctx, `DELETE FROM mail_outbox WHERE id IN (SELECT id FROM mail_outbox
			WHERE status IN ('sent', 'refused', 'failed', 'unknown', 'bounced') AND updated_at < $1 ORDER BY updated_at LIMIT $2)`,
			before, purgeBatch)
		if err != nil {
			return total, fmt.Errorf("outbox: delete old mails: %w", err)
		}
		n, _ := res.RowsAffected()
		total += int(n)
		if n < purgeBatch {
			break
		}
	}
	return total, nil
}

// expire moves the rows whose holder's lease ran out from "sending" to "unknown": their holder
// may have sent them, so nobody sends them again (unless the copy check finds no copy: their
// attachment is kept then). updated_at is the database's clock: the copy check's grace period
// counts from it.
func (o *Outbox) expire(ctx context.Context) error {
	rows, err := o.db.SQL.QueryContext(ctx, `SELECT id, topic, owner FROM mail_outbox WHERE status = $1 AND lease_expires < `+o.db.NowMicros(), StatusSending)
	if err != nil {
		return fmt.Errorf("outbox: read expired leases: %w", err)
	}
	type row struct{ id, topic, owner string }
	var expired []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.topic, &r.owner); err != nil {
			rows.Close()
			return fmt.Errorf("outbox: read expired leases: %w", err)
		}
		expired = append(expired, r)
	}
	rows.Close()
	for _, r := range expired {
		res, err := o.db.SQL.ExecContext(ctx, `UPDATE mail_outbox SET status = $1, `+keepForCheck+`, updated_at = `+o.db.NowMicros()+`
			WHERE id = $2 AND status = $3 AND lease_expires < `+o.db.NowMicros(), StatusUnknown, r.id, StatusSending)
		if err != nil {
			return fmt.Errorf("outbox: mark %s unknown: %w", r.id, err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			o.opts.Logger.Warn("outbox: a mail's sender vanished mid-send; its delivery is unknown and it is not sent again unless the copy check finds no copy",
				slog.String("mail", r.id), slog.String("topic", r.topic))
			o.changed(r.topic, r.owner)
		}
	}
	return nil
}

// keepForCheck is the SET clause that ends a row as unknown: its attachment is dropped unless the
// send carried a copy (the copy check may send it again).
const keepForCheck = `attachment = CASE WHEN copy_to = '' THEN NULL ELSE attachment END`

// due is the ids of rows due now.
func (o *Outbox) due(ctx context.Context) ([]string, error) {
	rows, err := o.db.SQL.QueryContext(ctx, `SELECT id FROM mail_outbox WHERE status = $1 AND next_attempt <= `+o.db.NowMicros()+`
		ORDER BY next_attempt, created_at LIMIT $2`, StatusQueued, claimLimit)
	if err != nil {
		return nil, fmt.Errorf("outbox: read due mails: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("outbox: read due mails: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// claim takes row id when it is still queued and due: "sending", this holder, a lease, one
// more attempt, committed before anything is sent. ok is false when another replica took it.
func (o *Outbox) claim(ctx context.Context, id string) (Message, bool, error) {
	// copy_to is the copy this attempt carries: the copy check resolves the row by it if the
	// attempt's outcome is lost.
	res, err := o.db.SQL.ExecContext(ctx, `UPDATE mail_outbox SET status = $1, lease_holder = $2,
		lease_expires = `+o.db.NowMicros()+` + $3, attempts = attempts + 1, updated_at = $4, copy_to = $7
		WHERE id = $5 AND status = $6 AND next_attempt <= `+o.db.NowMicros(),
		StatusSending, o.holder, o.opts.LeaseTerm.Microseconds(), statedb.Micros(time.Now()), id, StatusQueued, o.opts.CopyTo)
	if err != nil {
		return Message{}, false, fmt.Errorf("outbox: claim %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return Message{}, false, nil
	}
	m := Message{ID: id, CopyTo: o.opts.CopyTo}
	err = o.db.SQL.QueryRowContext(ctx, `SELECT owner, topic, batch, recipient, lang, message_id, from_name, reply_to,
		subject, text_body, html_body, attachment_name, attachment_type, attachment, version FROM mail_outbox WHERE id = $1`, id).
		Scan(&m.Owner, &m.Topic, &m.Batch, &m.Recipient, &m.Lang, &m.MessageID, &m.FromName, &m.ReplyTo,
			&m.Subject, &m.Text, &m.HTML, &m.AttachmentName, &m.AttachmentType, &m.Attachment, &m.Version)
	if err != nil {
		// Claimed but not read: nothing was sent, so it may go again after its lease (as unknown
		// would be wrong). Put it back; if even that fails, the lease ends as unknown.
		_, _ = o.db.SQL.ExecContext(ctx, `UPDATE mail_outbox SET status = $1, lease_holder = '' WHERE id = $2 AND lease_holder = $3`,
			StatusQueued, id, o.holder)
		return Message{}, false, fmt.Errorf("outbox: read %s: %w", id, err)
	}
	o.changed(m.Topic, m.Owner)
	return m, true, nil
}

// send sends a claimed row and records the answer.
func (o *Outbox) send(ctx context.Context, m Message) {
	sendCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.opts.SendTimeout)
	err := o.opts.Sender.Send(sendCtx, m)
	cancel()
	id := m.ID
	var failure *SendFailure
	if err != nil && !errors.As(err, &failure) {
		failure = &SendFailure{Outcome: Retry, Text: err.Error(), Err: err}
	}
	now := statedb.Micros(time.Now())
	var query string
	var args []any
	switch {
	case err == nil:
		query, args = `UPDATE mail_outbox SET status = $1, sent_at = $2, updated_at = $2, error = '', attachment = NULL`, []any{StatusSent, now}
	case failure.Outcome == Refuse:
		query, args = `UPDATE mail_outbox SET status = $1, updated_at = $2, error = $3, attachment = NULL`, []any{StatusRefused, now, failure.Text}
	case failure.Outcome == Unclear:
		query, args = `UPDATE mail_outbox SET status = $1, updated_at = `+o.db.NowMicros()+`, error = $2, `+keepForCheck, []any{StatusUnknown, failure.Text}
	default:
		attempts := 0
		_ = o.db.SQL.QueryRowContext(ctx, `SELECT attempts FROM mail_outbox WHERE id = $1`, id).Scan(&attempts)
		if attempts >= o.opts.MaxAttempts {
			query, args = `UPDATE mail_outbox SET status = $1, updated_at = $2, error = $3, attachment = NULL`, []any{StatusFailed, now, failure.Text}
		} else {
			delay := o.backoff(attempts)
			query, args = `UPDATE mail_outbox SET status = $1, updated_at = $2, error = $3, next_attempt = `+o.db.NowMicros()+` + $4`,
				[]any{StatusQueued, now, failure.Text, delay.Microseconds()}
		}
	}
	// Only this holder's own row, whether still sending or already declared unknown by another
	// replica (this holder knows what happened).
	n := len(args)
	query += fmt.Sprintf(`, lease_holder = '', lease_expires = 0 WHERE id = $%d AND lease_holder = $%d AND status IN ('%s', '%s')`,
		n+1, n+2, StatusSending, StatusUnknown)
	args = append(args, id, o.holder)
	o.record(ctx, m, query, args)
	switch {
	case err == nil:
		o.opts.Logger.Info("outbox: mail sent", slog.String("mail", id), slog.String("topic", m.Topic))
	default:
		o.opts.Logger.Warn("outbox: mail not sent", slog.String("mail", id), slog.String("topic", m.Topic),
			slog.String("reason", failure.Text), slog.Int("outcome", int(failure.Outcome)))
	}
}

// record writes a send's answer, again and again while the database is down (until the worker
// stops: the row's lease then ends as unknown, never sent twice).
func (o *Outbox) record(ctx context.Context, m Message, query string, args []any) {
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		_, err := o.db.SQL.ExecContext(context.WithoutCancel(ctx), query, args...)
		if err == nil {
			o.changed(m.Topic, m.Owner)
			return
		}
		o.opts.Logger.Warn("outbox: recording a send's answer failed; retrying", slog.Any("err", err))
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// backoff is the delay after attempt n (from 1): Backoff doubled per further attempt, at most
// MaxBackoff.
func (o *Outbox) backoff(n int) time.Duration {
	d := o.opts.Backoff
	for i := 1; i < n && d < o.opts.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, o.opts.MaxBackoff)
}

func (o *Outbox) changed(topic, owner string) {
	if o.opts.OnChange != nil {
		o.opts.OnChange(topic, owner)
	}
}
