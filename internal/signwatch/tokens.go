package signwatch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
	"github.com/cpqportal/portal/internal/workindex"
)

// Sealer encrypts a token at rest, bound to a context (session.Sealer).
type Sealer interface {
	Seal(plain, context string) (string, error)
	Open(sealed, context string) (string, error)
}

// tokenContext binds a sealed token to its person (the sealer's context is this plus the key).
const tokenContext = "watch/"

// maxRemembered bounds the fingerprints a process remembers (Keep writes again after a reset).
const maxRemembered = 10_000

// sealedToken is what a watch_tokens row holds, sealed.
type sealedToken struct {
	Subject string `json:"s"`
	Name    string `json:"n"`
	Token   string `json:"t"`
}

// liveToken is a person's token the watcher may read with.
type liveToken struct {
	viewer  workindex.Viewer
	token   string
	expires time.Time
}

func fingerprint(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:12])
}

// kept is the token this process last kept for a person.
type kept struct {
	fingerprint string
	expires     time.Time
}

// Keep hands the watcher a person's current access token (their request's), so the contracts they
// read are watched with it. It writes only when the token is newer than the one this process last
// kept for them (a sign-in, a refresh; of two sessions the token that lasts longer), so a page
// view costs a map lookup.
func (w *Watcher) Keep(ctx context.Context, v workindex.Viewer, token string, expiry time.Time) error {
	key := v.Key()
	if key == "" || token == "" || !expiry.After(w.opts.Now()) {
		return nil
	}
	fp := fingerprint(token)
	w.keptMu.Lock()
	last, ok := w.kept[key]
	w.keptMu.Unlock()
	if ok && (last.fingerprint == fp || !expiry.After(last.expires)) {
		return nil
	}
	plain, err := json.Marshal(sealedToken{Subject: v.Subject, Name: v.Name, Token: token})
	if err != nil {
		return fmt.Errorf("signwatch: keep token: %w", err)
	}
	sealed, err := w.opts.Sealer.Seal(string(plain), tokenContext+key)
	if err != nil {
		return fmt.Errorf("signwatch: seal token: %w", err)
	}
	now := statedb.Micros(w.opts.Now())
	if _, err := w.opts.DB.SQL.ExecContext(ctx, `INSERT INTO watch_tokens (person, sealed, fingerprint, expires_at, updated_at)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (person) DO UPDATE SET sealed = excluded.sealed, fingerprint = excluded.fingerprint,
			expires_at = excluded.expires_at, updated_at = excluded.updated_at`,
		key, sealed, fp, statedb.Micros(expiry), now); err != nil {
		return fmt.Errorf("signwatch: keep token: %w", err)
	}
	w.keptMu.Lock()
	if len(w.kept) >= maxRemembered {
		clear(w.kept)
	}
	w.kept[key] = kept{fingerprint: fp, expires: expiry}
	w.keptMu.Unlock()
	return nil
}

// Drop deletes a person's token: their sessions ended (sign-out, revocation). The contracts they
// read are watched with another reader's token, or wait until they sign in again.
func (w *Watcher) Drop(ctx context.Context, subject string) error {
	key := workindex.PersonKey(subject)
	if key == "" {
		return nil
	}
	w.keptMu.Lock()
	delete(w.kept, key)
	w.keptMu.Unlock()
	if _, err := w.opts.DB.SQL.ExecContext(ctx, `DELETE FROM watch_tokens WHERE person = $1`, key); err != nil {
		return fmt.Errorf("signwatch: drop token: %w", err)
	}
	return nil
}

// dropRefused deletes a token the v2 API refused (401), unless a newer one replaced it meanwhile.
func (w *Watcher) dropRefused(ctx context.Context, key, token string) error {
	if _, err := w.opts.DB.SQL.ExecContext(ctx, `DELETE FROM watch_tokens WHERE person = $1 AND fingerprint = $2`,
		key, fingerprint(token)); err != nil {
		return fmt.Errorf("signwatch: drop refused token: %w", err)
	}
	return nil
}

// liveTokens reads the tokens that are still valid for a while (expired ones are deleted).
func (w *Watcher) liveTokens(ctx context.Context) (map[string]liveToken, error) {
	now := w.opts.Now()
	if _, err := w.opts.DB.SQL.ExecContext(ctx, `DELETE FROM watch_tokens WHERE expires_at < $1`, statedb.Micros(now)); err != nil {
		return nil, fmt.Errorf("signwatch: delete expired tokens: %w", err)
	}
	rows, err := w.opts.DB.SQL.QueryContext(ctx, `SELECT person, sealed, expires_at FROM watch_tokens`)
	if err != nil {
		return nil, fmt.Errorf("signwatch: read tokens: %w", err)
	}
	defer rows.Close()
	out := map[string]liveToken{}
	for rows.Next() {
		var key, sealed string
		var expires int64
		if err := rows.Scan(&key, &sealed, &expires); err != nil {
			return nil, fmt.Errorf("signwatch: read tokens: %w", err)
		}
		plain, err := w.opts.Sealer.Open(sealed, tokenContext+key)
		if err != nil {
			continue // sealed with a retired key: the person's next request hands a new one over
		}
		var st sealedToken
		if json.Unmarshal([]byte(plain), &st) != nil || workindex.PersonKey(st.Subject) != key {
			continue
		}
		out[key] = liveToken{viewer: workindex.Viewer{Subject: st.Subject, Name: st.Name}, token: st.Token, expires: statedb.Time(expires)}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("signwatch: read tokens: %w", err)
	}
	return out, nil
}
