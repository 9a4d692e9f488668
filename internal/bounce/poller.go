// Package bounce reads the bounce mailbox: the delivery status notifications (RFC 3464, and the
// common non-standard bounces that only quote the original headers) that arrive later for mails
// the outbox handed to the SMTP server. A report of a failure ends the mail as "bounced" and tells
// its sender (docs/mail.md "Bounces").
//
// The poll runs on one replica at a time (internal/lease: a row of table mail_bounce_poll, on
// the database's clock, as the inbox's scheduled scans do) and records how far it read (the mailbox's
// UIDVALIDITY and the last UID), so nothing is read twice and nothing is skipped over a restart.
// A report applied is marked \Seen; any other mail is left as it is (unseen) and logged once.
// Applying a report is idempotent (outbox.ApplyDSN, an inbox item per mail), so a poll cut short
// between applying and recording does no harm when it runs again.
package bounce

import (
	"bytes"
	"context"
	"crypto/tls"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/mail"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/cpqportal/portal/internal/lease"
	"github.com/cpqportal/portal/internal/outbox"
	"github.com/cpqportal/portal/internal/statedb"
)

// Defaults of Options.
const (
	DefaultEvery = 5 * time.Minute
	// DefaultMaxMessages bounds the messages one poll reads (the rest wait for the next).
	DefaultMaxMessages = 50
	// DefaultMaxSize bounds the bytes read of one message: a report's status and the returned
	// headers come first; the rest of a large returned message is not needed.
	DefaultMaxSize = 256 << 10
	// DefaultTimeout bounds one poll's IMAP conversation.
	DefaultTimeout = 2 * time.Minute
)

// Options configure a Poller.
type Options struct {
	DB      *statedb.DB
	Outbox  *outbox.Outbox
	Mailbox Mailbox
	// Every is how often the mailbox is read (across replicas).
	Every time.Duration
	// MaxMessages and MaxSize bound a poll; Timeout its conversation.
	MaxMessages int
	MaxSize     int64
	Timeout     time.Duration
	// OnBounce, when set, is called for each mail a report bounced (also when it was bounced by
	// an earlier poll that did not finish: it must be idempotent, as inbox items are by mail). An
	// error leaves the report unread, tried again at the next poll.
	OnBounce func(ctx context.Context, b outbox.Bounced) error
	// TLSConfig is the client's TLS configuration (nil: the system's roots).
	TLSConfig *tls.Config
	Logger    *slog.Logger
}

// Result is what one poll did.
type Result struct {
	Read, Bounced, Delayed, Unrelated, Unknown int
	// Copies are the copies of outbox mails read (the copy check's, sharing the mailbox): left
	// alone and not logged.
	Copies int
}

// Poller reads the bounce mailbox.
type Poller struct {
	opts   Options
	db     *statedb.DB
	holder string
	loop   lease.Loop
}

