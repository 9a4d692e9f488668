package bounce

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"net/textproto"
	"regexp"
	"strings"
)

// Report is what a bounce message says: the original mail's Message-ID and each recipient's
// outcome.
type Report struct {
	// MessageID is the original mail's Message-ID, from the returned message or its headers.
	MessageID string
	// Recipients are the per-recipient fields of the delivery-status part; a non-standard bounce
	// has one with only Action "failed" and the status it quoted (5.0.0 when none).
	Recipients []Recipient
	// Standard: a multipart/report with a message/delivery-status part (RFC 3464).
	Standard bool
}

// Recipient is one per-recipient block of a DSN.
type Recipient struct {
	Final, Original string
	// Action is failed, delayed, delivered, relayed or expanded; Status the RFC 3463 code.
	Action, Status, Diagnostic string
}

// Failed reports whether the recipient's mail will not be delivered.
func (r Recipient) Failed() bool {
	return strings.EqualFold(r.Action, "failed") && strings.HasPrefix(r.Status, "5.")
}

// Delayed reports whether delivery is delayed (the servers still try).
func (r Recipient) Delayed() bool {
	return strings.EqualFold(r.Action, "delayed") || strings.HasPrefix(r.Status, "4.")
}

// ErrNotABounce is Parse's error for a message that is no delivery report of a mail (an answer,
// an auto-reply, spam in the bounce mailbox).
var ErrNotABounce = errors.New("bounce: not a delivery status notification")

// maxParts bounds the MIME parts walked in one message (a report has three).
const maxParts = 50

var (
	statusCode  = regexp.MustCompile(`\b([245])\.(\d{1,3})\.(\d{1,3})\b`)
	quotedMsgID = regexp.MustCompile(`(?im)^[ \t>]*message-id:[ \t]*(<[^>\s]+>)`)
)

// Parse reads a bounce message (at most what r gives: the caller bounds it). A standard DSN
// (multipart/report; report-type=delivery-status) gives its per-recipient fields and the
// Message-ID of its message/rfc822 or text/rfc822-headers part. A non-standard bounce (from a
// mailer daemon or with an empty Return-Path, quoting the original headers in its text) gives
// the quoted Message-ID, a failure and the first status code it quotes.
func Parse(r io.Reader) (Report, error) {
	msg, err := mail.ReadMessage(bufio.NewReader(r))
	if err != nil {
		return Report{}, ErrNotABounce
	}
	mediaType, params, _ := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if mediaType == "multipart/report" && strings.EqualFold(params["report-type"], "delivery-status") && params["boundary"] != "" {
		rep, err := parseReport(msg.Body, params["boundary"])
		if err == nil && rep.MessageID != "" && len(rep.Recipients) > 0 {
			return rep, nil
		}
	}
	if !fromMailerDaemon(msg.Header) {
		return Report{}, ErrNotABounce
	}
	// Non-standard: the whole text (every part, decoded as far as it is plain) quotes the headers.
	text, err := allText(msg.Header, msg.Body, 0)
	if err != nil {
		return Report{}, ErrNotABounce
	}
	m := quotedMsgID.FindSubmatch(text)
	if m == nil {
		return Report{}, ErrNotABounce
	}
	rcpt := Recipient{Action: "failed", Status: "5.0.0", Diagnostic: firstLines(text, 3)}
	if s := statusCode.Find(text); s != nil && s[0] == '5' {
		rcpt.Status = string(s)
	} else if s != nil && s[0] == '4' {
		rcpt.Action, rcpt.Status = "delayed", string(s)
	}
	return Report{MessageID: string(m[1]), Recipients: []Recipient{rcpt}}, nil
}

// fromMailerDaemon reports whether a message comes from a mail system, not a person: an empty
// Return-Path (RFC 5321 4.5.5) or a mailer daemon or postmaster as From.
func fromMailerDaemon(h mail.Header) bool {
	if rp := strings.TrimSpace(h.Get("Return-Path")); rp == "<>" {
		return true
	}
	from := strings.ToLower(h.Get("From"))
	return strings.Contains(from, "mailer-daemon") || strings.Contains(from, "postmaster")
}

