// Package mailpittest starts Mailpit (scripts/build-mailpit.sh builds it into .cache/mailpit,
// `make deps` runs that) for tests that send real mail, and reads what arrived through its API.
package mailpittest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// Server is a running Mailpit.
type Server struct {
	// SMTPPort is its SMTP port on 127.0.0.1 (no TLS, no authentication); API its HTTP base URL.
	SMTPPort int
	API      string
	cmd      *exec.Cmd
}

// SMTPURL is the portal's PORTAL_SMTP_URL for this server.
func (s *Server) SMTPURL() string {
	return "smtp://127.0.0.1:" + strconv.Itoa(s.SMTPPort) + "?starttls=0"
}

// Binary is Mailpit's path: $MAILPIT or .cache/mailpit/mailpit at the module's root.
func Binary() (string, error) {
	if p := os.Getenv("MAILPIT"); p != "" {
		return p, nil
	}
	_, file, _, _ := runtime.Caller(0)
	p := filepath.Join(filepath.Dir(file), "..", "..", "..", ".cache", "mailpit", "mailpit")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("mailpit is not built (run scripts/build-mailpit.sh or make deps): %w", err)
	}
	return p, nil
}

// FreePort is a TCP port free on 127.0.0.1 now.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Options: SMTPPort 0 picks a free one; AllowedRecipients, when set, is a regular expression
// of the recipients Mailpit accepts (the others are refused with a 5xx answer).
type Options struct {
	SMTPPort          int
	AllowedRecipients string
}

// Start starts Mailpit, stopped at the end of t, and waits until its API answers.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Fatal(err)
	}
	if opts.SMTPPort == 0 {
		opts.SMTPPort = FreePort(t)
	}
	httpPort := FreePort(t)
	args := []string{"--smtp", "127.0.0.1:" + strconv.Itoa(opts.SMTPPort), "--listen", "127.0.0.1:" + strconv.Itoa(httpPort),
		"--database", filepath.Join(t.TempDir(), "mailpit.db"), "--quiet"}
	if opts.AllowedRecipients != "" {
		args = append(args, "--smtp-allowed-recipients", opts.AllowedRecipients)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &Server{SMTPPort: opts.SMTPPort, API: "http://127.0.0.1:" + strconv.Itoa(httpPort), cmd: cmd}
	t.Cleanup(s.Stop)
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(s.API + "/api/v1/messages")
		if err == nil {
			resp.Body.Close()
			if c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(opts.SMTPPort)); err == nil {
				c.Close()
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("mailpit did not answer within 20 s: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop stops Mailpit (again: no-op).
func (s *Server) Stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
		s.cmd = nil
	}
}

// Address is a mail address as Mailpit reports it.
type Address struct{ Name, Address string }

// Summary is a message in Mailpit's list.
type Summary struct {
	ID, MessageID, Subject string
	From                   Address
	To                     []Address
	Attachments            int
}

// Attachment is a part of a message.
type Attachment struct{ PartID, FileName, ContentType string }

// Message is one message in full.
type Message struct {
	ID, MessageID, Subject string
	To                     []Address
	ReplyTo                []Address
	Text, HTML             string
	Attachments            []Attachment
}

// Messages is every message that arrived, newest first.
func (s *Server) Messages(t testing.TB) []Summary {
	t.Helper()
	var out struct{ Messages []Summary }
	s.get(t, "/api/v1/messages?limit=1000", &out)
	return out.Messages
}

// Message reads message id in full.
func (s *Server) Message(t testing.TB, id string) Message {
	t.Helper()
	var m Message
	s.get(t, "/api/v1/message/"+id, &m)
	return m
}

// Part is a part's bytes (an attachment).
func (s *Server) Part(t testing.TB, id, part string) []byte {
	t.Helper()
	resp, err := http.Get(s.API + "/api/v1/message/" + id + "/part/" + part)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("mailpit part %s/%s: %d %v", id, part, resp.StatusCode, err)
	}
	return body
}

// Headers are a message's headers.
func (s *Server) Headers(t testing.TB, id string) map[string][]string {
	t.Helper()
	var h map[string][]string
	s.get(t, "/api/v1/message/"+id+"/headers", &h)
	return h
}

func (s *Server) get(t testing.TB, path string, into any) {
	t.Helper()
	resp, err := http.Get(s.API + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("mailpit %s: %s", path, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		t.Fatalf("mailpit %s: %v", path, err)
	}
}

// WaitFor polls Mailpit until at least n messages arrived (or fails t after timeout), and
// returns them.
func (s *Server) WaitFor(t testing.TB, n int, timeout time.Duration) []Summary {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got := s.Messages(t)
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("mailpit: %d messages arrived within %s, want %d", len(got), timeout, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
