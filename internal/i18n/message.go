package i18n

import "context"

// Message is a catalogue key with its arguments, translated later: by the error edge, a toast or
// a template, once the person's language is known. Errors and view models carry Messages, never
// finished English sentences.
type Message struct {
	Key  string
	Args []any
	// Text is shown as it is when Key is empty: text that comes from the v2 API (its error
	// messages, product names) is never translated.
	Text string
}

// M is the Message of key with args. Keys passed to M are checked like those passed to T (the
// catalogue test finds both).
func M(key string, args ...any) Message { return Message{Key: key, Args: args} }

// Verbatim is a Message of text shown as it comes (the v2 API's own words).
func Verbatim(text string) Message { return Message{Text: text} }

// IsZero reports whether m is the zero Message (nothing to show).
func (m Message) IsZero() bool { return m.Key == "" && m.Text == "" }

// In is the message in tr's language (T writes Localized arguments in that language).
func (m Message) In(tr *Translator) string {
	if m.Key == "" {
		return m.Text
	}
	return tr.T(m.Key, m.Args...)
}

// Msg is m in ctx's language, for templates: { i18n.Msg(ctx, vm.Error) }.
func Msg(ctx context.Context, m Message) string { return m.In(From(ctx)) }

// T translates key in ctx's language (templates call it as { i18n.T(ctx, "nav.customers") }).
func T(ctx context.Context, key string, args ...any) string { return From(ctx).T(key, args...) }

// Lang is ctx's language code for <html lang>.
func Lang(ctx context.Context) string { return From(ctx).Lang() }
