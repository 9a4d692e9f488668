package inbox

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
)

// purgeBatch bounds the items one transaction of Purge deletes, so a first purge of a large
// table holds no long lock.
const purgeBatch = 1000

// Purge deletes the items read and created before readBefore, and the unread ones created before
// unreadBefore (a zero time keeps them), each unread one leaving its person's count in the
// transaction that deletes it; it returns how many items went. An item deleted no longer
// deduplicates its event: a reminder of a contract still waiting after it may come again.
func (s *Store) Purge(ctx context.Context, readBefore, unreadBefore time.Time) (int64, error) {
	var total int64
	for _, pass := range []struct {
		before time.Time
		unread bool
	}{{readBefore, false}, {unreadBefore, true}} {
		if pass.before.IsZero() {
			continue
		}
		for {
			n, err := s.purgeBatch(ctx, pass.before, pass.unread)
			total += n
			if err != nil {
				return total, err
			}
			if n < purgeBatch {
				break
			}
		}
	}
	return total, nil
}

// purgeBatch deletes at most purgeBatch items of one kind (read or unread) created before before.
func (s *Store) purgeBatch(ctx context.Context, before time.Time, unread bool) (int64, error) {
	cond := "read_at <> 0"
	if unread {
		cond = "read_at = 0"
	}
	var n int64
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		n = 0
		// The condition is repeated outside the sub-select: PostgreSQL checks it again on a row a
		// concurrent MarkRead changed, so a count is never taken off twice.
		rows, err := tx.QueryContext(ctx, `DELETE FROM inbox_items WHERE id IN (
				SELECT id FROM inbox_items WHERE created_at < $1 AND `+cond+` ORDER BY created_at LIMIT $2)
			AND created_at < $1 AND `+cond+` RETURNING person`, statedb.Micros(before), purgeBatch)
		if err != nil {
			return fmt.Errorf("inbox: purge: %w", err)
		}
		people := map[string]int64{}
		for rows.Next() {
			var person string
			if err := rows.Scan(&person); err != nil {
				rows.Close()
				return fmt.Errorf("inbox: purge: %w", err)
			}
			people[person]++
			n++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("inbox: purge: %w", err)
		}
		if !unread {
			return nil
		}
		for person, k := range people {
			if err := s.uncount(ctx, tx, person, k); err != nil {
				return err
			}
		}
		return nil
	})
	return n, err
}
