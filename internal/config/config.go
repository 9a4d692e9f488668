// Package config turns PORTAL_* environment variables and command-line flags into a typed Config.
//
// Every setting has an environment variable (PORTAL_ADDR) and, unless it is a secret, a flag (-addr);
// a flag given on the command line wins over the environment, the environment wins over the default.
// Load refuses a missing or malformed value with one error that names the variable, so an operator
// sees exactly what to fix. Table lists every setting for the README and for -help.
//
// Demo mode (-demo or PORTAL_DEMO=true) fills in what a laptop does not have: the embedded OpenID
// provider (issuer PUBLIC_URL/idp, client cpq-portal with a random secret), a session key (cmd/portal
// keeps it in PORTAL_DATA_DIR/demo), and the embedded v2 simulator (unless PORTAL_V2_API_URL names a real v2 API).
package config

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/mail"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cpqportal/portal/internal/bounce"
	"github.com/cpqportal/portal/internal/outbox"
)

// Session store kinds accepted by PORTAL_SESSION_STORE.
const (
	// SessionStoreDatabase keeps sessions server-side in the state database (the default).
	SessionStoreDatabase = "database"
	// SessionStoreCookie keeps the whole session in encrypted cookies.
	SessionStoreCookie = "cookie"
	// sessionStoreFileAlias is the database store's name from when it kept sessions in files;
	// still accepted, so existing settings keep working.
	sessionStoreFileAlias = "file"
	// sessionStoreRedisGone was the Redis session store, removed: the state database's PostgreSQL
	// does what it did for replicas (docs/operations.md, "Sessions on several replicas").
	sessionStoreRedisGone = "redis"
)

// Readiness checks of the v2 API accepted by PORTAL_V2_READY_CHECK (besides a health URL).
const (
	ReadyCheckConnect = "connect"
	ReadyCheckOff     = "off"
	// ReadyCheckHTTP is set when PORTAL_V2_READY_CHECK is a URL (Config.V2HealthURL).
	ReadyCheckHTTP = "http"
)

// Log formats accepted by PORTAL_LOG_FORMAT.
const (
	LogFormatJSON = "json"
	LogFormatText = "text"
)

// DemoClientID is the OAuth client id the portal uses with the embedded demo OpenID provider.
const DemoClientID = "cpq-portal"

// MinSessionKeyBytes is the shortest accepted session secret, in decoded bytes (PORTAL_SESSION_KEYS).
const MinSessionKeyBytes = 32

