package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"slices"
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
// after the other.
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

func measureMail(ctx context.Context, rep *report) error {
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
			count, err := measureInboxCount(ctx, db)
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

// secondaryIndexes are the indexes of table besides its primary key: name to definition.
func secondaryIndexes(ctx context.Context, db *statedb.DB, table string) (map[string]string, error) {
	q := `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = $1 AND sql IS NOT NULL`
	if db.Engine() == statedb.Postgres {
		q = `SELECT indexname, indexdef FROM pg_indexes WHERE tablename = $1 AND indexname <> $1 || '_pkey'`
	}
	rows, err := db.SQL.QueryContext(ctx, q, table)
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

// measureInboxCount fills one person's inbox with inboxPerKind items of every kind (bulk SQL,
// half of them read, the unread count as the inbox keeps it) and returns the median time of the
// header's count.
func measureInboxCount(ctx context.Context, db *statedb.DB) (float64, error) {
	person := inbox.PersonKey("bench-rep")
	base := time.Now().AddDate(0, 0, -60).UnixMicro()
	// The table's secondary indexes are made again after the fill (a sort instead of 11 million
	// inserts into each), from their own definitions: the table ends as the migrations make it.
	indexes, err := secondaryIndexes(ctx, db, "inbox_items")
	if err != nil {
		return 0, err
	}
	for name := range indexes {
		if _, err := db.SQL.ExecContext(ctx, `DROP INDEX `+name); err != nil {
			return 0, err
		}
	}
	// Ids ascending (zero-padded) so the primary key is appended to, as statedb.NewID's are not,
	// which only makes the fill faster.
	padded := `printf('%08d', i)`
	if db.Engine() == statedb.Postgres {
		padded = `lpad(CAST(i AS TEXT), 8, '0')`
	}
	series := seriesCTE(db.Engine(), inboxPerKind)
	kinds := slices.Clone(inboxKinds)
	slices.Sort(kinds)
	for _, kind := range kinds {
		at := strconv.FormatInt(base, 10) + ` + CAST(i AS BIGINT) * 5000`
		q := series + `INSERT INTO inbox_items (id, person, dedupe, kind, params, link, created_at, read_at)
			SELECT '` + string(kind) + `-' || ` + padded + `, '` + person + `', '` + string(kind) + `:' || i, '` + string(kind) + `',
			'{"number":"C-1","customer":"Customer"}', '/contracts/' || i, ` + at + `,
			CASE WHEN i % 2 = 0 THEN ` + at + ` + 1000 ELSE 0 END FROM s`
		if _, err := db.SQL.ExecContext(ctx, q); err != nil {
			return 0, fmt.Errorf("fill %s: %w", kind, err)
		}
	}
	for _, def := range indexes {
		if _, err := db.SQL.ExecContext(ctx, def); err != nil {
			return 0, fmt.Errorf("index again: %w", err)
		}
	}
	if _, err := db.SQL.ExecContext(ctx, `INSERT INTO inbox_unread (person, n)
		SELECT person, COUNT(*) FROM inbox_items WHERE read_at = 0 GROUP BY person`); err != nil {
		return 0, err
	}
	stmt := "ANALYZE"
	if db.Engine() == statedb.Postgres {
		stmt = "VACUUM (ANALYZE)"
	}
	if _, err := db.SQL.ExecContext(ctx, stmt); err != nil {
		return 0, err
	}
	s := inbox.New(inbox.Options{DB: db})
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
