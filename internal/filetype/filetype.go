// Package filetype decides whether an uploaded file is what it claims to be: its name's extension
// picks one of the accepted kinds (docs/documents.md), the type the browser declared must be one
// of that kind's media types (or say nothing: application/octet-stream), and the file's first
// bytes must be that kind's. A file of another extension, or whose content or declared type
// disagrees with its name, is refused with the Reason; nothing about people or pages is known here.
package filetype

import (
	"bytes"
	"errors"
	"mime"
	"path"
	"slices"
	"strings"
	"unicode/utf8"
)

// Kind is an accepted kind of file.
type Kind struct {
	// Name is how people know the kind ("PDF", "Word"), the same in every language.
	Name string
	// MediaType is what the portal declares upstream for it.
	MediaType string
	// extensions are the names' endings (lower case, with the dot); aliases the other media types
	// browsers declare for them.
	extensions []string
	aliases    []string
	// matches reports whether head (the file's first bytes, all of them when complete) is of the kind.
	matches func(head []byte, complete bool) bool
	// text kinds are checked whole, while they stream (Stream).
	text bool
}

// Reason says why a file was refused.
type Reason int

const (
	// UnknownExtension: the name's extension is not an accepted kind's (or there is none).
	UnknownExtension Reason = iota + 1
	// ContentMismatch: the bytes are not of the kind the name says.
	ContentMismatch
	// DeclaredMismatch: the browser declared a media type of another kind.
	DeclaredMismatch
	// NotText: a text file that is not UTF-8 or holds a NUL byte.
	NotText
)

// Refusal is the error of a refused file.
type Refusal struct {
	Reason Reason
	// Kind is the kind the name claims (zero for UnknownExtension).
	Kind Kind
	// Declared is the media type the browser declared (DeclaredMismatch).
	Declared string
}

func (r *Refusal) Error() string {
	switch r.Reason {
	case UnknownExtension:
		return "filetype: the extension is not an accepted kind"
	case DeclaredMismatch:
		return "filetype: declared " + r.Declared + " for a " + r.Kind.Name + " file"
	case NotText:
		return "filetype: not UTF-8 text without NUL bytes"
	}
	return "filetype: the content is not " + r.Kind.Name
}

var (
	zipMagic = []byte("PK\x03\x04")
	oleMagic = []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}
)

func prefix(magic ...string) func([]byte, bool) bool {
	return func(head []byte, _ bool) bool {
		return slices.ContainsFunc(magic, func(m string) bool { return bytes.HasPrefix(head, []byte(m)) })
	}
}

// officeOpenXML is a ZIP with a [Content_Types].xml entry (ECMA-376 part 2), which writers put
// first; the head is searched for its local header's name.
func officeOpenXML(head []byte, _ bool) bool {
	return bytes.HasPrefix(head, zipMagic) && bytes.Contains(head, []byte("[Content_Types].xml"))
}

// openDocument is a ZIP whose first entry is "mimetype", stored, holding the media type
// (OpenDocument 1.2 part 3, 3.3): at offset 30 the name, at 38 the content.
func openDocument(mediaType string) func([]byte, bool) bool {
	return func(head []byte, _ bool) bool {
		return bytes.HasPrefix(head, zipMagic) && len(head) >= 38 &&
			string(head[30:38]) == "mimetype" && bytes.HasPrefix(head[38:], []byte(mediaType))
	}
}

// webP is a RIFF container of form type WEBP.
func webP(head []byte, _ bool) bool {
	return len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP"
}

// plainText is UTF-8 without NUL bytes; an unfinished character at the end of an incomplete head
// is left for the stream check.
func plainText(head []byte, complete bool) bool {
	if !complete {
		for i := 0; i < utf8.UTFMax-1 && len(head) > 0 && !utf8.Valid(head); i++ {
			head = head[:len(head)-1]
		}
	}
	return utf8.Valid(head) && bytes.IndexByte(head, 0) < 0
}

