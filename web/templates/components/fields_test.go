package components

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/a-h/templ"
)

// TextField, TextArea and Select are written by hand for speed (fields.go); they must write the
// very bytes their templ definitions (components.templ) write, for every kind of field.
func TestHandWrittenFieldsMatchTheirDefinitions(t *testing.T) {
	t.Parallel()
	hostile := `<script>"a" & 'b'</script>`
	fields := []Field{
		{Name: "name", Label: "Name"},
		{Name: "email", Label: "E-mail", Type: "email", Value: "a@b.example", Required: true, Autocomplete: "email"},
		{ID: "owner-7", Name: "ownerId", Label: "Owner", Hint: "A number", Error: "Enter a number", Value: "x"},
		{Name: hostile, Label: hostile, Value: hostile, Hint: hostile, Error: hostile, ID: hostile, Autocomplete: hostile},
		{Name: "q", Label: "Search", Attrs: templ.Attributes{
			"maxlength": "80", "data-search": true, "hidden": false, "hx-get": "/customers?x=1&y=2",
			"tabindex": 3, "size": 2.5, "aria-label": hostile, "data-nil": nil, "data-ptr": &hostile,
		}},
		{Name: "qty", Label: "Quantity", Required: true, Error: "Too many", Attrs: templ.Attributes{"required": false, "id": "override"}},
	}
	options := []Option{{Value: "", Label: "Choose"}, {Value: "x", Label: "Ex"}, {Value: hostile, Label: hostile}}
	render := func(c templ.Component) string {
		t.Helper()
		var buf bytes.Buffer
		if err := c.Render(context.Background(), &buf); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	for _, f := range fields {
		for _, pair := range []struct {
			name      string
			got, want templ.Component
		}{
			{"TextField", TextField(f), textFieldReference(f)},
			{"TextArea", TextArea(f), textAreaReference(f)},
			{"Select", Select(f, options), selectReference(f, options)},
		} {
			if got, want := render(pair.got), render(pair.want); got != want {
				t.Errorf("%s(%+v):\n got %s\nwant %s", pair.name, f, got, want)
			}
		}
	}
}

// JSONTree reads raw JSON whole: white space may follow the value, nothing else.
func TestJSONTreeRefusesTrailingData(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]JSONKind{
		`{"a":1}`:          JSONObject,
		" {\"a\":1} \n\t ": JSONObject,
		`[1,2]`:            JSONArray,
		`"x"`:              JSONString,
		`{"a":1} {"b":2}`:  JSONTruncated,
		`{"a":1}x`:         JSONTruncated,
		"{\"a\":1}\u00a0":  JSONTruncated,
		`{"a":`:            JSONTruncated,
		`1 2`:              JSONTruncated,
	} {
		if got := NewJSONNode(json.RawMessage(raw)).Kind; got != want {
			t.Errorf("NewJSONNode(%q).Kind = %s, want %s", raw, got, want)
		}
	}
}
