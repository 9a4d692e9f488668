package outbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// SMTP is an SMTP server as PORTAL_SMTP_URL names it (docs/operations.md, "E-mail"):
//
//	smtp://user:password@host:587            STARTTLS, required (the default for smtp://)
//	smtp://host:1025?starttls=0              no TLS (a relay on the same host, a test server)
//	smtps://user:password@host:465           TLS from the first byte
//
// String never shows the password.
type SMTP struct {
	Host     string
	Port     int
	Username string
	password string
	// TLS is "starttls", "tls" (smtps) or "none".
	TLS string
}

// ParseSMTPURL reads an SMTP URL. Its errors never repeat the URL (it holds a password).
func ParseSMTPURL(raw string) (SMTP, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return SMTP{}, errors.New("must be a URL such as smtp://user:password@host:587 or smtps://user:password@host:465")
	}
	s := SMTP{Host: u.Hostname()}
	switch u.Scheme {
	case "smtp":
		s.TLS, s.Port = "starttls", 587
		switch v := u.Query().Get("starttls"); v {
		case "", "1", "true":
		case "0", "false":
			s.TLS, s.Port = "none", 25
		default:
			return SMTP{}, fmt.Errorf("starttls must be 1 or 0, not %q", v)
		}
	case "smtps":
		s.TLS, s.Port = "tls", 465
	default:
		return SMTP{}, errors.New("must start with smtp:// or smtps://")
	}
	if s.Host == "" {
		return SMTP{}, errors.New("names no host")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return SMTP{}, errors.New("has an invalid port")
		}
		s.Port = n
	}
	if u.User != nil {
		s.Username = u.User.Username()
		s.password, _ = u.User.Password()
	}
	return s, nil
}

// String names the server without its password.
func (s SMTP) String() string {
	user := ""
	if s.Username != "" {
		user = s.Username + "@"
	}
	return fmt.Sprintf("%s%s:%d (%s)", user, s.Host, s.Port, s.TLS)
}

// SMTPSender sends through one SMTP server, a connection per message (a message's outcome is
// then its own conversation's).
type SMTPSender struct {
	Server SMTP
	// From is the header sender (PORTAL_SMTP_FROM), and the envelope sender unless ReturnPath is set.
	From string
	// ReturnPath, when set, is the envelope sender (MAIL FROM, the Return-Path the recipient's
	// server sees): where bounces go, the bounce mailbox the portal reads
	// (PORTAL_MAIL_BOUNCE_ADDRESS, internal/bounce).
	ReturnPath string
}

// Send sends m and classifies a failure (SendFailure).
func (s SMTPSender) Send(ctx context.Context, m Message) error {
	msg := gomail.NewMsg()
	if m.FromName != "" {
		if err := msg.FromFormat(m.FromName, s.From); err != nil {
			return &SendFailure{Outcome: Refuse, Text: "the sender address: " + err.Error(), Err: err}
		}
	} else if err := msg.From(s.From); err != nil {
		return &SendFailure{Outcome: Refuse, Text: "the sender address: " + err.Error(), Err: err}
	}
	if s.ReturnPath != "" {
		if err := msg.EnvelopeFrom(s.ReturnPath); err != nil {
			return &SendFailure{Outcome: Refuse, Text: "the bounce address: " + err.Error(), Err: err}
		}
	}
	if err := msg.To(m.Recipient); err != nil {
		return &SendFailure{Outcome: Refuse, Text: "the recipient address: " + err.Error(), Err: err}
	}
	if m.CopyTo != "" {
		// An envelope recipient only (go-mail writes no Bcc header): the server takes the message
		// for it and the recipient at once, or for neither (a refused RCPT ends the attempt).
		if err := msg.Bcc(m.CopyTo); err != nil {
			return &SendFailure{Outcome: Refuse, Text: "the copy address: " + err.Error(), Err: err}
		}
	}
	if m.ReplyTo != "" {
		_ = msg.ReplyTo(m.ReplyTo) // checked when the mail was written; a bad one is left out
	}
	msg.Subject(m.Subject)
	msg.SetMessageIDWithValue(strings.Trim(m.MessageID, "<>"))
	msg.SetDate()
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	if m.HTML != "" {
		msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	}
	if m.AttachmentName != "" {
		msg.AttachReadSeeker(m.AttachmentName, bytes.NewReader(m.Attachment), gomail.WithFileContentType(gomail.ContentType(m.AttachmentType)))
	}
	if m.Lang != "" {
		msg.SetGenHeader(gomail.HeaderContentLang, m.Lang)
	}

	opts := []gomail.Option{gomail.WithTimeout(30 * time.Second)}
	switch s.Server.TLS {
	case "tls":
		opts = append(opts, gomail.WithSSL())
	case "none":
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	}
	if s.Server.Username != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover), gomail.WithUsername(s.Server.Username),
			gomail.WithPassword(s.Server.password))
	}
	// The port last: a TLS policy option may set its own default port.
	opts = append(opts, gomail.WithPort(s.Server.Port))
	client, err := gomail.NewClient(s.Server.Host, opts...)
	if err != nil {
		return &SendFailure{Outcome: Retry, Text: err.Error(), Err: err}
	}
	err = client.DialAndSendWithContext(ctx, msg)
	if err == nil || msg.IsDelivered() {
		return nil // delivered: a failure after the server's 250 (RSET, QUIT) changes nothing
	}
	return classify(err)
}

// classify tells a failed conversation's outcome: the server's 5xx refuses, a failure that ended
// the conversation after the end of DATA was written but before an answer is unclear, anything
// earlier may be tried again.
func classify(err error) *SendFailure {
	var se *gomail.SendError
	if !errors.As(err, &se) {
		return &SendFailure{Outcome: Retry, Text: err.Error(), Err: err}
	}
	text := serverText(se)
	code := se.ErrorCode()
	switch {
	case code >= 500:
		return &SendFailure{Outcome: Refuse, Text: text, Err: err}
	case code >= 400:
		return &SendFailure{Outcome: Retry, Text: text, Err: err}
	case se.Reason == gomail.ErrSMTPDataClose:
		return &SendFailure{Outcome: Unclear, Text: text, Err: err}
	}
	return &SendFailure{Outcome: Retry, Text: text, Err: err}
}

// serverText is a SendError's words for a person: the server's answer when it gave one.
func serverText(se *gomail.SendError) string {
	return se.Error()
}