// kinds are the accepted kinds, in the order docs/documents.md lists them.
var kinds = []Kind{
	{Name: "PDF", MediaType: "application/pdf", extensions: []string{".pdf"}, aliases: []string{"application/x-pdf"}, matches: prefix("%PDF-")},
	{Name: "PNG", MediaType: "image/png", extensions: []string{".png"}, matches: prefix("\x89PNG\r\n\x1a\n")},
	{Name: "JPEG", MediaType: "image/jpeg", extensions: []string{".jpg", ".jpeg"}, aliases: []string{"image/pjpeg", "image/jpg"}, matches: prefix("\xff\xd8\xff")},
	{Name: "GIF", MediaType: "image/gif", extensions: []string{".gif"}, matches: prefix("GIF87a", "GIF89a")},
	{Name: "WebP", MediaType: "image/webp", extensions: []string{".webp"}, matches: webP},
	{Name: "Word", MediaType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document", extensions: []string{".docx"}, matches: officeOpenXML},
	{Name: "Excel", MediaType: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", extensions: []string{".xlsx"}, matches: officeOpenXML},
	{Name: "PowerPoint", MediaType: "application/vnd.openxmlformats-officedocument.presentationml.presentation", extensions: []string{".pptx"}, matches: officeOpenXML},
	{Name: "OpenDocument", MediaType: "application/vnd.oasis.opendocument.text", extensions: []string{".odt"}, matches: openDocument("application/vnd.oasis.opendocument.text")},
	{Name: "OpenDocument", MediaType: "application/vnd.oasis.opendocument.spreadsheet", extensions: []string{".ods"}, matches: openDocument("application/vnd.oasis.opendocument.spreadsheet")},
	{Name: "OpenDocument", MediaType: "application/vnd.oasis.opendocument.presentation", extensions: []string{".odp"}, matches: openDocument("application/vnd.oasis.opendocument.presentation")},
	{Name: "Word", MediaType: "application/msword", extensions: []string{".doc"}, matches: prefix(string(oleMagic))},
	{Name: "Excel", MediaType: "application/vnd.ms-excel", extensions: []string{".xls"}, matches: prefix(string(oleMagic))},
	{Name: "PowerPoint", MediaType: "application/vnd.ms-powerpoint", extensions: []string{".ppt"}, matches: prefix(string(oleMagic))},
	{Name: "Text", MediaType: "text/plain; charset=utf-8", extensions: []string{".txt"}, matches: plainText, text: true},
	// Browsers on Windows declare a CSV file as Excel's type, others as text.
	{Name: "CSV", MediaType: "text/csv; charset=utf-8", extensions: []string{".csv"}, matches: plainText, text: true,
		aliases: []string{"text/plain", "application/csv", "text/x-csv", "text/comma-separated-values", "application/vnd.ms-excel"}},
}

// Extensions are the accepted names' endings, for the file picker's accept attribute.
func Extensions() []string {
	var out []string
	for _, k := range kinds {
		out = append(out, k.extensions...)
	}
	return out
}

// unstated are the declared types that say nothing about the file.
var unstated = []string{"", "application/octet-stream", "binary/octet-stream", "application/unknown"}

// Check decides whether a file named fileName, declared by the browser as declared, whose first
// bytes are head (the whole file when complete), is an accepted kind. The error is a *Refusal.
func Check(fileName, declared string, head []byte, complete bool) (Kind, error) {
	ext := strings.ToLower(path.Ext(fileName))
	i := slices.IndexFunc(kinds, func(k Kind) bool { return slices.Contains(k.extensions, ext) })
	if i < 0 || ext == "" {
		return Kind{}, &Refusal{Reason: UnknownExtension}
	}
	kind := kinds[i]
	base, _, err := mime.ParseMediaType(declared)
	if err != nil {
		base = strings.ToLower(strings.TrimSpace(declared))
	}
	own, _, _ := mime.ParseMediaType(kind.MediaType)
	if !slices.Contains(unstated, base) && base != own && !slices.Contains(kind.aliases, base) {
		return kind, &Refusal{Reason: DeclaredMismatch, Kind: kind, Declared: base}
	}
	if !kind.matches(head, complete) {
		if kind.text {
			return kind, &Refusal{Reason: NotText, Kind: kind}
		}
		return kind, &Refusal{Reason: ContentMismatch, Kind: kind}
	}
	return kind, nil
}

// Stream is the check of the whole file as it streams, for the kinds whose every byte counts
// (text); nil for the others, whose first bytes Check has seen.
func (k Kind) Stream() *TextStream {
	if !k.text {
		return nil
	}
	return &TextStream{}
}

// ErrNotText is the error of a text stream that is not UTF-8 or holds a NUL byte.
var ErrNotText = errors.New("filetype: not UTF-8 text without NUL bytes")

// TextStream checks text as it passes in pieces: UTF-8 throughout (a character may be split
// between pieces) and no NUL byte. It copies nothing but a split character.
type TextStream struct {
	pending []byte // the start of a character split at the end of the last piece
}

// Write checks the next piece.
func (s *TextStream) Write(p []byte) error {
	if bytes.IndexByte(p, 0) >= 0 {
		return ErrNotText
	}
	for len(s.pending) > 0 && len(p) > 0 { // finish the split character first
		s.pending, p = append(s.pending, p[0]), p[1:]
		if utf8.FullRune(s.pending) {
			if !utf8.Valid(s.pending) {
				return ErrNotText
			}
			s.pending = s.pending[:0]
		}
	}
	// An unfinished character at the end (at most UTFMax-1 bytes) waits for the next piece.
	for back := 1; back < utf8.UTFMax && back <= len(p); back++ {
		if utf8.RuneStart(p[len(p)-back]) {
			if tail := p[len(p)-back:]; !utf8.FullRune(tail) {
				s.pending, p = append(s.pending, tail...), p[:len(p)-back]
			}
			break
		}
	}
	if !utf8.Valid(p) {
		return ErrNotText
	}
	return nil
}

// Close checks that the text did not end inside a character.
func (s *TextStream) Close() error {
	if len(s.pending) > 0 {
		return ErrNotText
	}
	return nil
}
