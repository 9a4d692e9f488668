package workindex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// MayTell reports whether person (a key) may be told about the row kind/id by the portal's own
// initiative (an inbox item, a reminder, issue 40): their own token read it (work_viewers) and the
// v2 API has not refused it to them since (work_denied; a refusal also deletes the read). This is
// the visibility rule less its freshness: the news is about the row (a signer's answer changes its
// facts), and the page it links to re-reads the row with the person's token. q is the pool or the
// transaction the news is written in (so a refusal committed before it is seen).
func MayTell(ctx context.Context, q querier, person string, kind Kind, id int64) (bool, error) {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM work_viewers o WHERE o.person = $1 AND o.kind = $2 AND o.id = $3
		AND NOT EXISTS (SELECT 1 FROM work_denied d WHERE d.person = o.person AND d.kind = o.kind AND d.id = o.id)`,
		person, string(kind), id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("workindex: may %s be told of %s %d: %w", person, kind, id, err)
	}
	return true, nil
}
