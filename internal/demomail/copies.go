package demomail

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
)

// CopyUser is the user of the demo's copy mailbox.
const CopyUser = "copies"

// copyBox is the demo's copy mailbox (docs/mail.md "Exactly once: the copy check"): a real IMAP
// server (go-imap's in-memory imapmemserver) on the loopback interface, into which the catcher
// delivers the copy address's messages, so the portal's copy check runs in the demo as in
// production.
type copyBox struct {
	addr, password, to string
	user               *imapmemserver.User
	server             *imapserver.Server
}

// ServeCopies starts the copy mailbox and makes the catcher deliver copyTo's messages into it (at
// the end of DATA, with the rest of the message: one SMTP server taking a message for all its
// recipients at once); the mails kept for the "Sent mail" page do not list copyTo. It returns the
// mailbox's URL (PORTAL_MAIL_COPY_IMAP_URL: loopback, no TLS, a password of its own). Call it once,
// before the portal sends anything.
func (c *Catcher) ServeCopies(copyTo string) (string, error) {
	secret := make([]byte, 16)
	if _, err := rand.Read(secret); err != nil {
		return "", fmt.Errorf("demomail: copy mailbox password: %w", err)
	}
	box := &copyBox{password: hex.EncodeToString(secret), to: strings.ToLower(copyTo)}
	mem := imapmemserver.New()
	box.user = imapmemserver.NewUser(CopyUser, box.password)
	if err := box.user.Create("INBOX", nil); err != nil {
		return "", fmt.Errorf("demomail: copy mailbox: %w", err)
	}
	mem.AddUser(box.user)
	box.server = imapserver.New(&imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return mem.NewSession(), nil, nil
		},
		Caps:         imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapIMAP4rev2: {}},
		InsecureAuth: true, // loopback only
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("demomail: copy mailbox: listen: %w", err)
	}
	box.addr = l.Addr().String()
	go func() { _ = box.server.Serve(l) }()
	c.mu.Lock()
	c.copies = box
	c.mu.Unlock()
	u := url.URL{Scheme: "imap", User: url.UserPassword(CopyUser, box.password), Host: box.addr, Path: "/INBOX", RawQuery: "starttls=0"}
	return u.String(), nil
}

// isCopy reports whether rcpt is the copy address.
func (b *copyBox) isCopy(rcpt string) bool { return b != nil && strings.ToLower(rcpt) == b.to }

// deliver puts raw into the copy mailbox.
func (b *copyBox) deliver(raw []byte) error {
	_, err := b.user.Append("INBOX", literal{Reader: bytes.NewReader(raw), size: int64(len(raw))}, &imap.AppendOptions{Time: time.Now()})
	return err
}

func (b *copyBox) close() {
	if b != nil {
		_ = b.server.Close()
	}
}

// Copies is how many messages the copy mailbox holds now (the copy check deletes those it
// matched).
func (c *Catcher) Copies() int {
	c.mu.Lock()
	box := c.copies
	c.mu.Unlock()
	if box == nil {
		return 0
	}
	st, err := box.user.Status("INBOX", &imap.StatusOptions{NumMessages: true})
	if err != nil || st.NumMessages == nil {
		return 0
	}
	return int(*st.NumMessages)
}

type literal struct {
	io.Reader
	size int64
}

func (l literal) Size() int64 { return l.size }
