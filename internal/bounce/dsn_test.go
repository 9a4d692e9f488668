package bounce_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/cpqportal/portal/internal/bounce"
	"github.com/cpqportal/portal/internal/bounce/imaptest"
)

// outOfOffice is an auto-reply from a person's mailbox: it quotes the original headers, but it
// is no delivery report and comes from a person.
const outOfOffice = "From: Carla Customer <carla@customer.example.org>\r\n" +
	"To: bounces@portal.example.com\r\n" +
	"Subject: Out of office: Our offer\r\n" +
	"Auto-Submitted: auto-replied\r\n" +
	"\r\n" +
	"I am away until Monday (status 5.1.1 is not mine).\r\n" +
	"> Message-ID: <abc@portal.example.com>\r\n"

// TestBounceParseReadsReportsAndRefusesTheRest: a Postfix DSN gives the original Message-ID and
// the recipient's action, status and diagnostic (failed 5.1.1, delayed 4.4.7); a qmail bounce
// quoting the headers gives its Message-ID and 5.1.1; a person's answer and an out-of-office
// reply, though they quote a Message-ID, are no bounce.
func TestBounceParseReadsReportsAndRefusesTheRest(t *testing.T) {
	const id = "<row-1@portal.example.com>"
	cases := []struct {
		name                     string
		raw                      []byte
		wantErr                  bool
		action, status, contains string
		standard                 bool
	}{
		{"failed DSN", imaptest.DSN(id, "gone@example.org", "failed", "5.1.1", "550 5.1.1 User unknown"), false, "failed", "5.1.1", "User unknown", true},
		{"delayed DSN", imaptest.DSN(id, "slow@example.org", "delayed", "4.4.7", "451 4.4.7 try later"), false, "delayed", "4.4.7", "try later", true},
		{"qmail failure notice", imaptest.NonStandardBounce(id, "gone@example.org"), false, "failed", "5.1.1", "qmail-send", false},
		{"a person's answer", imaptest.Unrelated("Re: Our offer"), true, "", "", "", false},
		{"out of office", []byte(outOfOffice), true, "", "", "", false},
		{"not a message", []byte("\x00\x01garbage"), true, "", "", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := bounce.Parse(bytes.NewReader(tc.raw))
			if tc.wantErr {
				if !errors.Is(err, bounce.ErrNotABounce) {
					t.Fatalf("Parse = %+v, %v; want ErrNotABounce", rep, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rep.MessageID != id || len(rep.Recipients) != 1 || rep.Standard != tc.standard {
				t.Fatalf("report %+v, want Message-ID %s and one recipient", rep, id)
			}
			r := rep.Recipients[0]
			if r.Action != tc.action || r.Status != tc.status || !strings.Contains(r.Diagnostic, tc.contains) || strings.HasPrefix(r.Diagnostic, "smtp;") {
				t.Fatalf("recipient %+v, want %s %s with %q", r, tc.action, tc.status, tc.contains)
			}
			if tc.standard && r.Final == "" {
				t.Fatalf("recipient %+v without its Final-Recipient", r)
			}
		})
	}
}

// FuzzBounceParse: no message makes Parse panic, and a report it accepts names a Message-ID and
// at least one recipient.
func FuzzBounceParse(f *testing.F) {
	f.Add(imaptest.DSN("<a@b>", "c@d.example", "failed", "5.1.1", "550 no"))
	f.Add(imaptest.NonStandardBounce("<a@b>", "c@d.example"))
	f.Add([]byte(outOfOffice))
	f.Fuzz(func(t *testing.T, raw []byte) {
		rep, err := bounce.Parse(bytes.NewReader(raw))
		if err == nil && (rep.MessageID == "" || len(rep.Recipients) == 0) {
			t.Fatalf("accepted %q as %+v", raw, rep)
		}
	})
}
