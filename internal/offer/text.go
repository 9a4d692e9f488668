package offer

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
)

// Text is the text an offer shows, one shown string a line, in the order it is drawn. It reads
// the PDFs Make writes (content streams, compressed or not, with text in the embedded fonts'
// UTF-16 encoding), so tests and the browser tests can check what a customer reads; it is not a
// general PDF reader.
func Text(pdf []byte) (string, error) {
	if !bytes.HasPrefix(pdf, []byte("%PDF-")) {
		return "", fmt.Errorf("offer: not a PDF")
	}
	var out strings.Builder
	rest := pdf
	for {
		start := bytes.Index(rest, []byte("stream"))
		if start < 0 {
			break
		}
		dict := rest[:start]
		if i := bytes.LastIndex(dict, []byte("<<")); i >= 0 {
			dict = dict[i:]
		}
		body := rest[start+len("stream"):]
		body = bytes.TrimPrefix(body, []byte("\r"))
		body = bytes.TrimPrefix(body, []byte("\n"))
		end := bytes.Index(body, []byte("endstream"))
		if end < 0 {
			return "", fmt.Errorf("offer: a stream has no end")
		}
		content := body[:end]
		rest = body[end+len("endstream"):]
		if bytes.HasPrefix(bytes.TrimSpace(dict), []byte("<<")) && bytes.Contains(dict, []byte("/Length1")) {
			continue // an embedded font
		}
		if bytes.Contains(dict, []byte("/FlateDecode")) {
			zr, err := zlib.NewReader(bytes.NewReader(content))
			if err != nil {
				continue
			}
			content, err = io.ReadAll(zr)
			if err != nil {
				continue
			}
		}
		if !bytes.Contains(content, []byte("Tj")) {
			continue
		}
		showStrings(content, &out)
	}
	return out.String(), nil
}

// showStrings writes the literal strings shown with Tj in a content stream, one a line.
func showStrings(content []byte, out *strings.Builder) {
	for i := 0; i < len(content); i++ {
		if content[i] != '(' {
			continue
		}
		raw, next := literal(content, i+1)
		i = next
		if !bytes.HasPrefix(bytes.TrimLeft(content[next+1:], " "), []byte("Tj")) {
			continue
		}
		out.WriteString(decodeUTF16(raw))
		out.WriteByte('\n')
	}
}

// literal reads a PDF literal string from content[i:] (after its opening parenthesis) and
// returns its bytes and the index of its closing parenthesis.
func literal(content []byte, i int) ([]byte, int) {
	var raw []byte
	depth := 0
	for ; i < len(content); i++ {
		c := content[i]
		switch {
		case c == '\\' && i+1 < len(content):
			i++
			switch e := content[i]; e {
			case 'n':
				raw = append(raw, '\n')
			case 'r':
				raw = append(raw, '\r')
			case 't':
				raw = append(raw, '\t')
			case 'b':
				raw = append(raw, '\b')
			case 'f':
				raw = append(raw, '\f')
			default:
				if e >= '0' && e <= '7' {
					v := 0
					for n := 0; n < 3 && i < len(content) && content[i] >= '0' && content[i] <= '7'; n++ {
						v = v*8 + int(content[i]-'0')
						i++
					}
					i--
					raw = append(raw, byte(v))
				} else {
					raw = append(raw, e)
				}
			}
		case c == '(':
			depth++
			raw = append(raw, c)
		case c == ')':
			if depth == 0 {
				return raw, i
			}
			depth--
			raw = append(raw, c)
		default:
			raw = append(raw, c)
		}
	}
	return raw, i
}

// decodeUTF16 decodes the big-endian UTF-16 the embedded fonts' text is written in.
func decodeUTF16(raw []byte) string {
	raw = bytes.TrimPrefix(raw, []byte{0xfe, 0xff})
	if len(raw)%2 != 0 {
		return string(raw)
	}
	units := make([]uint16, len(raw)/2)
	for i := range units {
		units[i] = uint16(raw[2*i])<<8 | uint16(raw[2*i+1])
	}
	return string(utf16.Decode(units))
}