// New returns a poller of opts.Mailbox.
func New(opts Options) *Poller {
	if opts.Every <= 0 {
		opts.Every = DefaultEvery
	}
	if opts.MaxMessages <= 0 {
		opts.MaxMessages = DefaultMaxMessages
	}
	if opts.MaxSize <= 0 {
		opts.MaxSize = DefaultMaxSize
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Poller{opts: opts, db: opts.DB, holder: statedb.NewID()}
}

// Run starts polling (Close stops it).
func (p *Poller) Run() {
	p.loop.Start(min(p.opts.Every, 30*time.Second), func(ctx context.Context) {
		if _, _, err := p.RunDue(ctx); err != nil && ctx.Err() == nil {
			p.opts.Logger.Warn("bounce: reading the bounce mailbox failed; tried again at the next poll",
				slog.String("mailbox", p.opts.Mailbox.String()), slog.Any("err", err))
		}
	})
}

// Close stops polling after the poll in flight.
func (p *Poller) Close() { p.loop.Close() }

// lease is how long a replica holds the poll unless it renews it (every third of it while it
// polls): one that vanished mid-poll leaves it to another after this.
func (p *Poller) lease() time.Duration { return p.opts.Timeout + time.Minute }

// pollColumns are mail_bounce_poll's lease columns; uid_validity and last_uid stay this package's
// (advance fences on the holder).
var pollColumns = lease.Columns{Table: "mail_bounce_poll", Key: "mailbox", Holder: "holder", Until: "lease_expires",
	NextRun: "next_run", LastRun: "last_run", Runs: "runs"}

// RunDue polls when the poll is due and no other replica holds it; ran tells whether it did. A
// poll that failed is not moved on: the next tick (here or elsewhere) polls again.
func (p *Poller) RunDue(ctx context.Context) (res Result, ran bool, err error) {
	key := p.opts.Mailbox.key()
	poll := lease.New(p.db, lease.Options{Columns: pollColumns, Key: key, Holder: p.holder, Term: p.lease(), Every: p.opts.Every})
	ran, err = poll.Do(ctx, func(ctx context.Context) error {
		var err error
		res, err = p.poll(ctx, key)
		return err
	})
	if err != nil {
		return res, ran, fmt.Errorf("bounce: poll: %w", err)
	}
	if !ran {
		return res, false, nil
	}
	p.opts.Logger.Info("bounce: bounce mailbox read", slog.Int("read", res.Read), slog.Int("bounced", res.Bounced),
		slog.Int("delayed", res.Delayed), slog.Int("unrelated", res.Unrelated), slog.Int("unknown", res.Unknown), slog.Int("copies", res.Copies))
	return res, true, nil
}

// Runs is how many polls of the mailbox completed (across replicas).
func (p *Poller) Runs(ctx context.Context) (int64, error) {
	var n int64
	err := p.db.SQL.QueryRowContext(ctx, `SELECT runs FROM mail_bounce_poll WHERE mailbox = $1`, p.opts.Mailbox.key()).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil // never polled
	}
	if err != nil {
		return 0, fmt.Errorf("bounce: read the polls' count: %w", err)
	}
	return n, nil
}

