package session

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
)

// sqlKV is the kv in the state database (internal/statedb, tables session_values and
// session_members, migration 00006), shared by every replica on one PostgreSQL. Expiry is a
// column compared on every read, so an expired row is absent at once; expired rows are deleted
// at most every sweepEvery, during a write. Set-if-absent and set-if-present are single
// statements (an upsert whose update applies only to an expired row; an update of a live row),
// atomic on both engines. Keys are namespaced by prefix, so the cookie store's revocations and
// the server store's sessions never meet.
//
// A database that does not answer signs nobody out: get answers what this replica last read or
// wrote for the key, for up to outageGrace (the outage fallback), so the people signed in keep
// working while the database is down (their lists say "unavailable"; docs/operations.md). A
// session signed out on another replica during the outage stays open here until the grace ends:
// its sign-out could not be written anyway.
type sqlKV struct {
	db     *statedb.DB
	now    func() time.Time
	prefix string
	// cache answers get without the database while it may (valueCache), shared by the sqlKVs of db.
	cache *valueCache

	mu        sync.Mutex
	lastSweep time.Time
	// known is the outage fallback: the last answer for each key, bounded by maxKnown.
	known map[string]knownValue
}

// knownValue is the last answer of the database for a key: its value, or absent (nil).
type knownValue struct {
	value []byte
	at    time.Time
}

const (
	// outageGrace is how long an answer stands in for the database while it does not answer.
	outageGrace = 10 * time.Minute
	// maxKnown bounds the fallback (a sealed session is about 2 KiB: at most about 40 MiB).
	maxKnown = 20_000
)

func newSQLKV(db *statedb.DB, now func() time.Time, prefix string) *sqlKV {
	return &sqlKV{db: db, now: now, prefix: prefix, cache: cacheOf(db), lastSweep: now(), known: map[string]knownValue{}}
}

// remember keeps the database's answer for key (nil: absent) for the outage fallback.
func (k *sqlKV) remember(key string, value []byte) {
	now := k.now()
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.known[key]; !ok && len(k.known) >= maxKnown {
		for key, v := range k.known {
			if now.Sub(v.at) >= outageGrace {
				delete(k.known, key)
			}
		}
		if len(k.known) >= maxKnown {
			clear(k.known)
		}
	}
	k.known[key] = knownValue{value: value, at: now}
}

// recall is the fallback's answer for key while the database does not answer.
func (k *sqlKV) recall(key string) ([]byte, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	v, ok := k.known[key]
	if !ok || k.now().Sub(v.at) >= outageGrace {
		return nil, false
	}
	return v.value, true
}

func (k *sqlKV) nowMicros() int64 { return statedb.Micros(k.now()) }

func (k *sqlKV) get(ctx context.Context, key string) ([]byte, error) {
	now := k.nowMicros()
	if value, ok := k.cache.lookup(k.prefix+key, now); ok {
		if value == nil {
			return nil, errNotFound
		}
		return value, nil
	}
	gen := k.cache.generation()
	var value []byte
	var expires int64
	err := k.db.SQL.QueryRowContext(ctx, "SELECT value, expires_at FROM session_values WHERE key = $1",
		k.prefix+key).Scan(&value, &expires)
	if err == nil && expires <= now {
		k.cache.keep(gen, k.prefix+key, value, expires)
		err = sql.ErrNoRows
	}
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if expires == 0 {
			k.cache.keep(gen, k.prefix+key, nil, noRow)
		}
		k.remember(key, nil)
		return nil, errNotFound
	case err != nil && ctx.Err() == nil:
		if v, ok := k.recall(key); ok {
			if v == nil {
				return nil, errNotFound
			}
			return v, nil
		}
		return nil, fmt.Errorf("session: database get: %w", err)
	case err != nil:
		return nil, fmt.Errorf("session: database get: %w", err)
	}
	k.cache.keep(gen, k.prefix+key, value, expires)
	k.remember(key, value)
	return value, nil
}

