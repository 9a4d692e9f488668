package imaptest

import (
	"fmt"
	"strings"
	"time"
)

// DSN is a delivery status notification as Postfix writes it (RFC 3464 multipart/report): a
// human part, the message/delivery-status part with one recipient's block (action "failed" or
// "delayed", status such as 5.1.1 or 4.4.7) and the returned message's headers
// (text/rfc822-headers) carrying messageID.
func DSN(messageID, recipient, action, status, diagnostic string) []byte {
	date := time.Now().UTC().Format(time.RFC1123Z)
	domain := recipient[strings.LastIndex(recipient, "@")+1:]
	human := "I'm sorry to have to inform you that your message could not\r\nbe delivered to one or more recipients."
	subject := "Undelivered Mail Returned to Sender"
	if action == "delayed" {
		human = "This is a warning only; you do not need to resend your message.\r\nDelivery will be retried."
		subject = "Delayed Mail (still being retried)"
	}
	return fmt.Appendf(nil, "Return-Path: <>\r\n"+
		"Date: %[1]s\r\n"+
		"From: MAILER-DAEMON@mx.%[2]s (Mail Delivery System)\r\n"+
		"Subject: %[3]s\r\n"+
		"To: bounces@portal.example.com\r\n"+
		"Auto-Submitted: auto-replied\r\n"+
		"MIME-Version: 1.0\r\n"+
		"Content-Type: multipart/report; report-type=delivery-status;\r\n\tboundary=\"B0UNCE.1234/mx.%[2]s\"\r\n"+
		"Message-Id: <dsn-%[4]d@mx.%[2]s>\r\n"+
		"\r\n"+
		"This is a MIME-encapsulated message.\r\n"+
		"\r\n"+
		"--B0UNCE.1234/mx.%[2]s\r\n"+
		"Content-Description: Notification\r\n"+
		"Content-Type: text/plain; charset=us-ascii\r\n"+
		"\r\n"+
		"This is the mail system at host mx.%[2]s.\r\n\r\n%[5]s\r\n\r\n<%[6]s>: %[7]s\r\n"+
		"\r\n"+
		"--B0UNCE.1234/mx.%[2]s\r\n"+
		"Content-Description: Delivery report\r\n"+
		"Content-Type: message/delivery-status\r\n"+
		"\r\n"+
		"Reporting-MTA: dns; mx.%[2]s\r\n"+
		"X-Postfix-Queue-ID: 4ABCD1234\r\n"+
		"Arrival-Date: %[1]s\r\n"+
		"\r\n"+
		"Final-Recipient: rfc822; %[6]s\r\n"+
		"Original-Recipient: rfc822;%[6]s\r\n"+
		"Action: %[8]s\r\n"+
		"Status: %[9]s\r\n"+
		"Remote-MTA: dns; mx.%[2]s\r\n"+
		"Diagnostic-Code: smtp; %[7]s\r\n"+
		"\r\n"+
		"--B0UNCE.1234/mx.%[2]s\r\n"+
		"Content-Description: Undelivered Message Headers\r\n"+
		"Content-Type: text/rfc822-headers\r\n"+
		"\r\n"+
		"Return-Path: <bounces@portal.example.com>\r\n"+
		"From: Rita Rep <offers@portal.example.com>\r\n"+
		"To: %[6]s\r\n"+
		"Subject: Our offer\r\n"+
		"Message-ID: %[10]s\r\n"+
		"Date: %[1]s\r\n"+
		"\r\n"+
		"--B0UNCE.1234/mx.%[2]s--\r\n",
		date, domain, subject, time.Now().UnixNano(), human, recipient, diagnostic, action, status, messageID)
}

// NonStandardBounce is a bounce without a delivery-status part, as qmail and some hosted
// services send: a text that names the failure and quotes the original headers.
func NonStandardBounce(messageID, recipient string) []byte {
	return fmt.Appendf(nil, "Return-Path: <>\r\n"+
		"From: MAILER-DAEMON@mail.example.net\r\n"+
		"To: bounces@portal.example.com\r\n"+
		"Subject: failure notice\r\n"+
		"Message-ID: <qmail-%[3]d@mail.example.net>\r\n"+
		"Content-Type: text/plain; charset=us-ascii\r\n"+
		"\r\n"+
		"Hi. This is the qmail-send program at mail.example.net.\r\n"+
		"I'm afraid I wasn't able to deliver your message to the following addresses.\r\n"+
		"This is a permanent error; I've given up. Sorry it didn't work out.\r\n"+
		"\r\n"+
		"<%[1]s>:\r\n"+
		"Sorry, no mailbox here by that name. (#5.1.1)\r\n"+
		"\r\n"+
		"--- Below this line is a copy of the message.\r\n"+
		"\r\n"+
		"Return-Path: <bounces@portal.example.com>\r\n"+
		"To: %[1]s\r\n"+
		"Subject: Our offer\r\n"+
		"Message-ID: %[2]s\r\n"+
		"\r\n"+
		"Dear customer,\r\n",
		recipient, messageID, time.Now().UnixNano())
}

// Unrelated is a mail a person sent to the bounce address (an answer, an auto-reply): no report.
func Unrelated(subject string) []byte {
	return fmt.Appendf(nil, "From: Carla Customer <carla@customer.example.org>\r\n"+
		"To: bounces@portal.example.com\r\n"+
		"Subject: %s\r\n"+
		"Message-ID: <reply-%d@customer.example.org>\r\n"+
		"In-Reply-To: <someone@portal.example.com>\r\n"+
		"Content-Type: text/plain; charset=utf-8\r\n"+
		"\r\n"+
		"Thanks for the offer, we will look at it next week.\r\n"+
		"> Message-ID: <quoted@portal.example.com>\r\n", subject, time.Now().UnixNano())
}
