package layout

import (
	"context"
	"io"
	"strings"

	"github.com/a-h/templ"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/web/templates/palette"
)

// paletteTrigger and paletteDialog are the header's "Go to" control and the command palette,
// rendered once per language: they depend on nothing else, and rendering them (2 kB, much of it
// attributes templ escapes) was a few per cent of every page's CPU (docs/performance.md, issue 43).
var (
	paletteTrigger = perLanguage("palette trigger", palette.Trigger())
	paletteDialog  = perLanguage("palette dialog", palette.Dialog())
)

// languageButtons is languageButtonsOf(choices) rendered once per language and set of choices
// (one set in a process: the bundle's).
func languageButtons(choices []i18n.Choice) templ.Component {
	var key strings.Builder
	key.WriteString("language buttons")
	for _, c := range choices {
		key.WriteString(" ")
		key.WriteString(c.Code)
		key.WriteString("=")
		key.WriteString(c.Name)
	}
	return perLanguage(key.String(), languageButtonsOf(choices))
}

// perLanguage is c rendered once per language (the translator's Derived cache) and written as
// those bytes afterwards. c must depend on the language alone: it is rendered with a context that
// holds nothing but the translator.
func perLanguage(name string, c templ.Component) templ.Component {
	return templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		text := i18n.From(ctx).Derived(name, func(tr *i18n.Translator) string {
			var b strings.Builder
			// Cannot fail: the writer is a strings.Builder and these components return no error.
			_ = c.Render(i18n.WithTranslator(context.Background(), tr), &b)
			return b.String()
		})
		_, err := io.WriteString(w, text)
		return err
	})
}
