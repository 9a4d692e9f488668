// Package mailcopy is the outbox's "check after" (issue 40, docs/mail.md "Exactly once: the copy
// check"). With PORTAL_MAIL_COPY_TO every mail the outbox sends also goes to a copy address, an
// envelope recipient only, delivered to a mailbox the portal reads over IMAP. An SMTP server takes
// a message for all its recipients at once (its 250 to the end of DATA), so the copy's presence in
// that mailbox, found by the mail's own Message-ID, proves the server took the mail.
//
// A Checker reads the mailbox on one replica at a time (internal/lease, table mail_copy_check) and
// resolves the mails whose sender vanished mid-send ("unknown"):
//   - its copy is there: the mail was sent ("confirmed", sent_at the copy's arrival), never sent
//     again; a copy found for a mail already queued again (not yet claimed) confirms it as well;
//   - no copy a whole grace period after it became unknown: the server did not take it, and it is
//     queued again with the same Message-ID ("resent"), so a copy arriving later still names it
//     and mail clients treat a second arrival as the same message.
//
// The database is written first, then the copy deleted (\Deleted and UID EXPUNGE): a check cut
// short between the two finds the copy again and deletes it then, and a copy is never deleted
// before its mail's row says it was sent. Copies of mails the outbox recorded itself (sent,
// refused, failed, bounced) are deleted at the next check, so the mailbox does not grow; a copy of
// a mail still being sent is left for the next check, and a message that is no copy of an outbox
// mail is left alone.
package mailcopy

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/mail"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/cpqportal/portal/internal/bounce"
	"github.com/cpqportal/portal/internal/lease"
	"github.com/cpqportal/portal/internal/outbox"
	"github.com/cpqportal/portal/internal/statedb"
)

// Defaults of Options.
const (
	// DefaultGrace is how long after a mail became unknown its copy may still arrive: local
	// delivery takes seconds; minutes leave room for a busy server.
	DefaultGrace = 5 * time.Minute
	// DefaultEvery is how often the mailbox is checked (across replicas).
	DefaultEvery = time.Minute
	// DefaultTimeout bounds one check's IMAP conversation.
	DefaultTimeout = 2 * time.Minute
	// fetchChunk bounds the messages one FETCH names.
	fetchChunk = 500
)

// Options configure a Checker.
type Options struct {
	DB     *statedb.DB
	Outbox *outbox.Outbox
	// Mailbox is the copy mailbox (PORTAL_MAIL_COPY_IMAP_URL, else the bounce mailbox); CopyTo
	// the address delivered to it (PORTAL_MAIL_COPY_TO, the outbox's Options.CopyTo).
	Mailbox bounce.Mailbox
	CopyTo  string
	// Domain is the right-hand side of the outbox's Message-IDs (<id@domain>, the public host):
	// only such messages are looked up ('' : every message's).
	Domain string
	// Grace is how long after a mail became unknown a missing copy means it was not taken
	// (PORTAL_MAIL_COPY_GRACE); Every how often the mailbox is read; Timeout one conversation's
	// bound; LeaseTerm the check's lease (Timeout + 1 minute when 0).
	Grace, Every, Timeout, LeaseTerm time.Duration
	// TLSConfig is the client's TLS configuration (nil: the system's roots).
	TLSConfig *tls.Config
	Logger    *slog.Logger
}

// Result is what one check did.
type Result struct {
	// Copies found; Confirmed mails in doubt they resolved as sent; Resent mails queued again;
	// Deleted copies removed from the mailbox; Pending copies of mails still being sent.
	Copies, Confirmed, Resent, Deleted, Pending int
}

// Checker reads the copy mailbox.
type Checker struct {
	opts   Options
	db     *statedb.DB
	holder string
	loop   lease.Loop
	// afterSearch, when set, runs after the mailbox was searched (a test stops the database there).
	afterSearch func()
}