func (k *sqlKV) set(ctx context.Context, key string, value []byte, ttl time.Duration, mode setMode) (bool, error) {
	k.sweep(ctx)
	now := k.now()
	args := []any{k.prefix + key, value, statedb.Micros(now.Add(ttl)), statedb.Micros(now)}
	var query string
	switch mode {
	case setIfAbsent:
		query = `INSERT INTO session_values (key, value, expires_at) VALUES ($1, $2, $3)
ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at
WHERE session_values.expires_at <= $4`
	case setIfPresent:
		query = "UPDATE session_values SET value = $2, expires_at = $3 WHERE key = $1 AND expires_at > $4"
	default:
		query = `INSERT INTO session_values (key, value, expires_at) VALUES ($1, $2, $3)
ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at`
		args = args[:3]
	}
	res, err := k.db.SQL.ExecContext(ctx, query, args...)
	// Dropped whatever the outcome: a statement that failed may have committed all the same.
	k.cache.drop(k.prefix + key)
	if err != nil {
		return false, fmt.Errorf("session: database set: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("session: database set: %w", err)
	}
	if n > 0 {
		k.remember(key, value)
	}
	return n > 0, nil
}

// in is the placeholders $first.. of n values, as "($2, $3)".
func in(first, n int) string {
	marks := make([]string, n)
	for i := range marks {
		marks[i] = "$" + strconv.Itoa(first+i)
	}
	return "(" + strings.Join(marks, ", ") + ")"
}

func (k *sqlKV) del(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	args := make([]any, len(keys))
	for i, key := range keys {
		args[i] = k.prefix + key
	}
	_, err := k.db.SQL.ExecContext(ctx, "DELETE FROM session_values WHERE key IN "+in(1, len(keys)), args...)
	dropped := make([]string, len(args))
	for i, a := range args {
		dropped[i] = a.(string)
	}
	k.cache.drop(dropped...)
	if err != nil {
		return fmt.Errorf("session: database delete: %w", err)
	}
	for _, key := range keys {
		k.remember(key, nil)
	}
	return nil
}

func (k *sqlKV) addMember(ctx context.Context, set, member string, ttl time.Duration) error {
	expires := statedb.Micros(k.now().Add(ttl))
	err := k.db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO session_members (set_key, member, expires_at) VALUES ($1, $2, $3)
ON CONFLICT (set_key, member) DO UPDATE SET expires_at = excluded.expires_at`, k.prefix+set, member, expires)
		if err != nil {
			return err
		}
		// The whole set lives as long as its newest member: every add extends the others' expiry.
		_, err = tx.ExecContext(ctx, "UPDATE session_members SET expires_at = $2 WHERE set_key = $1 AND expires_at < $2", k.prefix+set, expires)
		return err
	})
	if err != nil {
		return fmt.Errorf("session: database index: %w", err)
	}
	return nil
}

func (k *sqlKV) removeMembers(ctx context.Context, set string, members ...string) error {
	if len(members) == 0 {
		return nil
	}
	args := []any{k.prefix + set}
	for _, m := range members {
		args = append(args, m)
	}
	_, err := k.db.SQL.ExecContext(ctx, "DELETE FROM session_members WHERE set_key = $1 AND member IN "+in(2, len(members)), args...)
	if err != nil {
		return fmt.Errorf("session: database index: %w", err)
	}
	return nil
}

func (k *sqlKV) members(ctx context.Context, set string) ([]string, error) {
	rows, err := k.db.SQL.QueryContext(ctx, "SELECT member FROM session_members WHERE set_key = $1 AND expires_at > $2 ORDER BY member",
		k.prefix+set, k.nowMicros())
	if err != nil {
		return nil, fmt.Errorf("session: database index: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			return nil, fmt.Errorf("session: database index: %w", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("session: database index: %w", err)
	}
	return out, nil
}

// sweep deletes the expired rows of every prefix, at most every sweepEvery. A failure is left
// for the next sweep: expired rows are absent to reads either way.
func (k *sqlKV) sweep(ctx context.Context) {
	k.mu.Lock()
	now := k.now()
	due := now.Sub(k.lastSweep) >= sweepEvery
	if due {
		k.lastSweep = now
	}
	k.mu.Unlock()
	if !due {
		return
	}
	us := statedb.Micros(now)
	_, _ = k.db.SQL.ExecContext(ctx, "DELETE FROM session_values WHERE expires_at <= $1", us)
	_, _ = k.db.SQL.ExecContext(ctx, "DELETE FROM session_members WHERE expires_at <= $1", us)
}

func (k *sqlKV) settle(ctx context.Context) { k.cache.settle(ctx) }

func (k *sqlKV) ping(ctx context.Context) error {
	if err := k.db.Ping(ctx); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	return nil
}

// close leaves the database open: it is the portal's, shared with the other state.
func (k *sqlKV) close() error { return nil }
