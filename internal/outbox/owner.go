package outbox

import (
	"context"
	"fmt"
	"strings"
)

// SentBy reports which of these Message-IDs (as a mail's header carries them, with or without
// the angle brackets) are of mails owner sent: the demo's "Sent mail" page shows a person only
// their own mails, as the quote pages do.
func (o *Outbox) SentBy(ctx context.Context, owner string, messageIDs []string) (map[string]bool, error) {
	out := map[string]bool{}
	if o == nil || owner == "" || len(messageIDs) == 0 {
		return out, nil
	}
	args := []any{owner}
	marks := make([]string, 0, len(messageIDs))
	for _, id := range messageIDs {
		args = append(args, "<"+strings.Trim(id, "<> ")+">")
		marks = append(marks, fmt.Sprintf("$%d", len(args)))
	}
	rows, err := o.db.SQL.QueryContext(ctx, `SELECT message_id FROM mail_outbox WHERE owner = $1 AND message_id IN (`+
		strings.Join(marks, ", ")+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("outbox: mails sent by a person: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("outbox: mails sent by a person: %w", err)
		}
		out[strings.Trim(id, "<>")] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("outbox: mails sent by a person: %w", err)
	}
	return out, nil
}

// BouncesOf reports, of these Message-IDs (with or without angle brackets), the mails of owner a
// delivery report bounced, with the report's status and words ("5.1.1 User unknown"), keyed by
// the Message-ID without brackets: the demo's "Sent mail" page marks them.
func (o *Outbox) BouncesOf(ctx context.Context, owner string, messageIDs []string) (map[string]string, error) {
	out := map[string]string{}
	if o == nil || owner == "" || len(messageIDs) == 0 {
		return out, nil
	}
	args := []any{owner, StatusBounced}
	marks := make([]string, 0, len(messageIDs))
	for _, id := range messageIDs {
		args = append(args, "<"+strings.Trim(id, "<> ")+">")
		marks = append(marks, fmt.Sprintf("$%d", len(args)))
	}
	rows, err := o.db.SQL.QueryContext(ctx, `SELECT message_id, dsn_status, dsn_text FROM mail_outbox WHERE owner = $1 AND status = $2
		AND message_id IN (`+strings.Join(marks, ", ")+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("outbox: bounced mails of a person: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, status, text string
		if err := rows.Scan(&id, &status, &text); err != nil {
			return nil, fmt.Errorf("outbox: bounced mails of a person: %w", err)
		}
		out[strings.Trim(id, "<>")] = strings.TrimSpace(status + " " + text)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("outbox: bounced mails of a person: %w", err)
	}
	return out, nil
}