// New returns a checker of opts.Mailbox.
func New(opts Options) *Checker {
	if opts.Grace <= 0 {
		opts.Grace = DefaultGrace
	}
	if opts.Every <= 0 {
		opts.Every = DefaultEvery
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.LeaseTerm <= 0 {
		opts.LeaseTerm = opts.Timeout + time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Checker{opts: opts, db: opts.DB, holder: statedb.NewID()}
}

// Run starts checking (Close stops it).
func (c *Checker) Run() {
	c.loop.Start(min(c.opts.Every, 30*time.Second), func(ctx context.Context) {
		if _, _, err := c.RunDue(ctx); err != nil && ctx.Err() == nil {
			c.opts.Logger.Warn("mailcopy: checking the copy mailbox failed; tried again at the next check",
				slog.String("mailbox", c.opts.Mailbox.String()), slog.Any("err", err))
		}
	})
}

// Close stops checking after the check in flight.
func (c *Checker) Close() { c.loop.Close() }

var checkColumns = lease.Columns{Table: "mail_copy_check", Key: "mailbox", Holder: "holder", Until: "lease_expires",
	NextRun: "next_run", LastRun: "last_run", Runs: "runs"}

// RunDue checks when the check is due and no other replica holds it; ran tells whether it did.
func (c *Checker) RunDue(ctx context.Context) (res Result, ran bool, err error) {
	l := lease.New(c.db, lease.Options{Columns: checkColumns, Key: c.opts.Mailbox.Key(), Holder: c.holder,
		Term: c.opts.LeaseTerm, Every: c.opts.Every})
	ran, err = l.Do(ctx, func(ctx context.Context) error {
		var err error
		res, err = c.Check(ctx)
		return err
	})
	if err != nil {
		return res, ran, fmt.Errorf("mailcopy: check: %w", err)
	}
	if ran && (res.Confirmed > 0 || res.Resent > 0) {
		c.opts.Logger.Info("mailcopy: mails in doubt resolved", slog.Int("confirmed", res.Confirmed), slog.Int("resent", res.Resent),
			slog.Int("copies_deleted", res.Deleted))
	}
	return res, ran, nil
}

// copyOf is a copy found in the mailbox.
type copyOf struct {
	uids    []imap.UID
	arrived time.Time // the earliest copy's INTERNALDATE
}

// Check reads the mailbox once, without the lease (RunDue holds it): the copies of the outbox's
// mails, each resolved as the package says, then the mails in doubt past the grace period without
// a copy queued again.
func (c *Checker) Check(ctx context.Context) (Result, error) {
	var res Result
	// Before the search: a mail unknown at or before cutoff was unknown a whole grace period
	// before the mailbox was searched.
	now, err := c.opts.Outbox.DBNow(ctx)
	if err != nil {
		return res, err
	}
	cutoff := now - c.opts.Grace.Microseconds()
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	cl, err := bounce.Dial(ctx, c.opts.Mailbox, c.opts.TLSConfig)
	if err != nil {
		return res, fmt.Errorf("mailcopy: %w", err)
	}
	defer cl.Close()
	stop := context.AfterFunc(ctx, func() { _ = cl.Close() })
	defer stop()
	if err := c.opts.Mailbox.Login(cl); err != nil {
		return res, fmt.Errorf("mailcopy: %w", err)
	}
	if _, err := cl.Select(c.opts.Mailbox.Name, nil).Wait(); err != nil {
		return res, fmt.Errorf("mailcopy: select %s: %w", c.opts.Mailbox.Name, err)
	}
	copies, err := c.find(ctx, cl)
	if err != nil {
		return res, err
	}
	res.Copies = len(copies)
	if c.afterSearch != nil {
		c.afterSearch()
	}
	ids := make([]string, 0, len(copies))
	for id := range copies {
		ids = append(ids, id)
	}
	statuses, err := c.opts.Outbox.StatusesOf(ctx, ids)
	if err != nil {
		return res, err
	}
	var gone imap.UIDSet
	found := map[string]bool{}
	for id, cp := range copies {
		status, ours := statuses[id]
		if !ours {
			continue // another system's message, or a mail past the retention: left alone
		}
		found[id] = true
		switch status {
		case outbox.StatusSending:
			res.Pending++ // its sender records the answer; deleted at a later check
			continue
		case outbox.StatusUnknown, outbox.StatusQueued:
			ok, err := c.opts.Outbox.ConfirmByCopy(ctx, id, cp.arrived)
			if err != nil {
				return res, err // nothing deleted: the copy is found again
			}
			if ok {
				res.Confirmed++
			} else if s, err := c.opts.Outbox.StatusesOf(ctx, []string{id}); err != nil || s[id] == outbox.StatusSending {
				// Claimed meanwhile: its copy stays until its sender recorded the answer.
				res.Pending++
				continue
			}
		}
		for _, uid := range cp.uids {
			gone.AddNum(uid)
		}
		res.Deleted += len(cp.uids)
	}
	if len(gone) > 0 {
		if err := c.delete(cl, gone); err != nil {
			// Resolved all the same: the copies are deleted at a later check.
			c.opts.Logger.Warn("mailcopy: deleting copies failed; tried again at the next check", slog.Any("err", err))
			res.Deleted = 0
		}
	}
	n, err := c.opts.Outbox.RequeueWithoutCopy(ctx, c.opts.CopyTo, cutoff, found)
	res.Resent = n
	if err != nil {
		return res, err
	}
	if err := cl.Logout().Wait(); err != nil && ctx.Err() == nil {
		c.opts.Logger.Debug("mailcopy: logout", slog.Any("err", err))
	}
	return res, nil
}

// find reads the Message-ID and arrival of every message of the mailbox and keeps those of the
// outbox's domain, keyed by the Message-ID without brackets. Every message is read (in chunks of
// their Message-ID header only), rather than asking the server to SEARCH HEADER: a server whose
// search is a full-text index may not match a part of a Message-ID, and a copy not found lets its
// mail be sent again. The mailbox holds few messages: the copies matched are deleted.
func (c *Checker) find(ctx context.Context, cl *imapclient.Client) (map[string]*copyOf, error) {
	data, err := cl.UIDSearch(&imap.SearchCriteria{}, nil).Wait() // ALL
	if err != nil {
		return nil, fmt.Errorf("mailcopy: search %s: %w", c.opts.Mailbox.Name, err)
	}
	uids := data.AllUIDs()
	out := map[string]*copyOf{}
	section := &imap.FetchItemBodySection{Specifier: imap.PartSpecifierHeader, HeaderFields: []string{"Message-Id"}, Peek: true}
	for start := 0; start < len(uids); start += fetchChunk {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		set := imap.UIDSetNum(uids[start:min(start+fetchChunk, len(uids))]...)
		msgs, err := cl.Fetch(set, &imap.FetchOptions{UID: true, InternalDate: true, BodySection: []*imap.FetchItemBodySection{section}}).Collect()
		if err != nil {
			return nil, fmt.Errorf("mailcopy: fetch %s: %w", c.opts.Mailbox.Name, err)
		}
		for _, m := range msgs {
			id := messageID(m.FindBodySection(section))
			if id == "" || (c.opts.Domain != "" && !strings.HasSuffix(id, "@"+c.opts.Domain)) {
				continue
			}
			cp := out[id]
			if cp == nil {
				cp = &copyOf{arrived: m.InternalDate}
				out[id] = cp
			}
			cp.uids = append(cp.uids, m.UID)
			if m.InternalDate.Before(cp.arrived) {
				cp.arrived = m.InternalDate
			}
		}
	}
	return out, nil
}

// delete flags the copies \Deleted and expunges them (only them, with UIDPLUS; else every
// message flagged \Deleted, as a mail client's "expunge" would).
func (c *Checker) delete(cl *imapclient.Client, uids imap.UIDSet) error {
	if err := cl.Store(uids, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagDeleted}}, nil).Close(); err != nil {
		return fmt.Errorf("mailcopy: flag copies deleted: %w", err)
	}
	var err error
	if cl.Caps().Has(imap.CapUIDPlus) || cl.Caps().Has(imap.CapIMAP4rev2) {
		err = cl.UIDExpunge(uids).Close()
	} else {
		err = cl.Expunge().Close()
	}
	if err != nil {
		return fmt.Errorf("mailcopy: expunge copies: %w", err)
	}
	return nil
}

// messageID is the Message-ID (without brackets) of a message's header block.
func messageID(header []byte) string {
	block := bytes.Join([][]byte{bytes.TrimRight(header, "\r\n"), []byte("\r\n\r\n")}, nil)
	msg, err := mail.ReadMessage(bytes.NewReader(block))
	if err != nil {
		return ""
	}
	return strings.Trim(strings.TrimSpace(msg.Header.Get("Message-Id")), "<>")
}
