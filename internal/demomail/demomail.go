// Package demomail is the demo's mail server (issue 40): `make run` without PORTAL_SMTP_URL sends
// the portal's e-mail over real SMTP to this catcher on the loopback interface, which keeps the
// last mails in memory so a newcomer can read them on the demo's "Sent mail" page. It is a real
// SMTP server (github.com/emersion/go-smtp), so the outbox's whole path runs as in production; it
// never relays anything anywhere.
package demomail

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-smtp"
)

// Limits of what the catcher keeps.
const (
	// MaxMails is how many mails it keeps (the oldest leave first).
	MaxMails = 200
	// MaxMessageBytes bounds one mail (an offer PDF is well under 1 MB).
	MaxMessageBytes = 16 << 20
)

// Mail is one mail as it arrived.
type Mail struct {
	ID          int
	Received    time.Time
	From        string // the envelope's sender
	To          []string
	Subject     string
	MessageID   string // the Message-ID header, without its angle brackets
	Text        string // the plain-text part (or the body, when it has one part)
	Attachments []Attachment
}

// Attachment is a file a mail carried.
type Attachment struct {
	Name        string
	ContentType string
	Data        []byte
}

// Catcher is the running mail server and what it received.
type Catcher struct {
	server *smtp.Server
	addr   string
	now    func() time.Time

	mu     sync.Mutex
	mails  []Mail // oldest first
	nextID int
	copies *copyBox // ServeCopies; nil: no copy mailbox
}

// Start listens on 127.0.0.1 (a free port) and serves until Close.
func Start() (*Catcher, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("demomail: listen: %w", err)
	}
	c := &Catcher{addr: l.Addr().String(), now: time.Now, nextID: 1}
	s := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &session{catcher: c}, nil }))
	s.Domain = "localhost"
	s.MaxMessageBytes = MaxMessageBytes
	s.MaxRecipients = 50
	s.ReadTimeout, s.WriteTimeout = time.Minute, time.Minute
	c.server = s
	go func() { _ = s.Serve(l) }()
	return c, nil
}

// Addr is the host:port the catcher listens on.
func (c *Catcher) Addr() string { return c.addr }

// URL is the catcher as PORTAL_SMTP_URL names it (loopback, no TLS).
func (c *Catcher) URL() string { return "smtp://" + c.addr + "?starttls=0" }

// Close stops the server.
func (c *Catcher) Close() error {
	c.mu.Lock()
	c.copies.close()
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.server.Shutdown(ctx); err != nil && !errors.Is(err, smtp.ErrServerClosed) {
		return c.server.Close()
	}
	return nil
}

// Mails are the mails kept, newest first.
func (c *Catcher) Mails() []Mail {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Mail, len(c.mails))
	for i, m := range c.mails {
		out[len(c.mails)-1-i] = m
	}
	return out
}

// Mail is the mail of this id, if still kept.
func (c *Catcher) Mail(id int) (Mail, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.mails {
		if m.ID == id {
			return m, true
		}
	}
	return Mail{}, false
}

func (c *Catcher) keep(m Mail) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m.ID, m.Received = c.nextID, c.now()
	c.nextID++
	c.mails = append(c.mails, m)
	if len(c.mails) > MaxMails {
		c.mails = c.mails[len(c.mails)-MaxMails:]
	}
}

// session is one SMTP conversation.
type session struct {
	catcher *Catcher
	from    string
	to      []string
}

func (s *session) Reset()        { s.from, s.to = "", nil }
func (s *session) Logout() error { return nil }

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	s.from = from
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.to = append(s.to, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(io.LimitReader(r, MaxMessageBytes+1))
	if err != nil {
		return err
	}
	if len(raw) > MaxMessageBytes {
		return &smtp.SMTPError{Code: 552, EnhancedCode: smtp.EnhancedCode{5, 3, 4}, Message: "message too big"}
	}
	m, err := parse(raw)
	if err != nil {
		return &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 6, 0}, Message: "unreadable message"}
	}
	m.From = s.from
	s.catcher.mu.Lock()
	box := s.catcher.copies
	s.catcher.mu.Unlock()
	for _, rcpt := range s.to {
		if !box.isCopy(rcpt) {
			m.To = append(m.To, rcpt)
			continue
		}
		// Delivered before the 250, with the rest: the copy is there if and only if the
		// message was taken.
		if err := box.deliver(raw); err != nil {
			return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "copy mailbox unavailable"}
		}
	}
	s.catcher.keep(m)
	return nil
}

var words = new(mime.WordDecoder)

// parse reads a message's subject, its plain text and its attachments.
func parse(raw []byte) (Mail, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return Mail{}, err
	}
	m := Mail{MessageID: strings.Trim(msg.Header.Get("Message-Id"), "<> ")}
	if m.Subject, err = words.DecodeHeader(msg.Header.Get("Subject")); err != nil {
		m.Subject = msg.Header.Get("Subject")
	}
	err = walk(msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), "", msg.Body, &m)
	return m, err
}

// walk reads one part (recursively for multipart ones) into m.
func walk(contentType, encoding, disposition string, body io.Reader, m *Mail) error {
	media, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		media = "text/plain"
	}
	if strings.HasPrefix(media, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextRawPart()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			if err := walk(p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p.Header.Get("Content-Disposition"), p, m); err != nil {
				return err
			}
		}
	}
	data, err := io.ReadAll(decoded(encoding, body))
	if err != nil {
		return err
	}
	_, dparams, _ := mime.ParseMediaType(disposition)
	name := dparams["filename"]
	if name == "" {
		name = params["name"]
	}
	if name != "" || strings.HasPrefix(disposition, "attachment") {
		if decodedName, err := words.DecodeHeader(name); err == nil {
			name = decodedName
		}
		m.Attachments = append(m.Attachments, Attachment{Name: name, ContentType: media, Data: data})
		return nil
	}
	if media == "text/plain" && m.Text == "" {
		m.Text = string(data)
	}
	return nil
}
