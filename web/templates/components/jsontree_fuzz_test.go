package components

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// referenceNode is how JSONTree read raw JSON before it used jsonscan: encoding/json's token
// stream, the oracle the scanner must agree with.
func referenceNode(raw []byte) JSONNode {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	n, err := referenceDecode(dec, 0)
	if err != nil {
		return JSONNode{Kind: JSONTruncated, Text: "components.json.invalid"}
	}
	for _, b := range raw[dec.InputOffset():] {
		if b != ' ' && b != '\t' && b != '\n' && b != '\r' {
			return JSONNode{Kind: JSONTruncated, Text: "components.json.invalid"}
		}
	}
	return n
}

func referenceDecode(dec *json.Decoder, depth int) (JSONNode, error) {
	tok, err := dec.Token()
	if err != nil {
		return JSONNode{}, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return scalarNode(tok), nil
	}
	if depth >= maxJSONDepth {
		for level := 1; level > 0; {
			tok, err := dec.Token()
			if err != nil {
				return JSONNode{}, err
			}
			switch tok {
			case json.Delim('{'), json.Delim('['):
				level++
			case json.Delim('}'), json.Delim(']'):
				level--
			}
		}
		return JSONNode{Kind: JSONTruncated, Text: "components.json.too_deep"}, nil
	}
	n := JSONNode{Kind: JSONArray}
	if d == '{' {
		n.Kind = JSONObject
	}
	for dec.More() {
		key := ""
		if d == '{' {
			tok, err := dec.Token()
			if err != nil {
				return JSONNode{}, err
			}
			key, _ = tok.(string)
		}
		child, err := referenceDecode(dec, depth+1)
		if err != nil {
			return JSONNode{}, err
		}
		if d == '{' {
			n.Entries = append(n.Entries, JSONEntry{Key: key, Value: child})
		} else {
			n.Items = append(n.Items, child)
		}
	}
	_, err = dec.Token()
	return n, err
}

// FuzzJSONTreeMatchesEncodingJSON: the tree read by the scanner is the one encoding/json's tokens
// give, for valid and invalid documents alike (invalid: both say so).
func FuzzJSONTreeMatchesEncodingJSON(f *testing.F) {
	for _, seed := range []string{
		`{"zeta": 1, "alpha": {"name": "x\u00e9\n\"q\"", "ok": true, "none": null}, "list": [10, "x", {"deep": [1.50, -0.0e+3]}], "empty": {}, "nothing": []}`,
		`[1,2]`, `"x"`, `true`, `false`, `null`, `-12.5E-3`, " {\"a\":1} \n\t ",
		`{"a":1} {"b":2}`, `{"a":1}x`, "{\"a\":1}\u00a0", `{"a":`, `1 2`, `01`, `[1,]`, `{"a" 1}`, `tru`, "\"\xff\xfe\"", `"\ud800"`,
		`{"a":1,"a":2}`, ``, ` `, `[`, `]`, `{"":{"":[]}}`,
		strings.Repeat("[", maxJSONDepth+3) + strings.Repeat("]", maxJSONDepth+3),
		strings.Repeat(`{"k":`, maxJSONDepth+1) + "1" + strings.Repeat("}", maxJSONDepth+1),
		strings.Repeat("[", maxJSONDepth+1) + "x" + strings.Repeat("]", maxJSONDepth+1),
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, want := nodeFromRaw(raw), referenceNode(raw)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n got %s\nwant %s", raw, dump(got), dump(want))
		}
	})
}

func dump(n JSONNode) string { return fmt.Sprintf("%+v", n) }
