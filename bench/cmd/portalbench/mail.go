package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/cpqportal/portal/internal/demomail"
	"github.com/cpqportal/portal/internal/inbox"
	"github.com/cpqportal/portal/internal/outbox"
	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// The e-mail and the inbox (issue 40, docs/mail.md, docs/inbox.md). Labless: each engine's state
// database is made here (SQLite in a temporary directory, PostgreSQL in a throwaway cluster), one
// after the other; the inbox's 11 million items are a copy of a cached fill (fillcache.go).
//
//	mail_outbox_1000_seconds  1,000 mails written to the outbox (10 sends of 100 recipients) until
//	                          the last is recorded sent, through go-mail to a real SMTP server on
//	                          the loopback interface (internal/demomail, go-smtp, in this process):
//	                          the outbox's whole path, one conversation per mail
//	inbox_count_ms_1m         the header's unread count (inbox.Store.Unread: what GET /inbox/count
//	                          reads) of a person with 1,000,000 items of every kind, half unread:
//	                          the median of mailCountSamples reads
const (
	mailOutboxMails    = 1000
	mailOutboxBudgetS  = 120 // an SMTP conversation per mail and four writes: ~0.1 s a mail at worst
	inboxPerKind       = 1_000_000
	inboxCountSamples  = 2000
	inboxCountBudgetMS = 5
)

