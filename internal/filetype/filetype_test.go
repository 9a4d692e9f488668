package filetype

import (
	"archive/zip"
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

func randomBytes(n int) []byte {
	rng := rand.New(rand.NewPCG(3, 4))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.UintN(256))
	}
	return b
}

// zipWith is a ZIP whose entries are names in order, the first stored (as ODF wants "mimetype").
func zipWith(t *testing.T, entries ...[2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i, e := range entries {
		method := zip.Deflate
		if i == 0 {
			method = zip.Store
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e[0], Method: method})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(e[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestCheck(t *testing.T) {
	t.Parallel()
	pdf := []byte("%PDF-1.4\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n")
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), randomBytes(20)...)
	docx := zipWith(t, [2]string{"[Content_Types].xml", "<Types/>"}, [2]string{"word/document.xml", "<w:document/>"})
	odt := zipWith(t, [2]string{"mimetype", "application/vnd.oasis.opendocument.text"}, [2]string{"content.xml", "<office/>"})
	ole := append(append([]byte{}, oleMagic...), randomBytes(100)...)
	plainZip := zipWith(t, [2]string{"a.txt", "a"})
	for _, tc := range []struct {
		name, declared string
		content        []byte
		want           Reason // 0: accepted
		kind           string
	}{
		{"annex.pdf", "application/pdf", pdf, 0, "PDF"},
		{"ANNEX.PDF", "application/octet-stream", pdf, 0, "PDF"},
		{"annex.pdf", "", pdf, 0, "PDF"},
		{"fake.pdf", "application/pdf", randomBytes(4096), ContentMismatch, "PDF"},
		{"picture.pdf", "application/pdf", png, ContentMismatch, "PDF"},
		{"picture.png", "image/png", png, 0, "PNG"},
		{"picture.png", "application/pdf", png, DeclaredMismatch, "PNG"},
		{"photo.jpg", "image/jpeg", []byte("\xff\xd8\xff\xe0\x00\x10JFIF"), 0, "JPEG"},
		{"anim.gif", "image/gif", []byte("GIF89a\x01\x00"), 0, "GIF"},
		{"img.webp", "image/webp", []byte("RIFF\x10\x00\x00\x00WEBPVP8 "), 0, "WebP"},
		{"img.webp", "image/webp", []byte("RIFF\x10\x00\x00\x00WAVEfmt "), ContentMismatch, "WebP"},
		{"offer.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", docx, 0, "Word"},
		{"offer.docx", "", plainZip, ContentMismatch, "Word"},
		{"offer.odt", "application/vnd.oasis.opendocument.text", odt, 0, "OpenDocument"},
		{"sheet.ods", "", odt, ContentMismatch, "OpenDocument"},
		{"old.doc", "application/msword", ole, 0, "Word"},
		{"old.xls", "application/vnd.ms-excel", randomBytes(64), ContentMismatch, "Excel"},
		{"notes.txt", "text/plain", []byte("Grüße, 1 €\n"), 0, "Text"},
		{"notes.txt", "text/plain", []byte("a\x00b"), NotText, "Text"},
		{"notes.txt", "text/plain", []byte("caf\xe9"), NotText, "Text"},
		{"prices.csv", "application/vnd.ms-excel", []byte("a;b\n1;2\n"), 0, "CSV"},
		{"prices.csv", "image/png", []byte("a;b\n"), DeclaredMismatch, "CSV"},
		{"tool.exe", "application/octet-stream", []byte("MZ"), UnknownExtension, ""},
		{"noextension", "", pdf, UnknownExtension, ""},
		{"archive.zip", "application/zip", plainZip, UnknownExtension, ""},
	} {
		kind, err := Check(tc.name, tc.declared, tc.content, true)
		var refusal *Refusal
		switch {
		case tc.want == 0 && err != nil:
			t.Errorf("%s (%s): refused: %v", tc.name, tc.declared, err)
		case tc.want != 0 && (!errors.As(err, &refusal) || refusal.Reason != tc.want):
			t.Errorf("%s (%s): %v, want reason %d", tc.name, tc.declared, err, tc.want)
		case kind.Name != tc.kind:
			t.Errorf("%s: kind %q, want %q", tc.name, kind.Name, tc.kind)
		}
	}
}

// The head of a larger text file may end inside a character: that is not a refusal (the stream
// check sees the rest).
func TestCheckIncompleteTextHead(t *testing.T) {
	t.Parallel()
	head := []byte("prezzo 1 €")
	head = head[:len(head)-1] // "€" is three bytes: cut after two
	if _, err := Check("a.txt", "text/plain", head, false); err != nil {
		t.Errorf("an incomplete head: %v", err)
	}
	if _, err := Check("a.txt", "text/plain", head, true); err == nil {
		t.Error("a whole file ending inside a character was accepted")
	}
}

func TestTextStream(t *testing.T) {
	t.Parallel()
	text := []byte(strings.Repeat("Grüße aus Zürich, 1 € 😀\n", 500))
	for _, size := range []int{1, 2, 3, 5, 7, 4096} {
		var s TextStream
		for p := text; len(p) > 0; {
			n := min(size, len(p))
			if err := s.Write(p[:n]); err != nil {
				t.Fatalf("pieces of %d: %v", size, err)
			}
			p = p[n:]
		}
		if err := s.Close(); err != nil {
			t.Errorf("pieces of %d: close: %v", size, err)
		}
	}
	for _, bad := range [][]byte{[]byte("ok\x00"), []byte("ok\xff"), []byte("ok\xe2\x82")} {
		var s TextStream
		err := s.Write(bad)
		if err == nil {
			err = s.Close()
		}
		if !errors.Is(err, ErrNotText) {
			t.Errorf("%q: %v, want ErrNotText", bad, err)
		}
	}
}

func FuzzTextStreamAgreesWithUTF8(f *testing.F) {
	f.Add([]byte("Grüße €"), 3)
	f.Fuzz(func(t *testing.T, data []byte, size int) {
		size = 1 + int(uint(size)%16)
		var s TextStream
		var err error
		for p := data; len(p) > 0 && err == nil; {
			n := min(size, len(p))
			err = s.Write(p[:n])
			p = p[n:]
		}
		if err == nil {
			err = s.Close()
		}
		want := utf8Valid(data)
		if (err == nil) != want {
			t.Errorf("%q in pieces of %d: %v, want valid=%v", data, size, err, want)
		}
	})
}

func utf8Valid(b []byte) bool { return plainText(b, true) }
