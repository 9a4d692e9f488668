package i18n

import "context"

type contextKey struct{}

// WithTranslator returns ctx carrying tr; templates and handlers find it with From.
func WithTranslator(ctx context.Context, tr *Translator) context.Context {
	return context.WithValue(ctx, contextKey{}, tr)
}

// From is the translator ctx carries, or nil.
func From(ctx context.Context) *Translator {
	tr, _ := ctx.Value(contextKey{}).(*Translator)
	return tr
}
