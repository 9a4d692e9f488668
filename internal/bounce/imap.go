package bounce

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Mailbox is the bounce mailbox as PORTAL_MAIL_BOUNCE_IMAP_URL names it (docs/operations.md,
// "Bounces"):
//
//	imaps://user:password@host:993/INBOX     TLS from the first byte (port 993 by default)
//	imap://user:password@host:143/Bounces    STARTTLS, required (the default for imap://)
//	imap://user:password@host:143?starttls=0 no TLS (a server on the same host, a test server)
//
// The path is the mailbox's name (INBOX when empty). String never shows the password.
type Mailbox struct {
	Host     string
	Port     int
	Username string
	password string
	// TLS is "starttls", "tls" (imaps) or "none".
	TLS string
	// Name is the mailbox (folder) read.
	Name string
}

// ParseIMAPURL reads an IMAP URL. Its errors never repeat the URL (it holds a password).
func ParseIMAPURL(raw string) (Mailbox, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Mailbox{}, errors.New("must be a URL such as imaps://user:password@host:993/INBOX")
	}
	m := Mailbox{Host: u.Hostname(), Name: strings.Trim(u.Path, "/")}
	switch u.Scheme {
	case "imap":
		m.TLS, m.Port = "starttls", 143
		switch v := u.Query().Get("starttls"); v {
		case "", "1", "true":
		case "0", "false":
			m.TLS = "none"
		default:
			return Mailbox{}, fmt.Errorf("starttls must be 1 or 0, not %q", v)
		}
	case "imaps":
		m.TLS, m.Port = "tls", 993
	default:
		return Mailbox{}, errors.New("must start with imaps:// or imap://")
	}
	if m.Host == "" {
		return Mailbox{}, errors.New("names no host")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Mailbox{}, errors.New("has an invalid port")
		}
		m.Port = n
	}
	if u.User == nil || u.User.Username() == "" {
		return Mailbox{}, errors.New("names no user (imaps://user:password@host/INBOX)")
	}
	m.Username = u.User.Username()
	m.password, _ = u.User.Password()
	if m.Name == "" {
		m.Name = "INBOX"
	}
	return m, nil
}

// String names the mailbox without its password.
func (m Mailbox) String() string {
	return fmt.Sprintf("%s@%s:%d/%s (%s)", m.Username, m.Host, m.Port, m.Name, m.TLS)
}

// Addr is the server's host:port.
func (m Mailbox) Addr() string { return netJoin(m.Host, m.Port) }

// Key names the mailbox in the tables of its readers (no password).
func (m Mailbox) Key() string { return m.key() }

// key names the mailbox in the poll's table (no password).
func (m Mailbox) key() string {
	return m.Username + "@" + m.Host + ":" + strconv.Itoa(m.Port) + "/" + m.Name
}