// Config is the portal's whole configuration. It is a value: build it with Load and pass it down.
type Config struct {
	// Addr is the listen address (host:port); port 0 picks a free port (see BindAddr).
	Addr string
	// PublicURL is the URL browsers use to reach the portal, without a trailing slash.
	// Redirect URIs and the demo issuer are derived from it.
	PublicURL *url.URL
	// PublicURLDerived is true when PORTAL_PUBLIC_URL was not given and PublicURL was derived
	// from Addr; BindAddr then re-derives it from the real listener.
	PublicURLDerived bool

	// V2APIURL is the v2 API base URL (paths /v2/... are appended). Nil only in demo mode,
	// where it means "start the embedded simulator".
	V2APIURL *url.URL
	// V2Timeout bounds each v2 API call.
	V2Timeout time.Duration
	// V2ReadyCheck is how /readyz checks the v2 API: ReadyCheckConnect (a TCP connect, and the TLS
	// handshake for https, to its host: no HTTP request), ReadyCheckOff, or ReadyCheckHTTP with
	// V2HealthURL. Never a /v2/ call: the spec (section 5) wants a bearer token on every one, and a
	// probe has none (docs/operations.md, "Health and readiness").
	V2ReadyCheck string
	// V2HealthURL is the v2 service's own health endpoint when V2ReadyCheck is ReadyCheckHTTP.
	V2HealthURL *url.URL

	// OIDCIssuer is the OpenID provider's issuer URL (exactly as the provider spells it).
	OIDCIssuer string
	// OIDCClientID and OIDCClientSecret identify the portal at the provider.
	OIDCClientID     string
	OIDCClientSecret string
	// OIDCScopes are the scopes requested at login.
	OIDCScopes []string

	// SessionStore is SessionStoreDatabase (the default) or SessionStoreCookie.
	SessionStore string
	// DataDir is where the portal keeps state on its own side: demo mode's keys (DataDir/demo) and
	// the state database with sessions, people, recent items, the work index and batch jobs
	// (DataDir/state, unless DatabaseURL is set). Created 0700 at start-up when missing.
	DataDir string
	// SessionKeys are the session secrets as configured (base64 or hex, each decoding to at least
	// MinSessionKeyBytes bytes; internal/session decodes them); the first signs and encrypts, the
	// others are still accepted (key rotation).
	SessionKeys []string
	// RedisURL is an older portal's Redis (redis:// or rediss://), read once by the import of its
	// state (internal/stateimport); empty: nothing to import from Redis.
	RedisURL string
	// DatabaseURL is the PostgreSQL database of the portal's state (internal/statedb), shared by
	// several replicas; empty: SQLite in DataDir/state.
	DatabaseURL string
	// DatabaseConns bounds each replica's connections to PostgreSQL (0: statedb's default, 16).
	DatabaseConns int
	// SessionIdleTimeout ends a session after this long without a request.
	SessionIdleTimeout time.Duration
	// SessionLifetime ends a session this long after sign-in, however active.
	SessionLifetime time.Duration

	// UploadLimit is the largest accepted attachment upload in bytes.
	UploadLimit int64
	// CustomerCacheTTL is how long the customer list is reused before asking the v2 API again.
	CustomerCacheTTL time.Duration

	// RolesClaim names the ID token claim that carries the user's roles: a top-level name
	// ("roles": Entra app roles and the demo provider; "groups": Dex) or a dotted path into nested
	// objects ("realm_access.roles": Keycloak realm roles). docs/work-index.md.
	RolesClaim string
	// TeamRoles may see every quote and contract of the work index (team-wide lists); others see
	// the ones they created, changed or opened.
	TeamRoles []string
	// BackofficeRoles see the contracts to archive on the home page, and /work takes them to the
	// contracts list; everyone else to My quotes.
	BackofficeRoles []string
	// The back-office tools, each shown and served only to its roles (docs/backoffice.md "Who
	// may use the tools"): BatchArchiveRoles the batch archive (with the work lists' "Archive
	// selected" and the home page's archive button), HandoverRoles the customer handover,
	// ImportRoles the customer import. An empty list leaves the tool to nobody. The v2 API still
	// judges every call of those who may.
	BatchArchiveRoles []string
	HandoverRoles     []string
	ImportRoles       []string
	// WorkStaleAfter: a work-index row last seen longer ago is re-read with the viewer's token
	// before a list shows it.
	WorkStaleAfter time.Duration
	// SMTP is the e-mail server (PORTAL_SMTP_URL; nil: no e-mail is sent, and the pages that
	// would send say so); SMTPFrom the From address of every mail (PORTAL_SMTP_FROM).
	SMTP     *outbox.SMTP
	SMTPFrom string
	// BounceMailbox is the mailbox the delivery reports of the portal's mails arrive in
	// (PORTAL_MAIL_BOUNCE_IMAP_URL; nil: bounces are not read); BounceAddress the envelope sender
	// of every mail, so the reports reach it (PORTAL_MAIL_BOUNCE_ADDRESS; PORTAL_SMTP_FROM when
	// empty); BounceEvery how often it is read (one replica at a time).
	BounceMailbox *bounce.Mailbox
	BounceAddress string
	BounceEvery   time.Duration
	// CopyTo is the copy address every mail also goes to, for the copy check that resolves the
	// mails a crash left unknown (PORTAL_MAIL_COPY_TO; '' : no check, docs/mail.md); CopyMailbox
	// the mailbox it is delivered to (PORTAL_MAIL_COPY_IMAP_URL; nil: BounceMailbox); CopyGrace
	// how long a missing copy may still arrive (PORTAL_MAIL_COPY_GRACE).
	CopyTo      string
	CopyMailbox *bounce.Mailbox
	CopyGrace   time.Duration
	// WorkRetention: work-index rows nobody's token read for this long leave the lists; 0 keeps
	// every row (the default).
	WorkRetention time.Duration
	// FollowUpSignatureDays: on the home page, a contract out for signature this many days or
	// more is a follow-up (docs/home.md; 0: at once).
	FollowUpSignatureDays int
	// FollowUpDraftDays: on the home page, a draft quote untouched this many days or more is a
	// follow-up (0: at once).
	FollowUpDraftDays int
	// The inbox (docs/inbox.md): InboxRefresh is how often the header's unread count is polled;
	// ReminderEvery how often the reminders are looked for (one replica at a time); the days after
	// which a contract out for signature reminds its person (ReminderSignatureDays), a signed
	// contract not archived reminds the back office (ReminderArchiveDays), and how many days
	// before its valid-until an offer sent by e-mail reminds its sender (ReminderOfferDays).
	// DigestEvery is how often the digest goes to the people who chose it.
	InboxRefresh          time.Duration
	ReminderEvery         time.Duration
	DigestEvery           time.Duration
	ReminderSignatureDays int
	ReminderArchiveDays   int
	ReminderOfferDays     int
	// InboxReadRetention: inbox items read and older than this are deleted; InboxUnreadRetention:
	// unread ones older than this (kept longer: nobody saw them). 0 keeps them.
	InboxReadRetention   time.Duration
	InboxUnreadRetention time.Duration
	// MailRetention: mails that ended (sent, refused, failed, unknown) longer ago than this are
	// deleted from the outbox, and leave the quote's list of sent mails. 0 keeps them.
	MailRetention time.Duration
	// ShutdownGrace is how long in-flight requests get to finish on SIGTERM.
	ShutdownGrace time.Duration
	// ShutdownDrain is how long, within ShutdownGrace, the portal keeps accepting requests after
	// SIGTERM while /readyz answers 503, so load balancers stop sending traffic before the
	// listener closes (connections refused are worse than a "not ready").
	ShutdownDrain time.Duration

	// LogFormat is LogFormatJSON or LogFormatText; LogLevel the minimum level logged.
	LogFormat string
	LogLevel  slog.Level

	// TrustedProxies are the addresses or CIDR prefixes whose X-Forwarded-For is believed.
	// Empty means none: the client address is the TCP peer.
	TrustedProxies []string
	// MetricsAddr, when not empty, is where Prometheus metrics are served (a separate listener).
	MetricsAddr string

	// Demo runs the portal with the embedded OpenID provider and (unless V2APIURL is set) the
	// embedded v2 simulator.
	Demo bool
	// DemoIdP is true when the embedded OpenID provider issues the tokens: demo mode without
	// PORTAL_OIDC_ISSUER. The issuer then follows PublicURL (see BindAddr).
	DemoIdP bool
	// DemoTokenTTL is the lifetime of access tokens issued by the embedded provider.
	DemoTokenTTL time.Duration
	// DemoCustomers is how many customers the embedded simulator is seeded with.
	DemoCustomers int
	// GeneratedSessionKey is true when demo mode made up a random session key because none was
	// configured; cmd/portal replaces it with the one kept in the data directory, so sign-ins survive
	// a restart.
	GeneratedSessionKey bool

	// BatchConcurrency is how many v2 calls one batch job makes at a time (docs/backoffice.md).
	BatchConcurrency int
	// WatchInterval is how often the signature watcher reads each contract out for signature
	// again, and WatchMaxCallsPerMinute the ceiling of its budget (internal/signwatch).
	WatchInterval          time.Duration
	WatchMaxCallsPerMinute int
	// DemoSimAdmin exposes the embedded simulator's control API (/_sim/: request log, faults) on
	// its loopback port; for browser tests that inject v2 failures.
	DemoSimAdmin bool
	// DemoRestrictToOwners runs the embedded simulator restricted to owners (docs/v2-assumptions.md A13):
	// sales and the team lead each see only the customers they own, as real CPQ deployments restrict reps.
	DemoRestrictToOwners bool
	// DemoSignerDelay is how long after a signature request the embedded simulator's demo signer
	// answers by itself (every third declines, with a reason); 0: signers never answer by themselves.
	DemoSignerDelay time.Duration

	// ShowVersion is the -version flag: print the version and exit. Load returns only this field then.
	ShowVersion bool
}

// Setting describes one configuration setting, for documentation (README, -help).
type Setting struct {
	Env         string // environment variable, e.g. PORTAL_ADDR
	Flag        string // flag name without the dash; empty for secrets, which come only from the environment or a file
	Default     string // default as written in the docs
	Description string
}

// setting is a Setting plus how to apply its raw value to a Config.
type setting struct {
	Setting
	isBool bool
	// apply parses raw (already defaulted; may be empty) into cfg. The returned error is
	// the reason only; Load prefixes the variable name.
	apply func(cfg *Config, raw string) error
}

// Table lists every setting in a stable order, for the README and -help.
func Table() []Setting {
	defs := settings()
	out := make([]Setting, 0, len(defs))
	for _, d := range defs {
		out = append(out, d.Setting)
	}
	return out
}

