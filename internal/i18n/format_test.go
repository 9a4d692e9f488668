package i18n

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// placeholderArgs are arguments of the kinds msg's verbs ask for, as the code passes them: %d an
// integer, %f/%g/%e a float, %s/%v/%q a string, or (asLocalized) a byte size for %s and %v, which
// T writes in the reader's language. It follows fmt's rule for explicit indexes: %[n]s uses
// argument n and the next plain verb the one after it.
func placeholderArgs(msg string, asLocalized bool) []any {
	kinds := map[int]byte{}
	next, count := 0, 0
	for _, verb := range verbPattern.FindAllString(msg, -1) {
		letter := verb[len(verb)-1]
		if letter == '%' {
			continue
		}
		if open := strings.IndexByte(verb, '['); open >= 0 {
			n, _ := strconv.Atoi(verb[open+1 : strings.IndexByte(verb, ']')])
			next = n - 1
		}
		kinds[next] = letter
		next++
		count = max(count, next)
	}
	args := make([]any, count)
	for i := range args {
		switch kinds[i] {
		case 'd':
			args[i] = int64(1234)
		case 'f', 'g', 'e':
			args[i] = 12.5
		case 's', 'v':
			args[i] = "Sample"
			if asLocalized {
				args[i] = Bytes(1536)
			}
		default:
			args[i] = "Sample"
		}
	}
	return args
}

// Every message of every catalogue formats without a printf complaint ("%!d(string=…)",
// "%!(EXTRA …)", "%!s(MISSING)") given arguments of the kinds its verbs ask for, plain strings
// and Localized byte sizes alike (issue 33: "Uploaded annex.pdf (%!s(i18n.Bytes=385))"). A
// translation whose verbs differ from the source's already fails Load; this catches the
// message whose verbs do not fit the arguments the code gives all its languages.
func TestEveryMessageFormatsWithItsArguments(t *testing.T) {
	t.Parallel()
	b := loadBundle(t)
	raw, err := localeFiles.ReadFile("locales/" + Source.String() + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var source map[string]string
	if err := json.Unmarshal(raw, &source); err != nil {
		t.Fatal(err)
	}
	for _, tag := range Languages {
		tr := b.Translator(tag)
		for _, key := range b.Keys() {
			for _, asLocalized := range []bool{false, true} {
				args := placeholderArgs(source[key], asLocalized)
				got := tr.T(key, args...)
				if strings.Contains(got, "%!") {
					t.Errorf("%s %q with %#v: %q", tag, key, args, got)
				}
				if asLocalized && strings.Contains(got, "i18n.") {
					t.Errorf("%s %q: a Localized argument written as Go: %q", tag, key, got)
				}
			}
		}
	}
}

// A count is said in its language's plural form (Translator.Plural with .one and .other keys),
// never hedged: the batch check said "1 contract(s) were left out" and the home page "Check these 1
// for archiving".
func TestNoMessageHedgesItsPlural(t *testing.T) {
	t.Parallel()
	b := loadBundle(t)
	hedges := regexp.MustCompile(`\p{L}\((?:s|es|e|i|en|n)\)|\p{L}/(?:i|e|s|es|n|en)\b|Vertrag/Verträge|Warenkorb/Warenkörbe`)
	for _, tag := range Languages {
		tr := b.Translator(tag)
		for _, key := range b.Keys() {
			if m := hedges.FindString(tr.T(key)); m != "" {
				t.Errorf("%s %q hedges a plural (%q): use Plural with %s.one and %s.other", tag, key, m, key, key)
			}
		}
	}
}

// T writes a Localized argument in the reader's language, as Message.In does: the upload's toast
// passed its size to T and every language showed "%!s(i18n.Bytes=385)".
func TestTWritesLocalizedArguments(t *testing.T) {
	t.Parallel()
	b := loadBundle(t)
	for _, tt := range []struct {
		tr   *Translator
		want string
	}{
		{b.Translator(Source), "Uploaded annex.pdf (385 bytes)."},
		{b.Translator(Languages[1]), "Caricato annex.pdf (385 byte)."},
	} {
		args := []any{"annex.pdf", Bytes(385)}
		if got := tt.tr.T("attachments.uploaded", args...); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.tr.Lang(), got, tt.want)
		}
		if _, still := args[1].(Bytes); !still {
			t.Errorf("T changed the caller's argument to %T", args[1])
		}
	}
}
