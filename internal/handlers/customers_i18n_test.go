package handlers

import (
	"testing"

	"github.com/cpqportal/portal/internal/i18n"
)

// testTranslator is the catalogues' translator of lang ("en", "it", ...), for tests of helpers
// that take one.
func testTranslator(t testing.TB, lang string) *i18n.Translator {
	t.Helper()
	bundle, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	tag, ok := bundle.Supported(lang)
	if !ok {
		t.Fatalf("no language %q", lang)
	}
	return bundle.Translator(tag)
}
