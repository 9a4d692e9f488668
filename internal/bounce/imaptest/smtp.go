package imaptest

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-smtp"
)

// SMTP is a real SMTP server (github.com/emersion/go-smtp) in the test's process that delivers
// locally, as a mail server with the copy mailbox on it does: at the end of DATA it takes the
// message for all its recipients at once, puts the copy recipient's into the IMAP server's INBOX
// (APPEND, before it answers 250) and counts every recipient's delivery by Message-ID.
type SMTP struct {
	Addr   string
	copyTo string
	imap   *Server
	server *smtp.Server

	mu       sync.Mutex
	appender *imapclient.Client
	got      map[string]map[string]int // Message-ID (no brackets) -> recipient -> deliveries
}

// StartSMTP starts the server on a free loopback port, delivering copyTo's messages into s's
// INBOX; it stops when the test ends.
func (s *Server) StartSMTP(t testing.TB, copyTo string) *SMTP {
	t.Helper()
	srv := &SMTP{copyTo: strings.ToLower(copyTo), imap: s, got: map[string]map[string]int{}}
	srv.appender = s.client(t)
	smtpServer := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &smtpSession{srv: srv}, nil }))
	smtpServer.Domain = "localhost"
	// A client killed mid-conversation (the crash tests) is expected: logged with the test.
	smtpServer.ErrorLog = testLogger{t}
	smtpServer.MaxRecipients = 10
	smtpServer.ReadTimeout, smtpServer.WriteTimeout = 10*time.Second, 10*time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Addr, srv.server = ln.Addr().String(), smtpServer
	go func() { _ = smtpServer.Serve(ln) }()
	t.Cleanup(func() {
		_ = smtpServer.Close()
		srv.mu.Lock()
		_ = srv.appender.Close()
		srv.mu.Unlock()
	})
	return srv
}

// URL is the server as PORTAL_SMTP_URL names it (loopback, no TLS).
func (s *SMTP) URL() string { return "smtp://" + s.Addr + "?starttls=0" }

// Deliveries is how many times the message of messageID (with or without brackets) was delivered
// to each recipient (the copy address among them).
func (s *SMTP) Deliveries(messageID string) map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for rcpt, n := range s.got[strings.Trim(messageID, "<> ")] {
		out[rcpt] = n
	}
	return out
}

// Delivered is every delivery so far: Message-ID (no brackets) -> recipient -> deliveries.
func (s *SMTP) Delivered() map[string]map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]map[string]int, len(s.got))
	for id, m := range s.got {
		out[id] = map[string]int{}
		for rcpt, n := range m {
			out[id][rcpt] = n
		}
	}
	return out
}

// deliver takes raw for every recipient of to, the copy into the mailbox first.
func (s *SMTP) deliver(to []string, raw []byte) error {
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 6, 0}, Message: "unreadable message"}
	}
	id := strings.Trim(msg.Header.Get("Message-Id"), "<> ")
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rcpt := range to {
		if strings.ToLower(rcpt) != s.copyTo {
			continue
		}
		if err := s.appendLocked(raw); err != nil {
			// Nothing taken: the client may try again.
			return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "local delivery failed"}
		}
	}
	if s.got[id] == nil {
		s.got[id] = map[string]int{}
	}
	for _, rcpt := range to {
		s.got[id][strings.ToLower(rcpt)]++
	}
	return nil
}

func (s *SMTP) appendLocked(raw []byte) error {
	// The mailbox's user delivers with its own connection: a server's local delivery agent.
	cmd := s.appender.Append("INBOX", int64(len(raw)), &imap.AppendOptions{Time: time.Now()})
	if _, err := cmd.Write(raw); err != nil {
		return err
	}
	if err := cmd.Close(); err != nil {
		return err
	}
	_, err := cmd.Wait()
	return err
}

type smtpSession struct {
	srv *SMTP
	to  []string
}

func (s *smtpSession) Reset()                               { s.to = nil }
func (s *smtpSession) Logout() error                        { return nil }
func (s *smtpSession) Mail(string, *smtp.MailOptions) error { return nil }
func (s *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.to = append(s.to, to)
	return nil
}

func (s *smtpSession) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err // the client went away before the end of DATA: nothing taken
	}
	if len(s.to) == 0 {
		return errors.New("no recipients")
	}
	return s.srv.deliver(s.to, raw)
}