// settings defines every setting. Order matters only for documentation; cross-field rules
// (requirements, demo defaults) are applied after all settings are parsed, in finish.
func settings() []setting {
	return []setting{
		{Setting: Setting{"PORTAL_ADDR", "addr", "127.0.0.1:8080", "Listen address host:port (port 0 picks a free port)"},
			apply: func(c *Config, raw string) error {
				if err := checkHostPort(raw); err != nil {
					return err
				}
				c.Addr = raw
				return nil
			}},
		{Setting: Setting{"PORTAL_PUBLIC_URL", "public-url", "http://<addr>", "URL browsers use to reach the portal (redirect URIs derive from it)"},
			apply: func(c *Config, raw string) error {
				if raw == "" {
					return nil // derived in finish
				}
				u, err := parseBaseURL(raw)
				if err != nil {
					return err
				}
				c.PublicURL = u
				return nil
			}},
		{Setting: Setting{"PORTAL_V2_API_URL", "v2-api-url", "", "Base URL of the v2 API (required unless -demo, which starts the simulator)"},
			apply: func(c *Config, raw string) error {
				if raw == "" {
					return nil // required-ness checked in finish
				}
				u, err := parseBaseURL(raw)
				if err != nil {
					return err
				}
				c.V2APIURL = u
				return nil
			}},
		{Setting: Setting{"PORTAL_V2_TIMEOUT", "v2-timeout", "15s", "Time limit of one v2 API call"},
			apply: durationInto(func(c *Config) *time.Duration { return &c.V2Timeout })},
		{Setting: Setting{"PORTAL_V2_READY_CHECK", "v2-ready-check", "connect", "How /readyz checks the v2 API: connect (TCP/TLS to its host, no request), off, or the URL of the v2 service's health endpoint (never a /v2/ path)"},
			apply: func(c *Config, raw string) error {
				switch raw {
				case ReadyCheckConnect, ReadyCheckOff:
					c.V2ReadyCheck = raw
					return nil
				}
				u, err := url.Parse(raw)
				if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
					return fmt.Errorf("must be %q, %q or an http(s) URL of the v2 service's health endpoint, not %q", ReadyCheckConnect, ReadyCheckOff, raw)
				}
				// Every /v2/ call must carry the user's bearer token (spec section 5); a probe has none.
				if p := strings.ToLower(u.EscapedPath()); p == "/v2" || strings.HasPrefix(p, "/v2/") || strings.Contains(p, "/v2/") {
					return errors.New("must not be a /v2/ path: every v2 call needs a user's bearer token (spec section 5), which a probe does not have")
				}
				c.V2ReadyCheck = ReadyCheckHTTP
				c.V2HealthURL = u
				return nil
			}},
		{Setting: Setting{"PORTAL_OIDC_ISSUER", "oidc-issuer", "", "OpenID provider issuer URL (required unless -demo)"},
			apply: func(c *Config, raw string) error {
				if raw == "" {
					return nil
				}
				u, err := url.Parse(raw)
				if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
					return errors.New("must be an absolute http(s) URL without query, e.g. https://login.example.com/realms/sales")
				}
				// Kept as given: the issuer must match the provider's "iss" byte for byte.
				c.OIDCIssuer = raw
				return nil
			}},
		{Setting: Setting{"PORTAL_OIDC_CLIENT_ID", "oidc-client-id", "", "OAuth client id of the portal (required unless -demo)"},
			apply: func(c *Config, raw string) error {
				if err := checkPrintable(raw); err != nil {
					return err
				}
				c.OIDCClientID = raw
				return nil
			}},
		{Setting: Setting{"PORTAL_OIDC_CLIENT_SECRET", "", "", "OAuth client secret (or PORTAL_OIDC_CLIENT_SECRET_FILE; required unless -demo)"},
			apply: func(c *Config, raw string) error {
				if err := checkPrintable(raw); err != nil {
					return err
				}
				c.OIDCClientSecret = raw
				return nil
			}},
		{Setting: Setting{"PORTAL_SMTP_URL", "", "", "SMTP server of the portal's e-mail: smtp://user:password@host:587 (STARTTLS required), smtps://user:password@host:465, or smtp://host:25?starttls=0 (no TLS); empty: no e-mail (docs/operations.md)"},
			apply: func(c *Config, raw string) error {
				if raw == "" {
					return nil
				}
				server, err := outbox.ParseSMTPURL(raw)
				if err != nil {
					return err // never the URL itself: it holds the password
				}
				c.SMTP = &server
				return nil
			}},
		{Setting: Setting{"PORTAL_SMTP_FROM", "smtp-from", "", "The From address of the portal's e-mail (required with PORTAL_SMTP_URL), e.g. offers@example.com"},
			apply: emailAddress("offers@example.com", func(c *Config, addr string) { c.SMTPFrom = addr })},
		{Setting: Setting{"PORTAL_MAIL_BOUNCE_IMAP_URL", "", "", "Mailbox the delivery reports (bounces) of the portal's e-mail arrive in, read over IMAP: imaps://user:password@host:993/INBOX, imap://user:password@host:143/INBOX (STARTTLS required) or imap://user:password@host:143/INBOX?starttls=0 (no TLS: a server on the same host only); empty: bounces are not read (docs/mail.md)"},
			apply: imapMailbox(func(c *Config, m *bounce.Mailbox) { c.BounceMailbox = m })},
		{Setting: Setting{"PORTAL_MAIL_BOUNCE_ADDRESS", "mail-bounce-address", "", "Envelope sender (Return-Path) of the portal's e-mail: the address of the bounce mailbox, where delivery reports go (with PORTAL_MAIL_BOUNCE_IMAP_URL; empty: PORTAL_SMTP_FROM)"},
			apply: emailAddress("bounces@example.com", func(c *Config, addr string) { c.BounceAddress = addr })},
		{Setting: Setting{"PORTAL_MAIL_BOUNCE_EVERY", "mail-bounce-every", "5m", "How often the bounce mailbox is read (one replica at a time; minutes are polite to the mail server, at least 1s)"},
			apply: func(c *Config, raw string) error {
				d, err := time.ParseDuration(raw)
				if err != nil || d < time.Second {
					return fmt.Errorf("must be a duration of at least 1s such as 5m, not %q", raw)
				}
				c.BounceEvery = d
				return nil
			}},
		{Setting: Setting{"PORTAL_MAIL_COPY_TO", "mail-copy-to", "", "Copy address every mail of the portal also goes to (an envelope recipient only, never shown to the customer), delivered to a mailbox the portal reads over IMAP (PORTAL_MAIL_COPY_IMAP_URL, else the bounce mailbox): a mail whose sender crashed mid-send is then confirmed by its copy or sent again, exactly once; empty: such a mail stays \"unknown\" (docs/mail.md)"},
			apply: emailAddress("portal-copies@example.com", func(c *Config, addr string) { c.CopyTo = addr })},
		{Setting: Setting{"PORTAL_MAIL_COPY_IMAP_URL", "", "", "Mailbox the copies (PORTAL_MAIL_COPY_TO) arrive in, read over IMAP, as PORTAL_MAIL_BOUNCE_IMAP_URL; copies read are deleted; empty: the bounce mailbox (docs/mail.md)"},
			apply: imapMailbox(func(c *Config, m *bounce.Mailbox) { c.CopyMailbox = m })},
		{Setting: Setting{"PORTAL_MAIL_COPY_GRACE", "mail-copy-grace", "5m", "How long after a mail became unknown its copy may still arrive: a mail without a copy by then is sent again (with its Message-ID); longer than the copy mailbox's delivery takes, at least 1s"},
			apply: func(c *Config, raw string) error {
				d, err := time.ParseDuration(raw)
				if err != nil || d < time.Second {
					return fmt.Errorf("must be a duration of at least 1s such as 5m, not %q", raw)
				}
				c.CopyGrace = d
				return nil
			}},
		{Setting: Setting{"PORTAL_OIDC_CLIENT_SECRET_FILE", "oidc-client-secret-file", "", "File holding the OAuth client secret (trailing newline ignored)"},
			apply: func(c *Config, raw string) error {
				if raw == "" {
					return nil
				}
				if c.OIDCClientSecret != "" {
					return errors.New("set either PORTAL_OIDC_CLIENT_SECRET or PORTAL_OIDC_CLIENT_SECRET_FILE, not both")
				}
				secret, err := readSecretFile(raw)
				if err != nil {
					return err
				}
				c.OIDCClientSecret = secret
				return nil
			}},
		{Setting: Setting{"PORTAL_OIDC_SCOPES", "oidc-scopes", "openid profile email offline_access", "Scopes requested at sign-in (space separated; must include openid)"},
			apply: func(c *Config, raw string) error {
				scopes := strings.Fields(strings.ReplaceAll(raw, ",", " "))
				hasOpenID := false
				for _, s := range scopes {
					if s == "openid" {
						hasOpenID = true
					}
					if err := checkPrintable(s); err != nil {
						return err
					}
				}
				if !hasOpenID {
					return errors.New(`must include "openid"`)
				}
				c.OIDCScopes = scopes
				return nil
			}},
		{Setting: Setting{"PORTAL_SESSION_STORE", "session-store", SessionStoreDatabase, "Where sessions live: database (the default: in the state database, SQLite in PORTAL_DATA_DIR or PORTAL_DATABASE_URL; file is an older name for it) or cookie (encrypted cookie; sign-out revokes its id in the state database)"},
			apply: func(c *Config, raw string) error {
				switch raw {
				case SessionStoreDatabase, sessionStoreFileAlias:
					c.SessionStore = SessionStoreDatabase
					return nil
				case SessionStoreCookie:
					c.SessionStore = raw
					return nil
				case sessionStoreRedisGone:
					return fmt.Errorf("the Redis session store was removed: sessions are in the state database now (set %q, the default, with PORTAL_DATABASE_URL for several replicas; docs/operations.md)", SessionStoreDatabase)
				}
				return fmt.Errorf("must be %q or %q, not %q", SessionStoreDatabase, SessionStoreCookie, raw)
			}},
		{Setting: Setting{"PORTAL_DATA_DIR", "data-dir", ".data", "Directory for the portal's own state (the state database of sessions, people, recent items, the work index and batch jobs unless PORTAL_DATABASE_URL is set; demo keys); created 0700, must be writable"},
			apply: func(c *Config, raw string) error {
				if strings.TrimSpace(raw) == "" {
					return errors.New("must name a directory")
				}
				c.DataDir = raw
				return nil
			}},
		{Setting: Setting{"PORTAL_SESSION_KEYS", "", "", "Comma-separated session secrets, base64 or hex of at least 32 bytes each (openssl rand -base64 32); the first signs, the rest still verify (required unless -demo)"},
			apply: func(c *Config, raw string) error {
				if raw == "" {
					return nil
				}
				for _, key := range strings.Split(raw, ",") {
					key = strings.TrimSpace(key)
					if decodedSecretLen(key) < MinSessionKeyBytes {
						return fmt.Errorf("each key must be at least %d bytes, written as base64 or hex (generate one with: openssl rand -base64 32)", MinSessionKeyBytes)
					}
					c.SessionKeys = append(c.SessionKeys, key)
				}
				return nil
			}},
		{Setting: Setting{"PORTAL_REDIS_URL", "redis-url", "", "An older portal's Redis, e.g. redis://127.0.0.1:6379/0: when set, its state (work index, people, recent items, batch jobs; not sessions) is imported into the state database once, at the upgrade (docs/operations.md); nothing else uses Redis"},
			apply: func(c *Config, raw string) error {
				if raw == "" {
					return nil
				}
				u, err := url.Parse(raw)
				if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
					return errors.New("must be a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379/0")
				}
				c.RedisURL = raw
				return nil
			}},
		{Setting: Setting{"PORTAL_DATABASE_URL", "database-url", "", "PostgreSQL database of the portal's state, e.g. postgres://portal:secret@db:5432/portal (several replicas share it); empty: SQLite in PORTAL_DATA_DIR/state (docs/operations.md)"},
			apply: func(c *Config, raw string) error {
				if raw == "" {
					return nil
				}
				u, err := url.Parse(raw)
				if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
					return errors.New("must be a postgres:// URL, e.g. postgres://portal:secret@db:5432/portal")
				}
				c.DatabaseURL = raw
				return nil
			}},
		{Setting: Setting{"PORTAL_DATABASE_CONNS", "database-conns", "16", "Connections each replica opens to PostgreSQL at most (replicas × this must stay under the server's max_connections)"},
			apply: func(c *Config, raw string) error {
				n, err := strconv.Atoi(raw)
				if err != nil || n < 2 || n > 500 {
					return fmt.Errorf("must be a whole number from 2 to 500, not %q", raw)
				}
				c.DatabaseConns = n
				return nil
			}},
		{Setting: Setting{"PORTAL_SESSION_IDLE_TIMEOUT", "session-idle-timeout", "30m", "Sign out after this long without a request"},
			apply: durationInto(func(c *Config) *time.Duration { return &c.SessionIdleTimeout })},
		{Setting: Setting{"PORTAL_SESSION_LIFETIME", "session-lifetime", "12h", "Sign out this long after sign-in, however active"},
			apply: durationInto(func(c *Config) *time.Duration { return &c.SessionLifetime })},
		{Setting: Setting{"PORTAL_UPLOAD_LIMIT", "upload-limit", "1GiB", "Largest attachment upload (e.g. 25MB, 1GiB)"},
			apply: func(c *Config, raw string) error {
				n, err := ParseSize(raw)
				if err != nil {
					return err
				}
				c.UploadLimit = n
				return nil
			}},
		{Setting: Setting{"PORTAL_CUSTOMER_CACHE_TTL", "customer-cache-ttl", "30s", "How long the customer list is reused (0 disables the cache)"},
			apply: func(c *Config, raw string) error {
				d, err := time.ParseDuration(raw)
				if err != nil || d < 0 {
					return fmt.Errorf("must be a duration such as 30s or 0, not %q", raw)
				}
				c.CustomerCacheTTL = d
				return nil
			}},
		{Setting: Setting{"PORTAL_ROLES_CLAIM", "roles-claim", "roles", "ID token claim with the user's roles: roles (Entra, demo), groups (Dex), realm_access.roles (Keycloak)"},
			apply: func(c *Config, raw string) error {
				raw = strings.TrimSpace(raw)
				if raw == "" || strings.HasPrefix(raw, ".") || strings.HasSuffix(raw, ".") || strings.Contains(raw, "..") {
					return fmt.Errorf("must be a claim name or a dotted path such as realm_access.roles, not %q", raw)
				}
				c.RolesClaim = raw
				return nil
			}},
		{Setting: Setting{"PORTAL_TEAM_ROLES", "team-roles", "backoffice,team-lead", "Roles that see every quote and contract of the work index (comma-separated)"},
			apply: func(c *Config, raw string) error { c.TeamRoles = roleList(raw); return nil }},
		{Setting: Setting{"PORTAL_BACKOFFICE_ROLES", "backoffice-roles", "backoffice", "Roles whose home page shows the signed contracts to archive and whose /work is the contracts list (comma-separated)"},
			apply: func(c *Config, raw string) error { c.BackofficeRoles = roleList(raw); return nil }},
		{Setting: Setting{"PORTAL_BATCH_ARCHIVE_ROLES", "batch-archive-roles", "backoffice", "Roles that may use the batch archive and the lists' Archive selected (comma-separated; empty: nobody)"},
			apply: func(c *Config, raw string) error { c.BatchArchiveRoles = roleList(raw); return nil }},
		{Setting: Setting{"PORTAL_HANDOVER_ROLES", "handover-roles", "backoffice,team-lead", "Roles that may hand customers over to another owner (comma-separated; empty: nobody)"},
			apply: func(c *Config, raw string) error { c.HandoverRoles = roleList(raw); return nil }},
		{Setting: Setting{"PORTAL_IMPORT_ROLES", "import-roles", "backoffice", "Roles that may import customers from a file (comma-separated; empty: nobody)"},
			apply: func(c *Config, raw string) error { c.ImportRoles = roleList(raw); return nil }},
		{Setting: Setting{"PORTAL_WORK_STALE_AFTER", "work-stale-after", "10m", "A list re-reads a quote or contract last seen longer ago, with the viewer's token"},
			apply: func(c *Config, raw string) error {
				d, err := time.ParseDuration(raw)
				if err != nil || d <= 0 {
					return fmt.Errorf("must be a positive duration such as 10m, not %q", raw)
				}
				c.WorkStaleAfter = d
				return nil
			}},
		{Setting: Setting{"PORTAL_WORK_RETENTION", "work-retention", "0", "Quotes and contracts nobody opened through the portal for this long leave its lists (e.g. 8760h); 0 keeps them all"},
			apply: func(c *Config, raw string) error {
				d, err := time.ParseDuration(raw)
				if err != nil || d < 0 || (d > 0 && d < 24*time.Hour) {
					return fmt.Errorf("must be 0 (keep every row) or a duration of at least 24h such as 8760h, not %q", raw)
				}
				c.WorkRetention = d
				return nil
			}},
		{Setting: Setting{"PORTAL_FOLLOWUP_SIGNATURE_DAYS", "followup-signature-days", "14", "Home page: a contract out for signature this many days is a follow-up (0 to 365; 0: at once)"},
			apply: daysInto(func(c *Config) *int { return &c.FollowUpSignatureDays })},
		{Setting: Setting{"PORTAL_FOLLOWUP_DRAFT_DAYS", "followup-draft-days", "30", "Home page: a draft quote untouched this many days is a follow-up (0 to 365; 0: at once)"},
			apply: daysInto(func(c *Config) *int { return &c.FollowUpDraftDays })},
		{Setting: Setting{"PORTAL_INBOX_REFRESH", "inbox-refresh", "20s", "How often an open page asks for the header's unread count of the inbox (docs/inbox.md)"},
			apply: durationInto(func(c *Config) *time.Duration { return &c.InboxRefresh })},
		{Setting: Setting{"PORTAL_REMINDER_EVERY", "reminder-every", "1h", "How often the inbox's reminders are looked for (one replica at a time; docs/inbox.md)"},
			apply: durationInto(func(c *Config) *time.Duration { return &c.ReminderEvery })},
		{Setting: Setting{"PORTAL_INBOX_DIGEST_EVERY", "inbox-digest-every", "24h", "How often the inbox's digest is mailed to the people who chose it"},
			apply: durationInto(func(c *Config) *time.Duration { return &c.DigestEvery })},
		{Setting: Setting{"PORTAL_REMINDER_SIGNATURE_DAYS", "reminder-signature-days", "14", "Inbox: a contract out for signature this many days reminds its person (0 to 365; 0: at once)"},
			apply: daysInto(func(c *Config) *int { return &c.ReminderSignatureDays })},
		{Setting: Setting{"PORTAL_REMINDER_ARCHIVE_DAYS", "reminder-archive-days", "7", "Inbox: a signed contract not archived this many days reminds the back office (0 to 365; 0: at once)"},
			apply: daysInto(func(c *Config) *int { return &c.ReminderArchiveDays })},
		{Setting: Setting{"PORTAL_REMINDER_OFFER_DAYS", "reminder-offer-days", "5", "Inbox: an offer sent by e-mail reminds its sender this many days before its valid-until (0 to 30)"},
			apply: func(c *Config, raw string) error {
				n, err := strconv.Atoi(raw)
				if err != nil || n < 0 || n > 30 {
					return fmt.Errorf("must be a whole number of days from 0 to 30 (an offer holds 30 days), not %q", raw)
				}
				c.ReminderOfferDays = n
				return nil
			}},
		{Setting: Setting{"PORTAL_INBOX_READ_RETENTION", "inbox-read-retention", "2160h", "Inbox items read and older than this are deleted (at least 24h; 0 keeps them)"},
			apply: retentionInto(func(c *Config) *time.Duration { return &c.InboxReadRetention })},
		{Setting: Setting{"PORTAL_INBOX_UNREAD_RETENTION", "inbox-unread-retention", "8760h", "Inbox items still unread and older than this are deleted, and leave the unread count (at least 24h; 0 keeps them)"},
			apply: retentionInto(func(c *Config) *time.Duration { return &c.InboxUnreadRetention })},
		{Setting: Setting{"PORTAL_MAIL_RETENTION", "mail-retention", "9504h", "Mails that ended (sent, refused, failed, unknown) longer ago than this are deleted, with their bodies, and leave the quote's list of sent mails (at least 24h; 0 keeps them)"},
			apply: retentionInto(func(c *Config) *time.Duration { return &c.MailRetention })},
		{Setting: Setting{"PORTAL_SHUTDOWN_GRACE", "shutdown-grace", "20s", "Time given to in-flight requests on SIGTERM"},
			apply: durationInto(func(c *Config) *time.Duration { return &c.ShutdownGrace })},
		{Setting: Setting{"PORTAL_SHUTDOWN_DRAIN", "shutdown-drain", "5s", "On SIGTERM, time /readyz answers 503 while requests are still accepted (part of the grace)"},
			apply: func(c *Config, raw string) error {
				d, err := time.ParseDuration(raw)
				if err != nil || d < 0 {
					return fmt.Errorf("must be a duration such as 5s or 0, not %q", raw)
				}
				c.ShutdownDrain = d
				return nil
			}},
		{Setting: Setting{"PORTAL_LOG_FORMAT", "log-format", "json (text with -demo)", "Log format: json or text"},
			apply: func(c *Config, raw string) error {
				switch raw {
				case "":
					return nil // defaulted in finish: depends on demo mode
				case LogFormatJSON, LogFormatText:
					c.LogFormat = raw
					return nil
				}
				return fmt.Errorf("must be %q or %q, not %q", LogFormatJSON, LogFormatText, raw)
			}},
		{Setting: Setting{"PORTAL_LOG_LEVEL", "log-level", "info", "Minimum log level: debug, info, warn or error"},
			apply: func(c *Config, raw string) error {
				var level slog.Level
				if err := level.UnmarshalText([]byte(raw)); err != nil {
					return fmt.Errorf("must be debug, info, warn or error, not %q", raw)
				}
				c.LogLevel = level
				return nil
			}},
		{Setting: Setting{"PORTAL_TRUSTED_PROXIES", "trusted-proxies", "", "Comma-separated proxy addresses/CIDRs whose X-Forwarded-For is trusted (none by default)"},
			apply: func(c *Config, raw string) error {
				for _, p := range strings.Split(raw, ",") {
					p = strings.TrimSpace(p)
					if p == "" {
						continue
					}
					if _, err := netip.ParsePrefix(p); err != nil {
						if _, err := netip.ParseAddr(p); err != nil {
							return fmt.Errorf("%q is neither an IP address nor a CIDR prefix", p)
						}
					}
					c.TrustedProxies = append(c.TrustedProxies, p)
				}
				return nil
			}},
		{Setting: Setting{"PORTAL_METRICS_ADDR", "metrics-addr", "", "When set, serve Prometheus metrics on this host:port at /metrics"},
			apply: func(c *Config, raw string) error {
				if raw == "" {
					return nil
				}
				if err := checkHostPort(raw); err != nil {
					return err
				}
				c.MetricsAddr = raw
				return nil
			}},
		{Setting: Setting{"PORTAL_BATCH_CONCURRENCY", "batch-concurrency", "4", "v2 calls one background job (batch archive, customer handover) makes at a time (1 to 32)"},
			apply: func(c *Config, raw string) error {
				n, err := strconv.Atoi(raw)
				if err != nil || n < 1 || n > 32 {
					return fmt.Errorf("must be a whole number from 1 to 32, not %q", raw)
				}
				c.BatchConcurrency = n
				return nil
			}},
		{Setting: Setting{"PORTAL_WATCH_INTERVAL", "watch-interval", "1m", "Signature watcher: each contract out for signature is read again about this often, with the token of a person who read it (1s to 24h)"},
			apply: func(c *Config, raw string) error {
				d, err := time.ParseDuration(raw)
				if err != nil || d < time.Second || d > 24*time.Hour {
					return fmt.Errorf("must be a duration from 1s to 24h such as 1m, not %q", raw)
				}
				c.WatchInterval = d
				return nil
			}},
		{Setting: Setting{"PORTAL_WATCH_MAX_CALLS_PER_MINUTE", "watch-max-calls-per-minute", "600", "Signature watcher: the ceiling of its v2 reads a minute (its budget is one read per watched contract per interval, at most this; 1 to 100000)"},
			apply: func(c *Config, raw string) error {
				n, err := strconv.Atoi(raw)
				if err != nil || n < 1 || n > 100000 {
					return fmt.Errorf("must be a whole number from 1 to 100000, not %q", raw)
				}
				c.WatchMaxCallsPerMinute = n
				return nil
			}},
		{Setting: Setting{"PORTAL_DEMO", "demo", "false", "Demo mode: embedded OpenID provider and v2 simulator; its keys are kept in PORTAL_DATA_DIR/demo"},
			isBool: true,
			apply: func(c *Config, raw string) error {
				b, err := strconv.ParseBool(raw)
				if err != nil {
					return fmt.Errorf("must be true or false, not %q", raw)
				}
				c.Demo = b
				return nil
			}},
		{Setting: Setting{"PORTAL_DEMO_TOKEN_TTL", "demo-token-ttl", "15m", "Lifetime of access tokens issued by the demo OpenID provider"},
			apply: durationInto(func(c *Config) *time.Duration { return &c.DemoTokenTTL })},
		{Setting: Setting{"PORTAL_DEMO_CUSTOMERS", "demo-customers", "60", "Customers seeded into the demo simulator (0 to 10000)"},
			apply: func(c *Config, raw string) error {
				n, err := strconv.Atoi(raw)
				if err != nil || n < 0 || n > 10000 {
					return fmt.Errorf("must be a whole number from 0 to 10000, not %q", raw)
				}
				c.DemoCustomers = n
				return nil
			}},
		{Setting: Setting{"PORTAL_DEMO_SIM_ADMIN", "demo-sim-admin", "false", "Demo mode: expose the embedded simulator's control API /_sim/ (faults, request log) for tests"},
			isBool: true,
			apply: func(c *Config, raw string) error {
				b, err := strconv.ParseBool(raw)
				if err != nil {
					return fmt.Errorf("must be true or false, not %q", raw)
				}
				c.DemoSimAdmin = b
				return nil
			}},
		{Setting: Setting{"PORTAL_DEMO_RESTRICT_TO_OWNERS", "demo-restrict-to-owners", "false", "Demo mode: the embedded simulator restricts every user to the customers they own (403 otherwise; the back office sees all), as real CPQ deployments restrict reps"},
			isBool: true,
			apply: func(c *Config, raw string) error {
				b, err := strconv.ParseBool(raw)
				if err != nil {
					return fmt.Errorf("must be true or false, not %q", raw)
				}
				c.DemoRestrictToOwners = b
				return nil
			}},
		{Setting: Setting{"PORTAL_DEMO_SIGNER_DELAY", "demo-signer-delay", "45s", "Demo mode: the embedded simulator's signers answer a signature request by themselves after this delay (every third declines, with a reason); 0 turns it off"},
			apply: func(c *Config, raw string) error {
				d, err := time.ParseDuration(raw)
				if err != nil || d < 0 {
					return fmt.Errorf("must be a duration such as 45s or 2m, or 0 to turn it off, not %q", raw)
				}
				c.DemoSignerDelay = d
				return nil
			}},
	}
}