// parseReport reads a multipart/report's parts.
func parseReport(body io.Reader, boundary string) (Report, error) {
	rep := Report{Standard: true}
	mr := multipart.NewReader(body, boundary)
	for range maxParts {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return rep, err
		}
		ct, _, _ := mime.ParseMediaType(part.Header.Get("Content-Type"))
		switch ct {
		case "message/delivery-status", "message/global-delivery-status":
			rep.Recipients, err = parseDeliveryStatus(part)
		case "message/rfc822", "text/rfc822-headers", "message/global", "message/global-headers":
			// The returned message, or only its headers: the Message-ID is in its header block.
			var h *mail.Message
			h, err = mail.ReadMessage(bufio.NewReader(part))
			if err == nil {
				rep.MessageID = strings.TrimSpace(h.Header.Get("Message-Id"))
			} else {
				err = nil
			}
		}
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// parseDeliveryStatus reads a message/delivery-status body: the per-message block, then one
// block per recipient (RFC 3464 2.1), each a header block ended by a blank line.
func parseDeliveryStatus(r io.Reader) ([]Recipient, error) {
	tp := textproto.NewReader(bufio.NewReader(r))
	var out []Recipient
	for i := 0; i < maxParts; i++ {
		h, err := tp.ReadMIMEHeader()
		if len(h) > 0 && i > 0 {
			out = append(out, Recipient{
				Final:      address(h.Get("Final-Recipient")),
				Original:   address(h.Get("Original-Recipient")),
				Action:     strings.ToLower(strings.TrimSpace(h.Get("Action"))),
				Status:     statusOf(h.Get("Status")),
				Diagnostic: diagnostic(h.Get("Diagnostic-Code")),
			})
		}
		if err != nil {
			break // io.EOF after the last block
		}
	}
	return out, nil
}

// diagnostic is a Diagnostic-Code's words without its type ("smtp; 550 5.1.1 User unknown" is
// "550 5.1.1 User unknown"), folded lines joined.
func diagnostic(field string) string {
	field = strings.Join(strings.Fields(field), " ")
	if kind, text, ok := strings.Cut(field, ";"); ok && !strings.Contains(kind, " ") {
		field = text
	}
	return strings.TrimSpace(field)
}

// address is the address of a DSN address field ("rfc822; someone@example.org").
func address(field string) string {
	_, addr, ok := strings.Cut(field, ";")
	if !ok {
		addr = field
	}
	return strings.Trim(strings.TrimSpace(addr), "<>")
}

// statusOf is the status code of a Status field ("5.1.1 (comment)").
func statusOf(field string) string {
	if m := statusCode.FindString(field); m != "" {
		return m
	}
	return strings.TrimSpace(field)
}

// allText is the text of a message's plain parts (nested multiparts walked), at most depth 5.
func allText(h mail.Header, body io.Reader, depth int) ([]byte, error) {
	ct, params, _ := mime.ParseMediaType(h.Get("Content-Type"))
	if strings.HasPrefix(ct, "multipart/") && params["boundary"] != "" && depth < 5 {
		var out bytes.Buffer
		mr := multipart.NewReader(body, params["boundary"])
		for range maxParts {
			part, err := mr.NextPart()
			if err != nil {
				break
			}
			t, _ := allText(mail.Header(part.Header), part, depth+1)
			out.Write(t)
			out.WriteByte('\n')
		}
		return out.Bytes(), nil
	}
	if ct != "" && !strings.HasPrefix(ct, "text/") && !strings.HasPrefix(ct, "message/") {
		return nil, nil
	}
	return io.ReadAll(body)
}

// firstLines is the first n non-blank lines of text, joined, as a diagnostic.
func firstLines(text []byte, n int) string {
	var lines []string
	for line := range strings.SplitSeq(string(text), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			lines = append(lines, line)
			if len(lines) == n {
				break
			}
		}
	}
	return strings.Join(lines, " ")
}
