package inbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cpqportal/portal/internal/statedb"
)

// rememberEvery: a person's unchanged facts are written again only after this long (each replica).
const rememberEvery = 10 * time.Minute

// maxRemembered bounds the replica's record of whom it wrote.
const maxRemembered = 10000

// Person is what the inbox knows of a person to reach them.
type Person struct {
	// Key is PersonKey of their subject.
	Key         string
	Email, Name string
	// Lang is the language they last read the portal in (their mails are in it).
	Lang string
	// Roles are their roles as they last signed in (the back office's reminders go to
	// PORTAL_BACKOFFICE_ROLES).
	Roles    []string
	Delivery Delivery
}

// Remember records how to reach the person (their address, name, language and roles as the
// portal sees them now). The header's count calls it: a replica writes a person again only when
// something changed or after rememberEvery, so polling costs no write.
func (s *Store) Remember(ctx context.Context, p Person) error {
	if p.Key == "" {
		return nil
	}
	roles := ""
	if len(p.Roles) > 0 {
		roles = "," + strings.Join(p.Roles, ",") + ","
	}
	fingerprint := strings.Join([]string{p.Email, p.Name, p.Lang, roles}, "\x00")
	now := s.opts.Now()
	s.mu.Lock()
	last, ok := s.remembered[p.Key]
	s.mu.Unlock()
	if ok && last.fingerprint == fingerprint && now.Sub(last.at) < rememberEvery {
		return nil
	}
	_, err := s.db.SQL.ExecContext(ctx, `INSERT INTO inbox_people (person, email, name, lang, roles, seen_at) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (person) DO UPDATE SET email = excluded.email, name = excluded.name, lang = excluded.lang,
		roles = excluded.roles, seen_at = excluded.seen_at`,
		p.Key, strings.ToLower(p.Email), p.Name, p.Lang, roles, statedb.Micros(now))
	if err != nil {
		return fmt.Errorf("inbox: remember a person: %w", err)
	}
	s.mu.Lock()
	if len(s.remembered) >= maxRemembered {
		clear(s.remembered)
	}
	s.remembered[p.Key] = remembered{fingerprint: fingerprint, at: now}
	s.mu.Unlock()
	return nil
}

// Preference is the person's preference (DeliverPortal for a person the inbox does not know).
func (s *Store) Preference(ctx context.Context, person string) (Delivery, error) {
	p, err := readPerson(ctx, s.db.SQL, person)
	if err != nil {
		return "", err
	}
	return p.Delivery, nil
}

// SetPreference stores the person's preference; lang is the language their mails are written in
// from now on (the page's, when they chose).
func (s *Store) SetPreference(ctx context.Context, p Person) error {
	if _, ok := ParseDelivery(string(p.Delivery)); !ok || p.Key == "" {
		return fmt.Errorf("inbox: no preference %q", p.Delivery)
	}
	_, err := s.db.SQL.ExecContext(ctx, `INSERT INTO inbox_people (person, email, name, lang, delivery, seen_at) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (person) DO UPDATE SET email = excluded.email, name = excluded.name, lang = excluded.lang,
		delivery = excluded.delivery, seen_at = excluded.seen_at`,
		p.Key, strings.ToLower(p.Email), p.Name, p.Lang, string(p.Delivery), statedb.Micros(s.opts.Now()))
	if err != nil {
		return fmt.Errorf("inbox: store a preference: %w", err)
	}
	s.mu.Lock()
	delete(s.remembered, p.Key)
	s.mu.Unlock()
	return nil
}

// personByEmail is the key of the one person the inbox knows with address email (their verified
// sign-in address, Remember), or "" when nobody or more than one person has it (an address two
// people share names neither).
func (s *Store) personByEmail(ctx context.Context, email string) (string, error) {
	rows, err := s.db.SQL.QueryContext(ctx, `SELECT person FROM inbox_people WHERE email = $1 LIMIT 2`,
		strings.ToLower(strings.TrimSpace(email)))
	if err != nil {
		return "", fmt.Errorf("inbox: look a person up by address: %w", err)
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return "", fmt.Errorf("inbox: look a person up by address: %w", err)
		}
		found = append(found, p)
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("inbox: look a person up by address: %w", err)
	}
	if len(found) != 1 {
		return "", nil
	}
	return found[0], nil
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// readPerson reads the person (a person the inbox does not know: their key and the default
// preference).
func readPerson(ctx context.Context, q querier, key string) (Person, error) {
	p := Person{Key: key, Delivery: DeliverPortal}
	var roles, delivery string
	err := q.QueryRowContext(ctx, `SELECT email, name, lang, roles, delivery FROM inbox_people WHERE person = $1`, key).
		Scan(&p.Email, &p.Name, &p.Lang, &roles, &delivery)
	if errors.Is(err, sql.ErrNoRows) {
		return p, nil
	}
	if err != nil {
		return Person{}, fmt.Errorf("inbox: read a person: %w", err)
	}
	p.Roles = strings.FieldsFunc(roles, func(r rune) bool { return r == ',' })
	if d, ok := ParseDelivery(delivery); ok {
		p.Delivery = d
	}
	return p, nil
}

// withRoles is the keys of the people who have one of roles.
func (s *Store) withRoles(ctx context.Context, roles []string) ([]string, error) {
	var keys []string
	seen := map[string]bool{}
	for _, role := range roles {
		rows, err := s.db.SQL.QueryContext(ctx, `SELECT person FROM inbox_people WHERE roles LIKE $1 ESCAPE '\'`,
			"%,"+statedb.EscapeLike(role)+",%")
		if err != nil {
			return nil, fmt.Errorf("inbox: people of role %s: %w", role, err)
		}
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				rows.Close()
				return nil, fmt.Errorf("inbox: people of role %s: %w", role, err)
			}
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("inbox: people of role %s: %w", role, err)
		}
	}
	return keys, nil
}