// defaultValue returns the default to parse when a setting is given neither as flag nor as
// environment variable. Defaults that are documentation only ("http://<addr>") parse as empty.
func defaultValue(s Setting) string {
	switch s.Env {
	case "PORTAL_PUBLIC_URL", "PORTAL_LOG_FORMAT":
		return ""
	}
	return s.Default
}

// flagValue records a flag's raw text and whether it was given.
type flagValue struct {
	value  string
	set    bool
	isBool bool
}

func (f *flagValue) String() string   { return f.value }
func (f *flagValue) IsBoolFlag() bool { return f.isBool }
func (f *flagValue) Set(v string) error {
	f.value, f.set = v, true
	return nil
}

// Load reads the configuration from args (os.Args[1:]) and getenv (os.Getenv).
// Flags win over environment variables, which win over defaults. The error names the first
// variable (or flag) that is missing or malformed, e.g.
// "PORTAL_V2_API_URL: required (or run with -demo)". flag.ErrHelp is returned for -h/-help
// after the usage (with every setting) has been written to stderr.
func Load(args []string, getenv func(string) string) (Config, error) {
	return load(args, getenv, os.Stderr)
}

func load(args []string, getenv func(string) string, usageOut io.Writer) (Config, error) {
	defs := settings()
	fs := flag.NewFlagSet("portal", flag.ContinueOnError)
	fs.SetOutput(usageOut)
	values := make(map[string]*flagValue, len(defs))
	for _, d := range defs {
		if d.Flag == "" {
			continue
		}
		v := &flagValue{isBool: d.isBool}
		values[d.Env] = v
		fs.Var(v, d.Flag, fmt.Sprintf("%s (env %s, default %q)", d.Description, d.Env, d.Default))
	}
	var cfg Config
	fs.BoolVar(&cfg.ShowVersion, "version", false, "print the version and exit")
	fs.Usage = func() {
		fmt.Fprintf(usageOut, "Usage: portal [flags]\n\nEvery flag has a PORTAL_* environment variable; a flag wins over the environment.\n\n")
		fs.PrintDefaults()
		// The settings without a flag: secrets (never on a command line, where ps shows them)
		// and the rarely changed ones.
		fmt.Fprintf(usageOut, "\nOnly from the environment:\n")
		for _, s := range Table() {
			if s.Flag == "" {
				fmt.Fprintf(usageOut, "  %s\n    \t%s (default %q)\n", s.Env, s.Description, s.Default)
			}
		}
	}
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected argument %q (settings are flags like -addr or PORTAL_* variables)", fs.Arg(0))
	}
	if cfg.ShowVersion {
		return Config{ShowVersion: true}, nil // -version needs no other setting
	}

	for _, d := range defs {
		raw, source := "", d.Env
		if v, ok := values[d.Env]; ok && v.set {
			raw, source = v.value, fmt.Sprintf("%s (flag -%s)", d.Env, d.Flag)
			if d.isBool && raw == "" {
				raw = "true"
			}
		} else if env := getenv(d.Env); env != "" {
			raw = env
		} else {
			raw = defaultValue(d.Setting)
		}
		if err := d.apply(&cfg, strings.TrimSpace(raw)); err != nil {
			return Config{}, fmt.Errorf("%s: %w", source, err)
		}
	}
	if err := finish(&cfg); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// finish applies the rules that span settings: requirements, demo defaults, derived values.
