// Package imaptest runs a real IMAP server in the test's process (go-imap's in-memory server,
// imapmemserver) holding one user's bounce mailbox, for the tests of internal/bounce and the
// browser tests: mails are put into it over IMAP (APPEND) and read back with their flags.
package imaptest

import (
	"bytes"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
)

// The mailbox's user.
const (
	User     = "bounces"
	Password = "bounce-secret"
)

// Server is a running IMAP server.
type Server struct {
	Addr   string
	server *imapserver.Server
}

// Start starts a server on a free loopback port, with user User and an empty INBOX; it stops
// when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	mem := imapmemserver.New()
	user := imapmemserver.NewUser(User, Password)
	if err := user.Create("INBOX", nil); err != nil {
		t.Fatal(err)
	}
	mem.AddUser(user)
	srv := imapserver.New(&imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return mem.NewSession(), nil, nil
		},
		Caps:         imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapIMAP4rev2: {}},
		InsecureAuth: true, // loopback only: the URL says starttls=0
		Logger:       testLogger{t},
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return &Server{Addr: ln.Addr().String(), server: srv}
}

type testLogger struct{ t testing.TB }

func (l testLogger) Printf(format string, args ...any) { l.t.Logf("imap server: "+format, args...) }

// URL is the mailbox's PORTAL_MAIL_BOUNCE_IMAP_URL (no TLS: loopback).
func (s *Server) URL() string {
	return fmt.Sprintf("imap://%s:%s@%s/INBOX?starttls=0", User, Password, s.Addr)
}

func (s *Server) client(t testing.TB) *imapclient.Client {
	t.Helper()
	c, err := imapclient.DialInsecure(s.Addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Login(User, Password).Wait(); err != nil {
		t.Fatal(err)
	}
	return c
}

// Append puts a message into INBOX, as a mail server delivering it would.
func (s *Server) Append(t testing.TB, raw []byte) {
	t.Helper()
	c := s.client(t)
	defer c.Close()
	cmd := c.Append("INBOX", int64(len(raw)), &imap.AppendOptions{Time: time.Now()})
	if _, err := cmd.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
}

// Message is a message of the mailbox with its flags.
type Message struct {
	UID  imap.UID
	Seen bool
	Raw  []byte
}

// Messages is the mailbox's messages, oldest first (read without setting \Seen).
func (s *Server) Messages(t testing.TB) []Message {
	t.Helper()
	c := s.client(t)
	defer c.Close()
	if _, err := c.Select("INBOX", &imap.SelectOptions{ReadOnly: true}).Wait(); err != nil {
		t.Fatal(err)
	}
	section := &imap.FetchItemBodySection{Peek: true}
	var all imap.SeqSet
	all.AddRange(1, 0)
	bufs, err := c.Fetch(all, &imap.FetchOptions{UID: true, Flags: true, BodySection: []*imap.FetchItemBodySection{section}}).Collect()
	if err != nil {
		return nil // an empty mailbox has no 1:*
	}
	var out []Message
	for _, b := range bufs {
		m := Message{UID: b.UID, Raw: b.FindBodySection(section)}
		for _, f := range b.Flags {
			if f == imap.FlagSeen {
				m.Seen = true
			}
		}
		out = append(out, m)
	}
	return out
}

// Seen reports whether the message holding text (e.g. a Message-ID) is marked \Seen.
func (s *Server) Seen(t testing.TB, text string) bool {
	t.Helper()
	for _, m := range s.Messages(t) {
		if bytes.Contains(m.Raw, []byte(text)) {
			return m.Seen
		}
	}
	t.Fatalf("no message holds %q", text)
	return false
}

func (l testLogger) Println(args ...any) { l.t.Log(append([]any{"smtp server:"}, args...)...) }
