package inbox

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/outbox"
)

// maxSubjectRunes bounds a mail's subject (an item's text can carry a long customer name).
const maxSubjectRunes = 150

// translator is the person's language's (the source language's when unknown).
func (s *Store) translator(lang string) *i18n.Translator {
	if s.opts.I18n == nil {
		return i18n.From(context.Background())
	}
	tag, ok := s.opts.I18n.Supported(lang)
	if !ok {
		tag = i18n.Source
	}
	return s.opts.I18n.Translator(tag)
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// enqueueItem writes the item's mail to the person in tx (the item's own transaction).
func (s *Store) enqueueItem(ctx context.Context, tx *sql.Tx, p Person, it Item) error {
	tr := s.translator(p.Lang)
	text := Text(tr, it)
	link := strings.TrimRight(s.opts.PublicURL, "/") + "/inbox"
	if it.Link != "" {
		link = strings.TrimRight(s.opts.PublicURL, "/") + it.Link
	}
	body := outbox.Body{Lang: tr.Lang(), Message: text, LinkText: tr.T("inbox.mail.open"), LinkURL: link,
		Footer: tr.T("inbox.mail.footer", strings.TrimRight(s.opts.PublicURL, "/")+"/inbox")}
	return s.enqueue(ctx, tx, p, tr, "inbox:"+it.ID, clip(tr.T("inbox.mail.subject", text), maxSubjectRunes), body)
}

func (s *Store) enqueue(ctx context.Context, tx *sql.Tx, p Person, tr *i18n.Translator, topic, subject string, body outbox.Body) error {
	textPart, htmlPart, err := body.Render()
	if err != nil {
		return fmt.Errorf("inbox: write a mail: %w", err)
	}
	_, err = s.opts.Mail.EnqueueTx(ctx, tx, s.opts.Domain, []outbox.Mail{{
		Owner: p.Key, Topic: topic, Recipient: p.Email, Lang: tr.Lang(),
		FromName: tr.T("inbox.mail.from"), Subject: subject, Text: textPart, HTML: htmlPart,
	}})
	if err != nil {
		return fmt.Errorf("inbox: write a mail: %w", err)
	}
	return nil
}

// maxDigestItems bounds the items one digest lists (the rest are counted and wait in the portal).
const maxDigestItems = 50

// Digest mails each person whose preference is the digest one mail listing the items that
// waited for it, and marks them taken in the same transaction (one digest per item, whoever runs
// it and however often). It returns how many mails it wrote.
func (s *Store) Digest(ctx context.Context) (int, error) {
	rows, err := s.db.SQL.QueryContext(ctx, `SELECT DISTINCT person FROM inbox_items WHERE mail = 'digest'`)
	if err != nil {
		return 0, fmt.Errorf("inbox: digest: %w", err)
	}
	var people []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err == nil {
			people = append(people, k)
		}
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return 0, fmt.Errorf("inbox: digest: %w", err)
	}
	sent := 0
	for _, person := range people {
		var wrote bool
		err := s.db.Tx(ctx, func(tx *sql.Tx) error {
			wrote = false
			p, err := readPerson(ctx, tx, person)
			if err != nil {
				return err
			}
			items, err := s.digestItems(ctx, tx, person)
			if err != nil || len(items) == 0 {
				return err
			}
			if p.Delivery == DeliverDigest && p.Email != "" && s.opts.Mail.Enabled() {
				tr := s.translator(p.Lang)
				var msg strings.Builder
				msg.WriteString(tr.T("inbox.mail.digest_intro", strconv.Itoa(len(items))))
				msg.WriteString("\n")
				for i, it := range items {
					if i == maxDigestItems {
						msg.WriteString("\n" + tr.T("inbox.mail.digest_more", strconv.Itoa(len(items)-maxDigestItems)))
						break
					}
					msg.WriteString("\n- " + Text(tr, it))
				}
				base := strings.TrimRight(s.opts.PublicURL, "/")
				body := outbox.Body{Lang: tr.Lang(), Message: msg.String(), LinkText: tr.T("inbox.mail.open_inbox"), LinkURL: base + "/inbox",
					Footer: tr.T("inbox.mail.footer", base+"/inbox")}
				subject := tr.T("inbox.mail.digest_subject", strconv.Itoa(len(items)))
				if err := s.enqueue(ctx, tx, p, tr, "inbox-digest:"+person, subject, body); err != nil {
					return err
				}
				wrote = true
			}
			// Taken by this digest, or left to the portal alone (the person changed their mind).
			_, err = tx.ExecContext(ctx, `UPDATE inbox_items SET mail = 'digested' WHERE person = $1 AND mail = 'digest'`, person)
			return err
		})
		if err != nil {
			return sent, fmt.Errorf("inbox: digest: %w", err)
		}
		if wrote {
			sent++
		}
	}
	if sent > 0 {
		s.opts.Mail.Wake()
	}
	return sent, nil
}

func (s *Store) digestItems(ctx context.Context, tx *sql.Tx, person string) ([]Item, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, person, dedupe, kind, params, link, created_at, read_at FROM inbox_items
		WHERE person = $1 AND mail = 'digest' ORDER BY created_at, id`+s.db.ForUpdate(), person)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Item
	for rows.Next() {
		it, err := scanItem(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, rows.Err()
}