func finish(c *Config) error {
	if c.PublicURL == nil {
		c.PublicURLDerived = true
		c.PublicURL = publicURLFromAddr(c.Addr)
	}
	if c.LogFormat == "" {
		c.LogFormat = LogFormatJSON
		if c.Demo {
			c.LogFormat = LogFormatText
		}
	}
	if c.SessionLifetime < c.SessionIdleTimeout {
		return errors.New("PORTAL_SESSION_LIFETIME: must not be shorter than PORTAL_SESSION_IDLE_TIMEOUT")
	}

	if c.Demo {
		// The embedded provider is used unless an external one is named.
		c.DemoIdP = c.OIDCIssuer == ""
		if c.DemoIdP {
			if c.OIDCClientID != "" || c.OIDCClientSecret != "" {
				return errors.New("PORTAL_OIDC_CLIENT_ID: only with PORTAL_OIDC_ISSUER (demo mode's embedded provider has its own client)")
			}
			c.OIDCIssuer = demoIssuer(c.PublicURL)
			c.OIDCClientID = DemoClientID
			secret, err := randomToken(32)
			if err != nil {
				return fmt.Errorf("PORTAL_OIDC_CLIENT_SECRET: generating the demo client secret: %w", err)
			}
			c.OIDCClientSecret = secret
		}
		if len(c.SessionKeys) == 0 {
			key, err := randomToken(32)
			if err != nil {
				return fmt.Errorf("PORTAL_SESSION_KEYS: generating a demo key: %w", err)
			}
			c.SessionKeys = []string{key}
			c.GeneratedSessionKey = true
		}
	}

	if c.SMTP != nil && c.SMTPFrom == "" {
		return errors.New("PORTAL_SMTP_FROM: required with PORTAL_SMTP_URL (the From address of the portal's e-mail)")
	}
	if c.BounceMailbox != nil && c.SMTP == nil && !c.Demo {
		return errors.New("PORTAL_MAIL_BOUNCE_IMAP_URL: only with PORTAL_SMTP_URL (the bounces are of the mails it sends)")
	}
	if c.CopyTo != "" && c.SMTP == nil && !c.Demo {
		return errors.New("PORTAL_MAIL_COPY_TO: only with PORTAL_SMTP_URL (the copies are of the mails it sends)")
	}
	if c.CopyTo != "" && c.CopyMailbox == nil && c.BounceMailbox == nil {
		return errors.New("PORTAL_MAIL_COPY_TO: needs the mailbox the copies arrive in (PORTAL_MAIL_COPY_IMAP_URL or PORTAL_MAIL_BOUNCE_IMAP_URL)")
	}
	if c.CopyMailbox != nil && c.CopyTo == "" {
		return errors.New("PORTAL_MAIL_COPY_IMAP_URL: only with PORTAL_MAIL_COPY_TO (the address whose mailbox it is)")
	}
	if c.BounceAddress != "" && c.BounceMailbox == nil {
		return errors.New("PORTAL_MAIL_BOUNCE_ADDRESS: only with PORTAL_MAIL_BOUNCE_IMAP_URL (the mailbox the portal reads the bounces from)")
	}
	switch {
	case c.V2APIURL == nil && !c.Demo:
		return errors.New("PORTAL_V2_API_URL: required (or run with -demo)")
	case c.OIDCIssuer == "":
		return errors.New("PORTAL_OIDC_ISSUER: required (or run with -demo)")
	case c.OIDCClientID == "":
		return errors.New("PORTAL_OIDC_CLIENT_ID: required with PORTAL_OIDC_ISSUER")
	case c.OIDCClientSecret == "":
		return errors.New("PORTAL_OIDC_CLIENT_SECRET: required with PORTAL_OIDC_ISSUER (or PORTAL_OIDC_CLIENT_SECRET_FILE)")
	case len(c.SessionKeys) == 0:
		return fmt.Errorf("PORTAL_SESSION_KEYS: required (at least one key of %d or more bytes; or run with -demo)", MinSessionKeyBytes)
	}
	return nil
}

