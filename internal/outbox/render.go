package outbox

import (
	"bytes"
	"html/template"
	"strings"
)

// Body is what a mail says, in the recipient's language: the person's message (plain text, as
// typed), then a link to the portal and a footer. Render makes its plain-text and HTML parts; the
// HTML escapes everything the person typed (html/template).
type Body struct {
	Lang string
	// Message is the person's text; blank lines separate paragraphs.
	Message string
	// LinkText and LinkURL are the portal's link (LinkURL absolute); Footer a closing line.
	LinkText, LinkURL string
	Footer            string
}

var htmlBody = template.Must(template.New("mail").Parse(`<!DOCTYPE html>
<html lang="{{.Lang}}"><head><meta charset="utf-8"></head>
<body style="font-family: sans-serif; line-height: 1.5; color: #1a1a1a">
{{range .Paragraphs}}<p>{{range $i, $line := .}}{{if $i}}<br>{{end}}{{$line}}{{end}}</p>
{{end}}{{if .LinkURL}}<p><a href="{{.LinkURL}}">{{.LinkText}}</a></p>
{{end}}{{if .Footer}}<p style="color: #555; font-size: 90%">{{.Footer}}</p>
{{end}}</body></html>
`))

// Render is b's plain-text and HTML parts.
func (b Body) Render() (text, html string, err error) {
	msg := strings.ReplaceAll(strings.TrimSpace(b.Message), "\r\n", "\n")
	var t strings.Builder
	t.WriteString(msg)
	if b.LinkURL != "" {
		t.WriteString("\n\n" + b.LinkText + ":\n" + b.LinkURL)
	}
	if b.Footer != "" {
		t.WriteString("\n\n-- \n" + b.Footer)
	}
	t.WriteString("\n")

	var paragraphs [][]string
	for p := range strings.SplitSeq(msg, "\n\n") {
		if p = strings.TrimSpace(p); p != "" {
			paragraphs = append(paragraphs, strings.Split(p, "\n"))
		}
	}
	var h bytes.Buffer
	err = htmlBody.Execute(&h, struct {
		Body
		Paragraphs [][]string
	}{b, paragraphs})
	if err != nil {
		return "", "", err
	}
	return t.String(), h.String(), nil
}
