package i18n

import (
	"context"

	"github.com/bojanz/currency"
	"golang.org/x/text/message"
)

type contextKey struct{}

// WithTranslator returns ctx carrying tr; templates and handlers find it with From.
func WithTranslator(ctx context.Context, tr *Translator) context.Context {
	return context.WithValue(ctx, contextKey{}, tr)
}

// From is the translator ctx carries. Without one (a component rendered on its own in a test) it
// is a catalogue-less English translator: formats work, messages show their keys, never a blank.
func From(ctx context.Context) *Translator {
	if tr, ok := ctx.Value(contextKey{}).(*Translator); ok && tr != nil {
		return tr
	}
	return newTranslator(Source, message.NewPrinter(Source), currency.NewLocale(Source.String()), nil)
}