func measureMail(ctx context.Context, fills *fillCache, rep *report) error {
	cluster, err := statedbtest.NewCluster()
	if err != nil {
		return fmt.Errorf("mail: a throwaway PostgreSQL: %w", err)
	}
	defer cluster.Remove()
	var failures []string
	for _, engine := range []statedb.Engine{statedb.SQLite, statedb.Postgres} {
		prefix := ""
		if engine == statedb.Postgres {
			prefix = "postgres_"
		}
		err := func() error {
			db, cleanup, err := mailBenchDB(ctx, cluster, engine)
			if err != nil {
				return err
			}
			defer cleanup()
			s, err := measureOutbox(ctx, db)
			if err != nil {
				return fmt.Errorf("outbox: %w", err)
			}
			rep.add("mail_"+prefix+"outbox_1000_seconds", s, "s")
			if s > mailOutboxBudgetS {
				failures = append(failures, fmt.Sprintf("mail_%soutbox_1000_seconds %.1f > %d", prefix, s, mailOutboxBudgetS))
			}
			// The inbox: a copy of the cached fill (fillcache.go) in a database of its own (on
			// PostgreSQL in a throwaway cluster of its own), named by its size (inboxPerKind is
			// here, not in fill.go: not in the cache's key).
			var countOpts statedb.Options
			inboxFill := "inbox-" + sizeName(inboxPerKind)
			if engine == statedb.SQLite {
				dir, err := os.MkdirTemp("", "portalbench-inbox-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(dir)
				if err := fills.sqlite(ctx, inboxFill, dir, fillInbox); err != nil {
					return fmt.Errorf("inbox fill: %w", err)
				}
				countOpts.Dir = dir
			} else {
				inboxCluster, url, err := fills.postgres(ctx, inboxFill, "bench_inbox", fillInbox)
				if err != nil {
					return fmt.Errorf("inbox fill: %w", err)
				}
				defer inboxCluster.Remove()
				countOpts.URL = url
			}
			countDB, err := statedb.Open(ctx, countOpts)
			if err != nil {
				return err
			}
			defer countDB.Close()
			count, err := measureInboxCount(ctx, countDB)
			if err != nil {
				return fmt.Errorf("inbox count: %w", err)
			}
			rep.add("inbox_"+prefix+"count_ms_1m", count, "ms")
			if count > inboxCountBudgetMS {
				failures = append(failures, fmt.Sprintf("inbox_%scount_ms_1m %.2f > %d", prefix, count, inboxCountBudgetMS))
			}
			return nil
		}()
		if err != nil {
			failures = append(failures, fmt.Sprintf("%s: %v", engine, err))
		}
	}
	if len(failures) > 0 {
		return fmt.Errorf("mail: %v", failures)
	}
	return nil
}

// mailBenchDB is a fresh state database of engine, and what removes it.
func mailBenchDB(ctx context.Context, cluster *statedbtest.Cluster, engine statedb.Engine) (*statedb.DB, func(), error) {
	opts := statedb.Options{}
	var remove func()
	switch engine {
	case statedb.SQLite:
		dir, err := os.MkdirTemp("", "portalbench-mail-")
		if err != nil {
			return nil, nil, err
		}
		opts.Dir, remove = dir, func() { os.RemoveAll(dir) }
	case statedb.Postgres:
		const name = "bench_mail"
		admin, err := sql.Open("pgx", cluster.URL)
		if err != nil {
			return nil, nil, err
		}
		_, err = admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		if err == nil {
			_, err = admin.ExecContext(ctx, "CREATE DATABASE "+name)
		}
		admin.Close()
		if err != nil {
			return nil, nil, err
		}
		u, err := url.Parse(cluster.URL)
		if err != nil {
			return nil, nil, err
		}
		u.Path = "/" + name
		opts.URL, remove = u.String(), func() {}
	}
	db, err := statedb.Open(ctx, opts)
	if err != nil {
		remove()
		return nil, nil, err
	}
	return db, func() { db.Close(); remove() }, nil
}

// measureOutbox sends mailOutboxMails mails through the outbox to an SMTP server in this process
// and returns the seconds from the first write to the last mail recorded sent.
func measureOutbox(ctx context.Context, db *statedb.DB) (float64, error) {
	server, err := demomail.Start()
	if err != nil {
		return 0, err
	}
	defer server.Close()
	smtpServer, err := outbox.ParseSMTPURL(server.URL())
	if err != nil {
		return 0, err
	}
	box := outbox.New(outbox.Options{DB: db, Sender: outbox.SMTPSender{Server: smtpServer, From: "portal@bench.invalid"}})
	defer box.Close()
	box.Run()
	start := time.Now()
	const perSend = 100
	for b := range mailOutboxMails / perSend {
		mails := make([]outbox.Mail, perSend)
		for i := range mails {
			n := b*perSend + i
			mails[i] = outbox.Mail{Owner: "bench", Topic: "quote:" + strconv.Itoa(n%50), Recipient: fmt.Sprintf("customer-%d@bench.invalid", n),
				Lang: "en", FromName: "Sam Sales", ReplyTo: "sam@bench.invalid", Subject: "Your offer " + strconv.Itoa(n),
				Text: "Dear customer,\n\nplease find our offer attached.\n", HTML: "<p>Dear customer,</p><p>please find our offer attached.</p>",
				AttachmentName: "Offer 2026-0001.pdf", AttachmentType: "application/pdf", Attachment: make([]byte, 32<<10)}
		}
		if _, err := box.Enqueue(ctx, "bench.invalid", mails); err != nil {
			return 0, err
		}
	}
	deadline := time.Now().Add(10 * time.Minute)
	for {
		var sent, other int
		if err := db.SQL.QueryRowContext(ctx, `SELECT COUNT(CASE WHEN status = 'sent' THEN 1 END),
			COUNT(CASE WHEN status NOT IN ('sent', 'queued', 'sending') THEN 1 END) FROM mail_outbox`).Scan(&sent, &other); err != nil {
			return 0, err
		}
		if other > 0 {
			return 0, fmt.Errorf("%d mails ended neither sent nor on their way", other)
		}
		if sent == mailOutboxMails {
			return time.Since(start).Seconds(), nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return 0, fmt.Errorf("%d of %d mails sent after 10 minutes", sent, mailOutboxMails)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// querier is what both a pool and a transaction offer.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// secondaryIndexes are the indexes of table besides its primary key: name to definition.
func secondaryIndexes(ctx context.Context, q querier, engine statedb.Engine, table string) (map[string]string, error) {
	stmt := `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = $1 AND sql IS NOT NULL`
	if engine == statedb.Postgres {
		stmt = `SELECT indexname, indexdef FROM pg_indexes WHERE tablename = $1 AND indexname <> $1 || '_pkey'`
	}
	rows, err := q.QueryContext(ctx, stmt, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			return nil, err
		}
		out[name] = def
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no index of %s found", table)
	}
	return out, nil
}

// inboxKinds are the kinds of items the bench's person has inboxPerKind of each.
var inboxKinds = []inbox.Kind{inbox.KindSigned, inbox.KindDeclined, inbox.KindOfferExpires, inbox.KindSignatureWaiting,
	inbox.KindArchiveWaiting, inbox.KindArchiveFinished, inbox.KindArchiveFailed, inbox.KindHandoverFinished,
	inbox.KindHandoverFailed, inbox.KindImportFinished, inbox.KindImportFailed}

// measureInboxCount returns the median time of the header's count of the person fillInbox
// filled db for.
func measureInboxCount(ctx context.Context, db *statedb.DB) (float64, error) {
	person := inbox.PersonKey(inboxBenchPerson)
	s := inbox.New(inbox.Options{DB: db, Now: fillClock(time.Now)})
	want := len(inboxKinds) * inboxPerKind / 2
	var samples []float64
	for range inboxCountSamples {
		t0 := time.Now()
		n, err := s.Unread(ctx, person)
		if err != nil {
			return 0, err
		}
		samples = append(samples, ms(time.Since(t0)))
		if n != want {
			return 0, fmt.Errorf("the count is %d, want %d", n, want)
		}
	}
	return median(samples), nil
}