// BindAddr records the address the listener really got (it differs from Addr when the port
// is 0). When PORTAL_PUBLIC_URL was not given, PublicURL, and with it the embedded provider's
// issuer, follows the real address.
func (c *Config) BindAddr(actual string) {
	if !c.PublicURLDerived {
		return
	}
	c.PublicURL = publicURLFromAddr(actual)
	if c.DemoIdP {
		c.OIDCIssuer = demoIssuer(c.PublicURL)
	}
}

// StateDatabase names the state database for logs and banners, without credentials.
func (c Config) StateDatabase() string {
	if c.DatabaseURL == "" {
		return "sqlite in " + filepath.Join(c.DataDir, "state")
	}
	u, err := url.Parse(c.DatabaseURL)
	if err != nil {
		return "postgres"
	}
	return "postgres " + u.Host + u.Path
}

// V2Simulated reports whether demo mode runs the embedded v2 simulator (no PORTAL_V2_API_URL).
func (c Config) V2Simulated() bool { return c.Demo && c.V2APIURL == nil }

// LogValue implements slog.LogValuer: the configuration without secrets, for the start-up log.
func (c Config) LogValue() slog.Value {
	v2 := "embedded simulator"
	if c.V2APIURL != nil {
		v2 = c.V2APIURL.String()
	}
	return slog.GroupValue(
		slog.String("addr", c.Addr),
		slog.String("public_url", c.PublicURL.String()),
		slog.String("v2_api_url", v2),
		slog.Duration("v2_timeout", c.V2Timeout),
		slog.String("v2_ready_check", c.V2ReadyCheck),
		slog.String("oidc_issuer", c.OIDCIssuer),
		slog.String("oidc_client_id", c.OIDCClientID),
		slog.String("oidc_scopes", strings.Join(c.OIDCScopes, " ")),
		slog.String("session_store", c.SessionStore),
		slog.String("data_dir", c.DataDir),
		slog.String("state_database", c.StateDatabase()),
		slog.Int("database_conns", c.DatabaseConns),
		slog.Int("session_keys", len(c.SessionKeys)),
		slog.Duration("session_idle_timeout", c.SessionIdleTimeout),
		slog.Duration("session_lifetime", c.SessionLifetime),
		slog.Int64("upload_limit", c.UploadLimit),
		slog.Duration("customer_cache_ttl", c.CustomerCacheTTL),
		slog.String("roles_claim", c.RolesClaim),
		slog.Any("team_roles", c.TeamRoles),
		slog.Any("backoffice_roles", c.BackofficeRoles),
		slog.Any("batch_archive_roles", c.BatchArchiveRoles),
		slog.Any("handover_roles", c.HandoverRoles),
		slog.Any("import_roles", c.ImportRoles),
		slog.Duration("work_stale_after", c.WorkStaleAfter),
		slog.Duration("work_retention", c.WorkRetention),
		slog.Duration("inbox_read_retention", c.InboxReadRetention),
		slog.Duration("inbox_unread_retention", c.InboxUnreadRetention),
		slog.Duration("mail_retention", c.MailRetention),
		slog.String("mail_bounce_mailbox", bounceName(c.BounceMailbox)),
		slog.String("mail_bounce_address", c.BounceAddress),
		slog.Duration("mail_bounce_every", c.BounceEvery),
		slog.String("mail_copy_to", c.CopyTo),
		slog.String("mail_copy_mailbox", bounceName(c.CopyMailbox)),
		slog.Duration("mail_copy_grace", c.CopyGrace),
		slog.Int("followup_signature_days", c.FollowUpSignatureDays),
		slog.Int("followup_draft_days", c.FollowUpDraftDays),
		slog.Any("trusted_proxies", c.TrustedProxies),
		slog.String("metrics_addr", c.MetricsAddr),
		slog.Bool("demo", c.Demo),
	)
}

