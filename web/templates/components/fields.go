package components

import (
	"context"
	"html"
	"io"
	"slices"
	"strings"

	"github.com/a-h/templ"
	templruntime "github.com/a-h/templ/runtime"

	"github.com/cpqportal/portal/internal/i18n"
)

// TextField is a labelled <input> that keeps the user's value and shows its error. It writes
// exactly what textFieldReference (components.templ) does, without templ's generated code:
// that code formats every expression with fmt.Sprint and sorts the control's attributes out of
// a map, and the fields of a customer's page cost a sixth of its rendering (docs/performance.md).
func TextField(f Field) templ.Component {
	return templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		return writeField(ctx, w, f, func(hw *htmlWriter) {
			hw.raw(`<input type="`)
			hw.text(f.inputType())
			hw.raw(`" value="`)
			hw.text(f.Value)
			hw.raw(`"`)
			hw.controlAttrs(ctx, "input", f)
			hw.raw(`>`)
		})
	})
}

// TextArea is a labelled <textarea> that keeps the user's value and shows its error (see
// TextField; its definition is textAreaReference).
func TextArea(f Field) templ.Component {
	return templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		return writeField(ctx, w, f, func(hw *htmlWriter) {
			hw.raw(`<textarea`)
			hw.controlAttrs(ctx, "textarea", f)
			hw.raw(`>`)
			hw.text(f.Value)
			hw.raw(`</textarea>`)
		})
	})
}

// Select is a labelled <select>; the option whose value equals f.Value is selected (see
// TextField; its definition is selectReference).
func Select(f Field, options []Option) templ.Component {
	return templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		return writeField(ctx, w, f, func(hw *htmlWriter) {
			hw.raw(`<select`)
			hw.controlAttrs(ctx, "select", f)
			hw.raw(`>`)
			for _, o := range options {
				hw.raw(`<option value="`)
				hw.text(o.Value)
				hw.raw(`"`)
				if o.Value == f.Value {
					hw.raw(` selected`)
				}
				hw.raw(`>`)
				hw.text(o.Label)
				hw.raw(`</option>`)
			}
			hw.raw(`</select>`)
		})
	})
}

// writeField writes fieldFrame (components.templ) around the control that control writes.
func writeField(ctx context.Context, w io.Writer, f Field, control func(*htmlWriter)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	hw := newHTMLWriter(w)
	if f.Error != "" {
		hw.raw(`<div class="field field--error" data-testid="`)
	} else {
		hw.raw(`<div class="field" data-testid="`)
	}
	hw.text("field-" + f.Name)
	hw.raw(`"><label for="`)
	hw.text(f.InputID())
	hw.raw(`">`)
	hw.text(f.Label)
	hw.raw(` `)
	if f.Required {
		hw.raw(`<span class="required" aria-hidden="true">*</span>`)
	}
	hw.raw(`</label> `)
	if f.Hint != "" {
		hw.raw(`<span class="field__hint" id="`)
		hw.text(f.hintID())
		hw.raw(`">`)
		hw.text(f.Hint)
		hw.raw(`</span> `)
	}
	if f.Error != "" {
		hw.raw(`<span class="field__error" id="`)
		hw.text(f.errorID())
		hw.raw(`" data-testid="field-error"><span class="visually-hidden">`)
		hw.text(i18n.T(ctx, "common.error_prefix"))
		hw.raw(`</span> `)
		hw.text(f.Error)
		hw.raw(`</span>`)
	}
	control(hw)
	hw.raw(`</div>`)
	return hw.err
}

// htmlWriter writes raw markup and escaped text, keeping the first error.
type htmlWriter struct {
	w   io.StringWriter
	out io.Writer
	err error
}

func newHTMLWriter(w io.Writer) *htmlWriter {
	sw, ok := w.(io.StringWriter)
	if !ok {
		sw = stringWriter{w}
	}
	return &htmlWriter{w: sw, out: w}
}

type stringWriter struct{ io.Writer }

func (s stringWriter) WriteString(str string) (int, error) { return s.Write([]byte(str)) }

func (hw *htmlWriter) raw(s string) {
	if hw.err == nil {
		_, hw.err = hw.w.WriteString(s)
	}
}

// text writes s escaped as templ does (html.EscapeString), in element text and attribute values.
func (hw *htmlWriter) text(s string) { hw.raw(html.EscapeString(s)) }

// controlAttrs writes f.controlAttrs() as templ's attribute spread does: sorted by name, strings
// as name="value", true booleans as a bare name, false ones left out, and f.Attrs overriding the
// field's own. Other kinds of value (rare: f.Attrs may hold any) go through templ itself, one at
// a time, in the same order. No map is made: a page has dozens of fields.
func (hw *htmlWriter) controlAttrs(ctx context.Context, element string, f Field) {
	var own [8]controlAttr
	attrs := own[:0]
	set := func(a controlAttr) {
		for i := range attrs {
			if attrs[i].key == a.key {
				attrs[i] = a
				return
			}
		}
		attrs = append(attrs, a)
	}
	set(controlAttr{key: "id", text: f.InputID()})
	set(controlAttr{key: "name", text: f.Name})
	if d := f.describedBy(); d != "" {
		set(controlAttr{key: "aria-describedby", text: d})
	}
	if f.Error != "" {
		set(controlAttr{key: "aria-invalid", text: "true"})
	}
	if f.Required {
		set(controlAttr{key: "required", isFlag: true, flag: true})
		set(controlAttr{key: "aria-required", text: "true"})
	}
	if f.Autocomplete != "" {
		set(controlAttr{key: "autocomplete", text: f.Autocomplete})
	}
	for k, v := range f.Attrs {
		switch v := v.(type) {
		case string:
			set(controlAttr{key: k, text: v})
		case bool:
			set(controlAttr{key: k, isFlag: true, flag: v})
		default:
			set(controlAttr{key: k, isOther: true, other: v})
		}
	}
	slices.SortFunc(attrs, func(a, b controlAttr) int { return strings.Compare(a.key, b.key) })
	for _, a := range attrs {
		switch {
		case a.isOther:
			if hw.err == nil {
				hw.err = templruntime.RenderAttributes(ctx, hw.out, hw.out, element, templ.Attributes{a.key: a.other})
			}
		case a.isFlag:
			if a.flag {
				hw.raw(` `)
				hw.text(a.key)
			}
		default:
			hw.raw(` `)
			hw.text(a.key)
			hw.raw(`="`)
			hw.text(a.text)
			hw.raw(`"`)
		}
	}
}

// controlAttr is one attribute of a field's control: text, a boolean flag, or another value.
type controlAttr struct {
	key     string
	text    string
	isFlag  bool
	flag    bool
	isOther bool
	other   any
}
