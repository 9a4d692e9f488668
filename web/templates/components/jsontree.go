package components

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"github.com/cpqportal/portal/internal/i18n"
)

// JSONKind is the JSON type of a JSONNode.
type JSONKind string

// JSON kinds.
const (
	JSONObject JSONKind = "object"
	JSONArray  JSONKind = "array"
	JSONString JSONKind = "string"
	JSONNumber JSONKind = "number"
	JSONBool   JSONKind = "bool"
	JSONNull   JSONKind = "null"
	// JSONTruncated stands for a subtree deeper than maxJSONDepth, or a value that is not JSON.
	JSONTruncated JSONKind = "truncated"
)

// maxJSONDepth bounds the nesting rendered by JSONTree (payloads come from the v2 API; a
// pathological document must not blow up the page).
const maxJSONDepth = 64

// JSONNode is a JSON value prepared for JSONTree: objects keep their keys in document order
// (sorted for Go maps), scalars are text.
type JSONNode struct {
	Kind    JSONKind
	Text    string      // scalars: the value as JSON spells it (strings unquoted); truncated: a catalogue key
	Entries []JSONEntry // objects
	Items   []JSONNode  // arrays
}

// JSONEntry is one member of an object.
type JSONEntry struct {
	Key   string
	Value JSONNode
}

// NewJSONNode prepares any value for JSONTree: raw JSON (json.RawMessage or []byte) is read with
// its key order kept; decoded JSON (map[string]any, []any, string, float64, json.Number, bool, nil)
// is taken as is; any other Go value is marshalled to JSON first.
func NewJSONNode(value any) JSONNode {
	switch v := value.(type) {
	case json.RawMessage:
		return nodeFromRaw(v)
	case []byte:
		return nodeFromRaw(v)
	}
	return nodeFromValue(value, 0)
}

func nodeFromRaw(raw []byte) JSONNode {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	n, err := decodeNode(dec, 0)
	if err != nil {
		return JSONNode{Kind: JSONTruncated, Text: "components.json.invalid"}
	}
	// Only JSON white space may follow. Checked on the bytes: asking the decoder for one more
	// token builds a syntax error at the end of every document, a twentieth of a customer page's
	// allocations (docs/performance.md).
	for _, b := range raw[dec.InputOffset():] {
		if b != ' ' && b != '\t' && b != '\n' && b != '\r' {
			return JSONNode{Kind: JSONTruncated, Text: "components.json.invalid"} // trailing data
		}
	}
	return n
}

// decodeNode reads one value from the token stream, keeping object key order.
func decodeNode(dec *json.Decoder, depth int) (JSONNode, error) {
	tok, err := dec.Token()
	if err != nil {
		return JSONNode{}, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth >= maxJSONDepth {
			if err := skipRest(dec); err != nil {
				return JSONNode{}, err
			}
			return JSONNode{Kind: JSONTruncated, Text: "components.json.too_deep"}, nil
		}
		switch t {
		case '{':
			n := JSONNode{Kind: JSONObject}
			for dec.More() {
				keyTok, err := dec.Token()
				if err != nil {
					return JSONNode{}, err
				}
				key, _ := keyTok.(string)
				child, err := decodeNode(dec, depth+1)
				if err != nil {
					return JSONNode{}, err
				}
				n.Entries = append(n.Entries, JSONEntry{Key: key, Value: child})
			}
			_, err := dec.Token() // '}'
			return n, err
		case '[':
			n := JSONNode{Kind: JSONArray}
			for dec.More() {
				child, err := decodeNode(dec, depth+1)
				if err != nil {
					return JSONNode{}, err
				}
				n.Items = append(n.Items, child)
			}
			_, err := dec.Token() // ']'
			return n, err
		}
		return JSONNode{}, fmt.Errorf("unexpected %v", t)
	default:
		return scalarNode(t), nil
	}
}

// skipRest consumes the rest of a container whose opening delimiter was just read.
func skipRest(dec *json.Decoder) error {
	level := 1
	for level > 0 {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				level++
			case '}', ']':
				level--
			}
		}
	}
	return nil
}

func scalarNode(v any) JSONNode {
	switch t := v.(type) {
	case nil:
		return JSONNode{Kind: JSONNull, Text: "null"}
	case string:
		return JSONNode{Kind: JSONString, Text: t}
	case bool:
		return JSONNode{Kind: JSONBool, Text: strconv.FormatBool(t)}
	case json.Number:
		return JSONNode{Kind: JSONNumber, Text: t.String()}
	case float64:
		return JSONNode{Kind: JSONNumber, Text: strconv.FormatFloat(t, 'f', -1, 64)}
	}
	return JSONNode{Kind: JSONTruncated, Text: "components.json.unsupported"}
}

func nodeFromValue(value any, depth int) JSONNode {
	if depth >= maxJSONDepth {
		return JSONNode{Kind: JSONTruncated, Text: "components.json.too_deep"}
	}
	switch v := value.(type) {
	case nil, string, bool, json.Number, float64:
		return scalarNode(v)
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		n := JSONNode{Kind: JSONObject}
		for _, k := range keys {
			n.Entries = append(n.Entries, JSONEntry{Key: k, Value: nodeFromValue(v[k], depth+1)})
		}
		return n
	case []any:
		n := JSONNode{Kind: JSONArray}
		for _, item := range v {
			n.Items = append(n.Items, nodeFromValue(item, depth+1))
		}
		return n
	}
	// Any other Go value (structs, typed maps and slices, ints): through its JSON form.
	raw, err := json.Marshal(value)
	if err != nil {
		return JSONNode{Kind: JSONTruncated, Text: "components.json.unrepresentable"}
	}
	return nodeFromRaw(raw)
}

// summary describes a container for its <summary> in tr's language: "3 keys", "1 item".
func (n JSONNode) summary(tr *i18n.Translator) string {
	switch {
	case n.Kind == JSONArray && len(n.Items) == 1:
		return tr.T("components.json.items_one")
	case n.Kind == JSONArray:
		return tr.T("components.json.items", len(n.Items))
	case len(n.Entries) == 1:
		return tr.T("components.json.keys_one")
	}
	return tr.T("components.json.keys", len(n.Entries))
}

func (n JSONNode) empty() bool {
	return (n.Kind == JSONObject && len(n.Entries) == 0) || (n.Kind == JSONArray && len(n.Items) == 0)
}