// poll reads the messages after the last UID read, at most MaxMessages, oldest first.
func (p *Poller) poll(ctx context.Context, key string) (Result, error) {
	var res Result
	var validity, lastUID int64
	if err := p.db.SQL.QueryRowContext(ctx, `SELECT uid_validity, last_uid FROM mail_bounce_poll WHERE mailbox = $1`, key).
		Scan(&validity, &lastUID); err != nil {
		return res, fmt.Errorf("bounce: read how far the mailbox was read: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	defer cancel()
	c, err := p.dial(ctx)
	if err != nil {
		return res, err
	}
	defer c.Close()
	// The conversation ends with ctx: a server that stops answering does not hold the poll.
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer stop()
	if err := p.opts.Mailbox.Login(c); err != nil {
		return res, fmt.Errorf("bounce: %w", err)
	}
	sel, err := c.Select(p.opts.Mailbox.Name, nil).Wait()
	if err != nil {
		return res, fmt.Errorf("bounce: select %s: %w", p.opts.Mailbox.Name, err)
	}
	if int64(sel.UIDValidity) != validity {
		// A new mailbox (or one rebuilt by the server): its UIDs start anew. Reports read again
		// are applied again, which changes nothing.
		if validity != 0 {
			p.opts.Logger.Warn("bounce: the mailbox's UIDVALIDITY changed; reading it from the start", slog.String("mailbox", p.opts.Mailbox.String()))
		}
		validity, lastUID = int64(sel.UIDValidity), 0
		if err := p.advance(ctx, key, validity, 0); err != nil {
			return res, err
		}
	}
	if sel.NumMessages == 0 || (sel.UIDNext != 0 && int64(sel.UIDNext) <= lastUID+1) {
		return res, nil
	}
	var after imap.UIDSet
	after.AddRange(imap.UID(lastUID+1), 0) // lastUID+1:*
	found, err := c.UIDSearch(&imap.SearchCriteria{UID: []imap.UIDSet{after}}, nil).Wait()
	if err != nil {
		return res, fmt.Errorf("bounce: search %s: %w", p.opts.Mailbox.Name, err)
	}
	var uids []imap.UID
	for _, uid := range found.AllUIDs() {
		if int64(uid) > lastUID { // "n:*" always matches the last message, even below n
			uids = append(uids, uid)
		}
	}
	if len(uids) > p.opts.MaxMessages {
		uids = uids[:p.opts.MaxMessages]
	}
	for _, uid := range uids {
		if err := p.readOne(ctx, c, uid, &res); err != nil {
			return res, err
		}
		if err := p.advance(ctx, key, validity, int64(uid)); err != nil {
			return res, err
		}
	}
	if err := c.Logout().Wait(); err != nil && ctx.Err() == nil {
		p.opts.Logger.Debug("bounce: logout", slog.Any("err", err))
	}
	return res, nil
}

// advance records that the mailbox was read up to uid (this holder only: a replica that lost the
// lease records nothing more).
func (p *Poller) advance(ctx context.Context, key string, validity, uid int64) error {
	_, err := p.db.SQL.ExecContext(ctx, `UPDATE mail_bounce_poll SET uid_validity = $1, last_uid = $2 WHERE mailbox = $3 AND holder = $4`,
		validity, uid, key, p.holder)
	if err != nil {
		return fmt.Errorf("bounce: record how far the mailbox was read: %w", err)
	}
	return nil
}

// readOne fetches message uid (its first MaxSize bytes, without setting \Seen), applies it when it
// is a report of an outbox mail, and marks it \Seen then. Anything else is logged and left alone.
func (p *Poller) readOne(ctx context.Context, c *imapclient.Client, uid imap.UID, res *Result) error {
	section := &imap.FetchItemBodySection{Peek: true, Partial: &imap.SectionPartial{Offset: 0, Size: p.opts.MaxSize}}
	msgs, err := c.Fetch(imap.UIDSetNum(uid), &imap.FetchOptions{UID: true, RFC822Size: true, BodySection: []*imap.FetchItemBodySection{section}}).Collect()
	if err != nil {
		return fmt.Errorf("bounce: fetch message %d: %w", uid, err)
	}
	if len(msgs) == 0 {
		return nil // expunged meanwhile
	}
	res.Read++
	raw := msgs[0].FindBodySection(section)
	log := p.opts.Logger.With(slog.Uint64("uid", uint64(uid)), slog.Int64("size", msgs[0].RFC822Size))
	rep, err := Parse(bytes.NewReader(raw))
	if err != nil && p.isCopy(ctx, raw) {
		// A copy of an outbox mail (the copy check's, when its mailbox is this one): no report;
		// the copy check deletes it.
		res.Copies++
		return nil
	}
	if err != nil {
		res.Unrelated++
		log.Info("bounce: a message in the bounce mailbox is no delivery report; left as it is")
		return nil
	}
	applied := false
	for _, r := range rep.Recipients {
		if !r.Failed() && !r.Delayed() {
			continue // delivered, relayed, expanded: nothing to tell
		}
		b, err := p.apply(ctx, rep.MessageID, r)
		if errors.Is(err, outbox.ErrNoSuchMail) {
			continue
		}
		if err != nil {
			return err
		}
		applied = true
		switch {
		case b.Bounced && r.Failed():
			res.Bounced++
			if p.opts.OnBounce != nil {
				if err := p.opts.OnBounce(ctx, b); err != nil {
					return fmt.Errorf("bounce: tell the sender of %s: %w", b.ID, err)
				}
			}
		case r.Delayed():
			res.Delayed++
			log.Info("bounce: a mail is delayed; the servers still try", slog.String("mail", b.ID), slog.String("dsn_status", r.Status))
		}
	}
	if !applied {
		res.Unknown++
		log.Info("bounce: a delivery report of no mail of the outbox; left as it is", slog.String("message_id", rep.MessageID))
		return nil
	}
	if err := c.Store(imap.UIDSetNum(uid), &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagSeen}}, nil).Close(); err != nil {
		// Applied all the same; the mark only helps whoever reads the mailbox by hand.
		log.Warn("bounce: marking a report read failed", slog.Any("err", err))
	}
	return nil
}