// bounceName names the bounce mailbox without its password ("" when none).
func bounceName(m *bounce.Mailbox) string {
	if m == nil {
		return ""
	}
	return m.String()
}

// ParseSize parses a byte size: a whole or decimal number with an optional unit,
// B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024), case-insensitive,
// e.g. "25MB", "1GiB", "1.5 GB", "1048576". The size must be at least one byte.
func ParseSize(raw string) (int64, error) {
	s := strings.TrimSpace(raw)
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	number, unit := s, ""
	if i >= 0 {
		number, unit = s[:i], strings.TrimSpace(s[i:])
	}
	multipliers := map[string]float64{
		"": 1, "b": 1,
		"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
		"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
	}
	mult, ok := multipliers[strings.ToLower(unit)]
	f, err := strconv.ParseFloat(number, 64)
	if !ok || err != nil || number == "" {
		return 0, fmt.Errorf("must be a size such as 25MB or 1GiB, not %q", raw)
	}
	bytes := f * mult
	if bytes < 1 || bytes > math.MaxInt64/2 {
		return 0, fmt.Errorf("must be between 1 byte and 4EiB, not %q", raw)
	}
	return int64(bytes), nil
}

// durationInto returns an apply func for a positive duration field.
func durationInto(field func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, raw string) error {
		d, err := time.ParseDuration(raw)
		if err != nil || d <= 0 {
			return fmt.Errorf("must be a positive duration such as 30s, 15m or 12h, not %q", raw)
		}
		*field(c) = d
		return nil
	}
}

func checkHostPort(raw string) error {
	host, port, err := net.SplitHostPort(raw)
	if err != nil {
		return fmt.Errorf("must be host:port such as 127.0.0.1:8080, not %q", raw)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("port must be a number from 0 to 65535, not %q", port)
	}
	if strings.ContainsAny(host, "/ ") {
		return fmt.Errorf("host %q is not a host name or IP address", host)
	}
	return nil
}

// parseBaseURL accepts an absolute http(s) URL without query or fragment and drops a trailing slash,
// so paths can be appended.
func parseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, fmt.Errorf("must be an absolute http(s) URL such as https://cpq.example.com, not %q", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("must not have a query or fragment")
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// publicURLFromAddr derives http://host:port from a listen address; an unspecified host
// (":8080", "0.0.0.0:8080") becomes localhost.
func publicURLFromAddr(addr string) *url.URL {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		host, port = addr, ""
	}
	if ip, err := netip.ParseAddr(host); host == "" || (err == nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return &url.URL{Scheme: "http", Host: net.JoinHostPort(host, port)}
}

func demoIssuer(public *url.URL) string {
	return strings.TrimRight(public.String(), "/") + "/idp"
}

func checkPrintable(s string) error {
	if !utf8.ValidString(s) {
		return errors.New("must be valid UTF-8")
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return errors.New("must not contain control characters")
		}
	}
	return nil
}

func readSecretFile(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading the secret file: %w", err)
	}
	secret := strings.TrimRight(string(data), "\r\n")
	if secret == "" {
		return "", fmt.Errorf("the file %s is empty", path)
	}
	if err := checkPrintable(secret); err != nil {
		return "", fmt.Errorf("the file %s: %w", path, err)
	}
	return secret, nil
}

// decodedSecretLen is the length of a session secret after decoding, read as internal/session
// reads it: hex when it is only hex digits (even length), else base64 in any of its four spellings.
// It returns 0 when the key is neither. Checked here too so that a bad key is refused at start-up
// with an error naming PORTAL_SESSION_KEYS.
func decodedSecretLen(key string) int {
	if key != "" && len(key)%2 == 0 {
		if b, err := hex.DecodeString(key); err == nil {
			return len(b)
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(key); err == nil {
			return len(b)
		}
	}
	return 0
}

func randomToken(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// roleList splits a comma-separated list of roles, dropping blanks.
func roleList(raw string) []string {
	var roles []string
	for _, r := range strings.Split(raw, ",") {
		if r = strings.TrimSpace(r); r != "" {
			roles = append(roles, r)
		}
	}
	return roles
}

// daysInto parses a whole number of days from 0 to 365 into the field at (0: at once, for demos
// and tests).
// retentionInto parses a retention: 0 (keep everything) or a duration of at least a day.
func retentionInto(at func(c *Config) *time.Duration) func(c *Config, raw string) error {
	return func(c *Config, raw string) error {
		d, err := time.ParseDuration(raw)
		if err != nil || d < 0 || (d > 0 && d < 24*time.Hour) {
			return fmt.Errorf("must be 0 (keep them) or a duration of at least 24h such as 2160h, not %q", raw)
		}
		*at(c) = d
		return nil
	}
}

func daysInto(at func(c *Config) *int) func(c *Config, raw string) error {
	return func(c *Config, raw string) error {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 0 || n > 365 {
			return fmt.Errorf("must be a whole number of days from 0 to 365, not %q", raw)
		}
		*at(c) = n
		return nil
	}
}

// emailAddress applies a setting holding one e-mail address (empty: unset) with set; example is
// an address of the kind it expects, for the error.
func emailAddress(example string, set func(c *Config, addr string)) func(c *Config, raw string) error {
	return func(c *Config, raw string) error {
		if raw == "" {
			return nil
		}
		a, err := mail.ParseAddress(raw)
		if err != nil {
			return fmt.Errorf("must be an e-mail address such as %s, not %q", example, raw)
		}
		set(c, a.Address)
		return nil
	}
}

// imapMailbox applies a setting holding a mailbox's IMAP URL (empty: unset) with set. Its error
// never quotes the URL: it holds the password.
func imapMailbox(set func(c *Config, m *bounce.Mailbox)) func(c *Config, raw string) error {
	return func(c *Config, raw string) error {
		if raw == "" {
			return nil
		}
		m, err := bounce.ParseIMAPURL(raw)
		if err != nil {
			return err
		}
		set(c, &m)
		return nil
	}
}
