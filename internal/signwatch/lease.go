package signwatch

import (
	"context"
	"fmt"
	"time"
)

// leaseName is the watcher's row in watch_leases.
const leaseName = "signatures"

// claim takes or renews the lease for d, by the database's clock: the holder renews its own, any
// replica takes one that ran out. It reports whether this replica holds it now.
func (w *Watcher) claim(ctx context.Context, d time.Duration) (bool, error) {
	now := w.opts.DB.NowMicros()
	res, err := w.opts.DB.SQL.ExecContext(ctx, `INSERT INTO watch_leases (name, holder, until_at) VALUES ($1, $2, `+now+` + $3)
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until_at = excluded.until_at
		WHERE watch_leases.holder = excluded.holder OR watch_leases.until_at < `+now,
		leaseName, w.opts.Holder, d.Microseconds())
	if err != nil {
		return false, fmt.Errorf("signwatch: claim the lease: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("signwatch: claim the lease: %w", err)
	}
	return n == 1, nil
}

// release gives the lease up at shutdown, so another replica takes over at once.
func (w *Watcher) release(ctx context.Context) error {
	if _, err := w.opts.DB.SQL.ExecContext(ctx, `DELETE FROM watch_leases WHERE name = $1 AND holder = $2`, leaseName, w.opts.Holder); err != nil {
		return fmt.Errorf("signwatch: release the lease: %w", err)
	}
	return nil
}