// isCopy reports whether raw is a copy of a mail of the outbox (its Message-ID is one the outbox
// wrote): the copy check (internal/mailcopy, PORTAL_MAIL_COPY_TO) may share this mailbox.
func (p *Poller) isCopy(ctx context.Context, raw []byte) bool {
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return false
	}
	id := strings.Trim(strings.TrimSpace(msg.Header.Get("Message-Id")), "<>")
	if id == "" {
		return false
	}
	known, err := p.opts.Outbox.StatusesOf(ctx, []string{id})
	return err == nil && known[id] != ""
}

// apply records one recipient's report: by Final-Recipient, else by Original-Recipient (a
// forward rewrote the final address), else by the Message-ID alone when the report names no
// address (each outbox mail has one recipient and its own Message-ID).
func (p *Poller) apply(ctx context.Context, messageID string, r Recipient) (outbox.Bounced, error) {
	status := r.Status
	if r.Delayed() && !r.Failed() && !strings.HasPrefix(status, "4.") {
		status = "4.0.0"
	}
	diag := r.Diagnostic
	var last error = outbox.ErrNoSuchMail
	for _, addr := range []string{r.Final, r.Original} {
		if addr == "" {
			continue
		}
		b, err := p.opts.Outbox.ApplyDSN(ctx, outbox.DSN{MessageID: messageID, Recipient: addr, Status: status, Diagnostic: diag})
		if !errors.Is(err, outbox.ErrNoSuchMail) {
			return b, err
		}
		last = err
	}
	if r.Final == "" && r.Original == "" {
		return p.opts.Outbox.ApplyDSN(ctx, outbox.DSN{MessageID: messageID, Status: status, Diagnostic: diag})
	}
	return outbox.Bounced{}, last
}

// dial connects to the server as Mailbox.TLS says.
func (p *Poller) dial(ctx context.Context) (*imapclient.Client, error) {
	return Dial(ctx, p.opts.Mailbox, p.opts.TLSConfig)
}

// Dial connects to m's server as m.TLS says (STARTTLS is required on imap:// unless starttls=0),
// not yet logged in (Login). tlsConfig nil: the system's roots.
func Dial(ctx context.Context, m Mailbox, tlsConfig *tls.Config) (*imapclient.Client, error) {
	dialer := &net.Dialer{Timeout: 30 * time.Second}
	if deadline, ok := ctx.Deadline(); ok {
		dialer.Deadline = deadline
	}
	if tlsConfig == nil {
		tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if tlsConfig.ServerName == "" {
		tlsConfig = tlsConfig.Clone()
		tlsConfig.ServerName = m.Host
	}
	opts := &imapclient.Options{TLSConfig: tlsConfig, Dialer: dialer}
	var c *imapclient.Client
	var err error
	switch m.TLS {
	case "tls":
		c, err = imapclient.DialTLS(m.Addr(), opts)
	case "none":
		c, err = imapclient.DialInsecure(m.Addr(), opts)
	default:
		c, err = imapclient.DialStartTLS(m.Addr(), opts)
	}
	if err != nil {
		return nil, fmt.Errorf("bounce: connect to %s: %w", m, err)
	}
	return c, nil
}

// Login logs c in as m's user.
func (m Mailbox) Login(c *imapclient.Client) error {
	if err := c.Login(m.Username, m.password).Wait(); err != nil {
		return fmt.Errorf("log in to %s: %w", m, err)
	}
	return nil
}

func netJoin(host string, port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }
