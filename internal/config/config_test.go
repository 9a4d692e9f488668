package config

import (
	"errors"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const (
	key1 = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="                     // base64 of 32 bytes
	key2 = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff" // hex of 32 bytes
)

// prodEnv is a complete production environment; tests change one thing at a time.
func prodEnv() map[string]string {
	return map[string]string{
		"PORTAL_V2_API_URL":         "https://cpq.example.com/api/",
		"PORTAL_OIDC_ISSUER":        "https://login.example.com/realms/sales",
		"PORTAL_OIDC_CLIENT_ID":     "portal",
		"PORTAL_OIDC_CLIENT_SECRET": "s3cret",
		"PORTAL_SESSION_KEYS":       key1,
	}
}

func getenv(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

func loadQuiet(args []string, env map[string]string) (Config, error) {
	return load(args, getenv(env), io.Discard)
}

func TestLoadDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := loadQuiet(nil, prodEnv())
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"Addr", cfg.Addr, "127.0.0.1:8080"},
		{"PublicURL", cfg.PublicURL.String(), "http://127.0.0.1:8080"},
		{"PublicURLDerived", cfg.PublicURLDerived, true},
		{"V2APIURL (trailing slash dropped)", cfg.V2APIURL.String(), "https://cpq.example.com/api"},
		{"V2Timeout", cfg.V2Timeout, 15 * time.Second},
		{"OIDCIssuer", cfg.OIDCIssuer, "https://login.example.com/realms/sales"},
		{"OIDCScopes", strings.Join(cfg.OIDCScopes, " "), "openid profile email offline_access"},
		{"SessionStore", cfg.SessionStore, SessionStoreDatabase},
		{"DataDir", cfg.DataDir, ".data"},
		{"SessionKeys", len(cfg.SessionKeys), 1},
		{"SessionIdleTimeout", cfg.SessionIdleTimeout, 30 * time.Minute},
		{"SessionLifetime", cfg.SessionLifetime, 12 * time.Hour},
		{"UploadLimit", cfg.UploadLimit, int64(1 << 30)},
		{"CustomerCacheTTL", cfg.CustomerCacheTTL, 30 * time.Second},
		{"ShutdownGrace", cfg.ShutdownGrace, 20 * time.Second},
		{"LogFormat", cfg.LogFormat, LogFormatJSON},
		{"LogLevel", cfg.LogLevel, slog.LevelInfo},
		{"TrustedProxies", len(cfg.TrustedProxies), 0},
		{"MetricsAddr", cfg.MetricsAddr, ""},
		{"Demo", cfg.Demo, false},
		{"DemoIdP", cfg.DemoIdP, false},
		{"DemoTokenTTL", cfg.DemoTokenTTL, 15 * time.Minute},
		{"DemoCustomers", cfg.DemoCustomers, 60},
		{"DemoSignerDelay", cfg.DemoSignerDelay, 45 * time.Second},
		{"GeneratedSessionKey", cfg.GeneratedSessionKey, false},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestLoadEveryVariable(t *testing.T) {
	t.Parallel()
	env := prodEnv()
	env["PORTAL_ADDR"] = "0.0.0.0:9090"
	env["PORTAL_PUBLIC_URL"] = "https://portal.example.com/"
	env["PORTAL_OIDC_SCOPES"] = "openid email"
	env["PORTAL_SESSION_STORE"] = "cookie"
	env["PORTAL_SESSION_KEYS"] = key1 + ", " + key2
	env["PORTAL_REDIS_URL"] = "redis://127.0.0.1:6379/2"
	env["PORTAL_SESSION_IDLE_TIMEOUT"] = "10m"
	env["PORTAL_SESSION_LIFETIME"] = "8h"
	env["PORTAL_V2_TIMEOUT"] = "3s"
	env["PORTAL_UPLOAD_LIMIT"] = "25MB"
	env["PORTAL_CUSTOMER_CACHE_TTL"] = "0"
	env["PORTAL_SHUTDOWN_GRACE"] = "5s"
	env["PORTAL_LOG_FORMAT"] = "text"
	env["PORTAL_LOG_LEVEL"] = "debug"
	env["PORTAL_TRUSTED_PROXIES"] = "10.0.0.0/8, 192.168.1.7"
	env["PORTAL_METRICS_ADDR"] = "127.0.0.1:9100"
	env["PORTAL_DEMO_TOKEN_TTL"] = "1m"
	env["PORTAL_DEMO_CUSTOMERS"] = "5"
	env["PORTAL_DEMO_SIGNER_DELAY"] = "0"

	cfg, err := loadQuiet(nil, env)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"Addr", cfg.Addr, "0.0.0.0:9090"},
		{"PublicURL", cfg.PublicURL.String(), "https://portal.example.com"},
		{"PublicURLDerived", cfg.PublicURLDerived, false},
		{"OIDCScopes", strings.Join(cfg.OIDCScopes, "|"), "openid|email"},
		{"SessionStore", cfg.SessionStore, SessionStoreCookie},
		{"SessionKeys[0] (signing key first)", cfg.SessionKeys[0], key1},
		{"SessionKeys[1]", cfg.SessionKeys[1], key2},
		{"RedisURL", cfg.RedisURL, "redis://127.0.0.1:6379/2"},
		{"SessionIdleTimeout", cfg.SessionIdleTimeout, 10 * time.Minute},
		{"SessionLifetime", cfg.SessionLifetime, 8 * time.Hour},
		{"V2Timeout", cfg.V2Timeout, 3 * time.Second},
		{"UploadLimit", cfg.UploadLimit, int64(25_000_000)},
		{"CustomerCacheTTL", cfg.CustomerCacheTTL, time.Duration(0)},
		{"ShutdownGrace", cfg.ShutdownGrace, 5 * time.Second},
		{"LogFormat", cfg.LogFormat, LogFormatText},
		{"LogLevel", cfg.LogLevel, slog.LevelDebug},
		{"TrustedProxies", strings.Join(cfg.TrustedProxies, "|"), "10.0.0.0/8|192.168.1.7"},
		{"MetricsAddr", cfg.MetricsAddr, "127.0.0.1:9100"},
		{"DemoTokenTTL", cfg.DemoTokenTTL, time.Minute},
		{"DemoCustomers", cfg.DemoCustomers, 5},
		{"DemoSignerDelay", cfg.DemoSignerDelay, time.Duration(0)},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestFlagsOverrideEnvironment(t *testing.T) {
	t.Parallel()
	env := prodEnv()
	env["PORTAL_ADDR"] = "127.0.0.1:1111"
	env["PORTAL_LOG_LEVEL"] = "error"
	cfg, err := loadQuiet([]string{"-addr", "127.0.0.1:0", "-log-level=warn", "-upload-limit", "2GiB"}, env)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if cfg.Addr != "127.0.0.1:0" {
		t.Errorf("Addr = %q, want the flag's 127.0.0.1:0", cfg.Addr)
	}
	if cfg.LogLevel != slog.LevelWarn {
		t.Errorf("LogLevel = %v, want the flag's WARN", cfg.LogLevel)
	}
	if cfg.UploadLimit != 2<<30 {
		t.Errorf("UploadLimit = %d, want 2GiB", cfg.UploadLimit)
	}
}

func TestFlagErrorNamesFlag(t *testing.T) {
	t.Parallel()
	_, err := loadQuiet([]string{"-v2-timeout", "soon"}, prodEnv())
	if err == nil || !strings.HasPrefix(err.Error(), "PORTAL_V2_TIMEOUT (flag -v2-timeout): ") {
		t.Fatalf("error = %v, want it to name PORTAL_V2_TIMEOUT and the flag", err)
	}
}

func TestDemoMode(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"-demo"}, {"-demo=true"}} {
		cfg, err := loadQuiet(args, map[string]string{})
		if err != nil {
			t.Fatalf("Load(%v): %v", args, err)
		}
		if !cfg.Demo || !cfg.DemoIdP || !cfg.V2Simulated() {
			t.Errorf("Demo=%v DemoIdP=%v V2Simulated=%v, want all true", cfg.Demo, cfg.DemoIdP, cfg.V2Simulated())
		}
		if cfg.OIDCIssuer != "http://127.0.0.1:8080/idp" || cfg.OIDCClientID != DemoClientID {
			t.Errorf("issuer %q client %q, want the embedded provider", cfg.OIDCIssuer, cfg.OIDCClientID)
		}
		if len(cfg.OIDCClientSecret) < 32 {
			t.Errorf("demo client secret %q is too short to be random", cfg.OIDCClientSecret)
		}
		if !cfg.GeneratedSessionKey || len(cfg.SessionKeys) != 1 || decodedSecretLen(cfg.SessionKeys[0]) < MinSessionKeyBytes {
			t.Errorf("want one generated session key of >= %d bytes, got %d keys (generated=%v)", MinSessionKeyBytes, len(cfg.SessionKeys), cfg.GeneratedSessionKey)
		}
		if cfg.LogFormat != LogFormatText {
			t.Errorf("LogFormat = %q, want text in demo mode", cfg.LogFormat)
		}
	}

	a, _ := loadQuiet([]string{"-demo"}, nil)
	b, _ := loadQuiet([]string{"-demo"}, nil)
	if a.SessionKeys[0] == b.SessionKeys[0] || a.OIDCClientSecret == b.OIDCClientSecret {
		t.Error("two demo starts got the same session key or client secret; they must be random")
	}
}

func TestDemoModeKeepsGivenValues(t *testing.T) {
	t.Parallel()
	cfg, err := loadQuiet(nil, map[string]string{
		"PORTAL_DEMO":         "true",
		"PORTAL_V2_API_URL":   "http://127.0.0.1:8081",
		"PORTAL_SESSION_KEYS": key1,
		"PORTAL_LOG_FORMAT":   "json",
	})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if cfg.V2Simulated() || cfg.V2APIURL.String() != "http://127.0.0.1:8081" {
		t.Errorf("V2APIURL = %v (simulated %v), want the given URL", cfg.V2APIURL, cfg.V2Simulated())
	}
	if cfg.GeneratedSessionKey || cfg.SessionKeys[0] != key1 {
		t.Error("the given session key was replaced by a random one")
	}
	if cfg.LogFormat != LogFormatJSON {
		t.Errorf("LogFormat = %q, want the given json", cfg.LogFormat)
	}

	ext, err := loadQuiet([]string{"-demo"}, map[string]string{
		"PORTAL_OIDC_ISSUER": "http://127.0.0.1:5556/dex", "PORTAL_OIDC_CLIENT_ID": "portal", "PORTAL_OIDC_CLIENT_SECRET": "x",
	})
	if err != nil {
		t.Fatalf("Load with external issuer: %v", err)
	}
	if ext.DemoIdP || ext.OIDCIssuer != "http://127.0.0.1:5556/dex" || ext.OIDCClientID != "portal" {
		t.Errorf("DemoIdP=%v issuer=%q client=%q, want the external provider", ext.DemoIdP, ext.OIDCIssuer, ext.OIDCClientID)
	}
}

func TestBindAddr(t *testing.T) {
	t.Parallel()
	cfg, err := loadQuiet([]string{"-demo", "-addr", "127.0.0.1:0"}, nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	cfg.BindAddr("127.0.0.1:43210")
	if got := cfg.PublicURL.String(); got != "http://127.0.0.1:43210" {
		t.Errorf("PublicURL = %q after BindAddr", got)
	}
	if cfg.OIDCIssuer != "http://127.0.0.1:43210/idp" {
		t.Errorf("OIDCIssuer = %q after BindAddr, want it to follow the public URL", cfg.OIDCIssuer)
	}

	fixed, err := loadQuiet([]string{"-demo", "-addr", "127.0.0.1:0", "-public-url", "https://demo.example.com"}, nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	fixed.BindAddr("127.0.0.1:43210")
	if fixed.PublicURL.String() != "https://demo.example.com" || fixed.OIDCIssuer != "https://demo.example.com/idp" {
		t.Errorf("a given public URL changed: %q, issuer %q", fixed.PublicURL, fixed.OIDCIssuer)
	}

	wildcard, _ := loadQuiet([]string{"-demo", "-addr", ":0"}, nil)
	wildcard.BindAddr("[::]:5000")
	if wildcard.PublicURL.String() != "http://localhost:5000" {
		t.Errorf("PublicURL = %q for a wildcard listener, want localhost", wildcard.PublicURL)
	}
}

func TestClientSecretFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(path, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := prodEnv()
	delete(env, "PORTAL_OIDC_CLIENT_SECRET")
	env["PORTAL_OIDC_CLIENT_SECRET_FILE"] = path
	cfg, err := loadQuiet(nil, env)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if cfg.OIDCClientSecret != "from-file" {
		t.Errorf("secret = %q, want the file's content without the newline", cfg.OIDCClientSecret)
	}
}

// TestLoadErrors covers every refusal: each names the variable and says what is wrong.
func TestLoadErrors(t *testing.T) {
	t.Parallel()
	const keyErr = "PORTAL_SESSION_KEYS: each key must be at least 32 bytes, written as base64 or hex (generate one with: openssl rand -base64 32)"
	emptyFile := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(emptyFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		set     map[string]string // added to prodEnv; "" deletes
		wantErr string            // exact error
	}{
		{"missing v2 url", nil, map[string]string{"PORTAL_V2_API_URL": ""}, "PORTAL_V2_API_URL: required (or run with -demo)"},
		{"relative v2 url", nil, map[string]string{"PORTAL_V2_API_URL": "cpq.example.com"}, `PORTAL_V2_API_URL: must be an absolute http(s) URL such as https://cpq.example.com, not "cpq.example.com"`},
		{"ftp v2 url", nil, map[string]string{"PORTAL_V2_API_URL": "ftp://cpq.example.com"}, `PORTAL_V2_API_URL: must be an absolute http(s) URL such as https://cpq.example.com, not "ftp://cpq.example.com"`},
		{"v2 url with query", nil, map[string]string{"PORTAL_V2_API_URL": "https://cpq.example.com/?x=1"}, "PORTAL_V2_API_URL: must not have a query or fragment"},
		{"missing issuer", nil, map[string]string{"PORTAL_OIDC_ISSUER": ""}, "PORTAL_OIDC_ISSUER: required (or run with -demo)"},
		{"bad issuer", nil, map[string]string{"PORTAL_OIDC_ISSUER": "login.example.com"}, "PORTAL_OIDC_ISSUER: must be an absolute http(s) URL without query, e.g. https://login.example.com/realms/sales"},
		{"missing client id", nil, map[string]string{"PORTAL_OIDC_CLIENT_ID": ""}, "PORTAL_OIDC_CLIENT_ID: required with PORTAL_OIDC_ISSUER"},
		{"missing client secret", nil, map[string]string{"PORTAL_OIDC_CLIENT_SECRET": ""}, "PORTAL_OIDC_CLIENT_SECRET: required with PORTAL_OIDC_ISSUER (or PORTAL_OIDC_CLIENT_SECRET_FILE)"},
		{"control char in secret", nil, map[string]string{"PORTAL_OIDC_CLIENT_SECRET": "a\x01b"}, "PORTAL_OIDC_CLIENT_SECRET: must not contain control characters"},
		{"secret and file", nil, map[string]string{"PORTAL_OIDC_CLIENT_SECRET_FILE": emptyFile}, "PORTAL_OIDC_CLIENT_SECRET_FILE: set either PORTAL_OIDC_CLIENT_SECRET or PORTAL_OIDC_CLIENT_SECRET_FILE, not both"},
		{"empty secret file", nil, map[string]string{"PORTAL_OIDC_CLIENT_SECRET": "", "PORTAL_OIDC_CLIENT_SECRET_FILE": emptyFile}, "PORTAL_OIDC_CLIENT_SECRET_FILE: the file " + emptyFile + " is empty"},
		{"scopes without openid", nil, map[string]string{"PORTAL_OIDC_SCOPES": "profile email"}, `PORTAL_OIDC_SCOPES: must include "openid"`},
		{"missing session keys", nil, map[string]string{"PORTAL_SESSION_KEYS": ""}, "PORTAL_SESSION_KEYS: required (at least one key of 32 or more bytes; or run with -demo)"},
		{"short session key", nil, map[string]string{"PORTAL_SESSION_KEYS": "c2hvcnQ="}, keyErr},
		{"second key short", nil, map[string]string{"PORTAL_SESSION_KEYS": key1 + ",00112233"}, keyErr},
		{"32 characters are 16 bytes of hex", nil, map[string]string{"PORTAL_SESSION_KEYS": "0123456789abcdef0123456789abcdef"}, keyErr},
		{"key neither base64 nor hex", nil, map[string]string{"PORTAL_SESSION_KEYS": "this is not base64 but it is long enough!!"}, keyErr},
		{"unknown store", nil, map[string]string{"PORTAL_SESSION_STORE": "memcached"}, `PORTAL_SESSION_STORE: must be "database" or "cookie", not "memcached"`},
		{"redis store removed", nil, map[string]string{"PORTAL_SESSION_STORE": "redis", "PORTAL_REDIS_URL": "redis://127.0.0.1:6379/0"}, `PORTAL_SESSION_STORE: the Redis session store was removed: sessions are in the state database now (set "database", the default, with PORTAL_DATABASE_URL for several replicas; docs/operations.md)`},
		{"bad redis url", nil, map[string]string{"PORTAL_REDIS_URL": "http://127.0.0.1:6379"}, "PORTAL_REDIS_URL: must be a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379/0"},
		{"bad idle timeout", nil, map[string]string{"PORTAL_SESSION_IDLE_TIMEOUT": "30"}, `PORTAL_SESSION_IDLE_TIMEOUT: must be a positive duration such as 30s, 15m or 12h, not "30"`},
		{"zero lifetime", nil, map[string]string{"PORTAL_SESSION_LIFETIME": "0s"}, `PORTAL_SESSION_LIFETIME: must be a positive duration such as 30s, 15m or 12h, not "0s"`},
		{"lifetime shorter than idle", nil, map[string]string{"PORTAL_SESSION_LIFETIME": "10m"}, "PORTAL_SESSION_LIFETIME: must not be shorter than PORTAL_SESSION_IDLE_TIMEOUT"},
		{"negative v2 timeout", nil, map[string]string{"PORTAL_V2_TIMEOUT": "-1s"}, `PORTAL_V2_TIMEOUT: must be a positive duration such as 30s, 15m or 12h, not "-1s"`},
		{"bad upload limit", nil, map[string]string{"PORTAL_UPLOAD_LIMIT": "lots"}, `PORTAL_UPLOAD_LIMIT: must be a size such as 25MB or 1GiB, not "lots"`},
		{"unknown size unit", nil, map[string]string{"PORTAL_UPLOAD_LIMIT": "5XB"}, `PORTAL_UPLOAD_LIMIT: must be a size such as 25MB or 1GiB, not "5XB"`},
		{"zero upload limit", nil, map[string]string{"PORTAL_UPLOAD_LIMIT": "0"}, `PORTAL_UPLOAD_LIMIT: must be between 1 byte and 4EiB, not "0"`},
		{"database URL not postgres", nil, map[string]string{"PORTAL_DATABASE_URL": "mysql://db/portal"}, `PORTAL_DATABASE_URL: must be a postgres:// URL, e.g. postgres://portal:secret@db:5432/portal`},
		{"one database connection", nil, map[string]string{"PORTAL_DATABASE_CONNS": "1"}, `PORTAL_DATABASE_CONNS: must be a whole number from 2 to 500, not "1"`},
		{"work retention under a day", nil, map[string]string{"PORTAL_WORK_RETENTION": "1h"}, `PORTAL_WORK_RETENTION: must be 0 (keep every row) or a duration of at least 24h such as 8760h, not "1h"`},
		{"negative cache ttl", nil, map[string]string{"PORTAL_CUSTOMER_CACHE_TTL": "-5s"}, `PORTAL_CUSTOMER_CACHE_TTL: must be a duration such as 30s or 0, not "-5s"`},
		{"bad shutdown grace", nil, map[string]string{"PORTAL_SHUTDOWN_GRACE": "forever"}, `PORTAL_SHUTDOWN_GRACE: must be a positive duration such as 30s, 15m or 12h, not "forever"`},
		{"bad log format", nil, map[string]string{"PORTAL_LOG_FORMAT": "xml"}, `PORTAL_LOG_FORMAT: must be "json" or "text", not "xml"`},
		{"bad log level", nil, map[string]string{"PORTAL_LOG_LEVEL": "loud"}, `PORTAL_LOG_LEVEL: must be debug, info, warn or error, not "loud"`},
		{"bad trusted proxy", nil, map[string]string{"PORTAL_TRUSTED_PROXIES": "10.0.0.0/8,proxy.local"}, `PORTAL_TRUSTED_PROXIES: "proxy.local" is neither an IP address nor a CIDR prefix`},
		{"bad metrics addr", nil, map[string]string{"PORTAL_METRICS_ADDR": "9100"}, `PORTAL_METRICS_ADDR: must be host:port such as 127.0.0.1:8080, not "9100"`},
		{"bad addr", nil, map[string]string{"PORTAL_ADDR": "localhost"}, `PORTAL_ADDR: must be host:port such as 127.0.0.1:8080, not "localhost"`},
		{"bad port", nil, map[string]string{"PORTAL_ADDR": "127.0.0.1:99999"}, `PORTAL_ADDR: port must be a number from 0 to 65535, not "99999"`},
		{"bad public url", nil, map[string]string{"PORTAL_PUBLIC_URL": "/portal"}, `PORTAL_PUBLIC_URL: must be an absolute http(s) URL such as https://cpq.example.com, not "/portal"`},
		{"bad demo bool", nil, map[string]string{"PORTAL_DEMO": "yes please"}, `PORTAL_DEMO: must be true or false, not "yes please"`},
		{"bad demo ttl", nil, map[string]string{"PORTAL_DEMO_TOKEN_TTL": "1"}, `PORTAL_DEMO_TOKEN_TTL: must be a positive duration such as 30s, 15m or 12h, not "1"`},
		{"negative signer delay", nil, map[string]string{"PORTAL_DEMO_SIGNER_DELAY": "-5s"}, `PORTAL_DEMO_SIGNER_DELAY: must be a duration such as 45s or 2m, or 0 to turn it off, not "-5s"`},
		{"too many demo customers", nil, map[string]string{"PORTAL_DEMO_CUSTOMERS": "100001"}, `PORTAL_DEMO_CUSTOMERS: must be a whole number from 0 to 10000, not "100001"`},
		{"demo client id without issuer", []string{"-demo"}, map[string]string{"PORTAL_OIDC_ISSUER": ""}, "PORTAL_OIDC_CLIENT_ID: only with PORTAL_OIDC_ISSUER (demo mode's embedded provider has its own client)"},
		{"copy without smtp", nil, map[string]string{"PORTAL_MAIL_COPY_TO": "copies@example.com"}, "PORTAL_MAIL_COPY_TO: only with PORTAL_SMTP_URL (the copies are of the mails it sends)"},
		{"copy without mailbox", nil, map[string]string{"PORTAL_SMTP_URL": "smtp://mail.example.com", "PORTAL_SMTP_FROM": "offers@example.com", "PORTAL_MAIL_COPY_TO": "copies@example.com"},
			"PORTAL_MAIL_COPY_TO: needs the mailbox the copies arrive in (PORTAL_MAIL_COPY_IMAP_URL or PORTAL_MAIL_BOUNCE_IMAP_URL)"},
		{"copy mailbox without copy address", nil, map[string]string{"PORTAL_SMTP_URL": "smtp://mail.example.com", "PORTAL_SMTP_FROM": "offers@example.com",
			"PORTAL_MAIL_COPY_IMAP_URL": "imaps://copies:pw@mail.example.com/INBOX"}, "PORTAL_MAIL_COPY_IMAP_URL: only with PORTAL_MAIL_COPY_TO (the address whose mailbox it is)"},
		{"bad copy address", nil, map[string]string{"PORTAL_MAIL_COPY_TO": "copies"}, `PORTAL_MAIL_COPY_TO: must be an e-mail address such as portal-copies@example.com, not "copies"`},
		{"short copy grace", nil, map[string]string{"PORTAL_MAIL_COPY_GRACE": "10ms"}, `PORTAL_MAIL_COPY_GRACE: must be a duration of at least 1s such as 5m, not "10ms"`},
		{"stray argument", []string{"serve"}, nil, `unexpected argument "serve" (settings are flags like -addr or PORTAL_* variables)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := prodEnv()
			for k, v := range tt.set {
				if v == "" {
					delete(env, k)
				} else {
					env[k] = v
				}
			}
			_, err := loadQuiet(tt.args, env)
			if err == nil {
				t.Fatalf("Load succeeded, want error %q", tt.wantErr)
			}
			if err.Error() != tt.wantErr {
				t.Errorf("error\n got: %s\nwant: %s", err, tt.wantErr)
			}
		})
	}
}

func TestUnknownFlagAndHelp(t *testing.T) {
	t.Parallel()
	if _, err := loadQuiet([]string{"-nope"}, prodEnv()); err == nil || !strings.Contains(err.Error(), "-nope") {
		t.Errorf("unknown flag: err = %v, want it named", err)
	}
	var usage strings.Builder
	_, err := load([]string{"-help"}, getenv(prodEnv()), &usage)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-help: err = %v, want flag.ErrHelp", err)
	}
	for _, want := range []string{"-addr", "PORTAL_ADDR", "-demo", "PORTAL_SESSION_KEYS"} {
		if !strings.Contains(usage.String(), want) {
			t.Errorf("usage does not mention %s:\n%s", want, usage.String())
		}
	}
	if strings.Contains(usage.String(), "-oidc-client-secret ") {
		t.Error("the client secret must not be a flag (it would show in ps)")
	}
}

func TestVersionNeedsNothingElse(t *testing.T) {
	t.Parallel()
	cfg, err := loadQuiet([]string{"-version"}, nil)
	if err != nil || !cfg.ShowVersion {
		t.Errorf("-version: %+v, %v", cfg, err)
	}
}

func TestParseSize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int64
	}{
		{"1", 1},
		{"1048576", 1 << 20},
		{"25MB", 25_000_000},
		{"25mb", 25_000_000},
		{"1GiB", 1 << 30},
		{"1.5 GB", 1_500_000_000},
		{"512KiB", 512 << 10},
		{"2TB", 2_000_000_000_000},
		{"10B", 10},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "MB", "-1MB", "1e3", "0.1", "1 zettabyte", "1..2GB", "99999999TiB"} {
		if got, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", bad, got)
		}
	}
}

func TestTableCoversEverySetting(t *testing.T) {
	t.Parallel()
	table := Table()
	seen := map[string]bool{}
	for _, s := range table {
		if !strings.HasPrefix(s.Env, "PORTAL_") || s.Description == "" {
			t.Errorf("setting %+v lacks the prefix or a description", s)
		}
		seen[s.Env] = true
	}
	for _, env := range []string{"PORTAL_ADDR", "PORTAL_PUBLIC_URL", "PORTAL_V2_API_URL", "PORTAL_OIDC_ISSUER",
		"PORTAL_OIDC_CLIENT_ID", "PORTAL_OIDC_CLIENT_SECRET", "PORTAL_OIDC_CLIENT_SECRET_FILE", "PORTAL_OIDC_SCOPES",
		"PORTAL_SESSION_STORE", "PORTAL_SESSION_KEYS", "PORTAL_REDIS_URL", "PORTAL_SESSION_IDLE_TIMEOUT",
		"PORTAL_SESSION_LIFETIME", "PORTAL_V2_TIMEOUT", "PORTAL_UPLOAD_LIMIT", "PORTAL_CUSTOMER_CACHE_TTL",
		"PORTAL_SHUTDOWN_GRACE", "PORTAL_LOG_FORMAT", "PORTAL_LOG_LEVEL", "PORTAL_TRUSTED_PROXIES",
		"PORTAL_METRICS_ADDR", "PORTAL_DEMO", "PORTAL_DEMO_TOKEN_TTL", "PORTAL_DEMO_CUSTOMERS"} {
		if !seen[env] {
			t.Errorf("Table lacks %s", env)
		}
	}
	// -help lists the flags and, after them, the settings only the environment gives.
	var usage strings.Builder
	if _, err := load([]string{"-help"}, func(string) string { return "" }, &usage); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-help: %v", err)
	}
	for _, want := range []string{"-upload-limit", "PORTAL_UPLOAD_LIMIT", "Only from the environment:\n  PORTAL_OIDC_CLIENT_SECRET\n", "  PORTAL_SESSION_KEYS\n"} {
		if !strings.Contains(usage.String(), want) {
			t.Errorf("-help lacks %q:\n%s", want, usage.String())
		}
	}
}

func TestLogValueHidesSecrets(t *testing.T) {
	t.Parallel()
	cfg, err := loadQuiet(nil, prodEnv())
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	slog.New(slog.NewTextHandler(&out, nil)).Info("config", "config", cfg)
	if strings.Contains(out.String(), "s3cret") || strings.Contains(out.String(), key1) {
		t.Errorf("log line leaks a secret: %s", out.String())
	}
	if !strings.Contains(out.String(), "login.example.com") {
		t.Errorf("log line lacks the issuer: %s", out.String())
	}
}

// "file", the database store's name from when it kept sessions in files, still selects it, so
// deployments that set it explicitly keep working.
func TestSessionStoreFileIsTheDatabaseStore(t *testing.T) {
	t.Parallel()
	env := prodEnv()
	env["PORTAL_SESSION_STORE"] = "file"
	cfg, err := loadQuiet(nil, env)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if cfg.SessionStore != SessionStoreDatabase {
		t.Errorf("SessionStore = %q, want %q", cfg.SessionStore, SessionStoreDatabase)
	}
}
