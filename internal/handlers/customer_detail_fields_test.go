package handlers

import (
	"encoding/json"
	"testing"
)

// The in-place scanner of objectMembers must cut values exactly where JSON does: strings holding
// brackets, quotes and escapes, escaped keys, white space and numbers at the end of the object.
func TestOtherFieldsTrickyDocument(t *testing.T) {
	t.Parallel()
	raw := json.RawMessage(" {\n\t\"id\" : 1 , \"n\\u0061me\":\"x\", \"note\":\"a } ] \\\" { [\", " +
		"\"tags\": [ {\"k\":\"]\"}, 2.5e3, true ] ,\"address\":{ \"city\":\"R\" , \"zone\" : -4 }, \"last\":12}\n")
	got, err := otherFields(raw, knownCustomerFields, map[string][]string{"address": knownAddressFields})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"note":"a } ] \" { [","tags":[ {"k":"]"}, 2.5e3, true ],"address":{"zone":-4},"last":12}`
	if string(got) != want {
		t.Errorf("other fields\n got %s\nwant %s", got, want)
	}
	if !json.Valid(got) {
		t.Errorf("other fields are not valid JSON: %s", got)
	}
	for _, bad := range []string{`{"a":1,}`, `{"a" 1}`, `{"a":[1}`, `{"a":1} x`} {
		if _, err := otherFields(json.RawMessage(bad), knownCustomerFields, nil); err == nil {
			t.Errorf("malformed %s accepted", bad)
		}
	}
	if got, err := otherFields(json.RawMessage(`[1,2]`), knownCustomerFields, nil); err != nil || got != nil {
		t.Errorf("an array: %s, %v; want none", got, err)
	}
}
