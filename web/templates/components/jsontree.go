package components

import (
	"bytes"
	"encoding/json"
	"io"
	"sort"
	"strconv"

	"github.com/cpqportal/portal/internal/i18n"
	"github.com/cpqportal/portal/internal/jsonscan"
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
	// jsonscan, not encoding/json's Decoder.Token: a token there is an interface value and an
	// allocation, a twentieth of a customer page's CPU (docs/performance.md).
	s := jsonscan.New(bytes.NewReader(raw), min(len(raw)+1, maxScanBuffer))
	n, err := scanNode(s, 0)
	if err == nil {
		// Only JSON white space may follow the value.
		if _, err = s.Peek(); err == io.EOF {
			return n
		}
	}
	return JSONNode{Kind: JSONTruncated, Text: "components.json.invalid"}
}

// maxScanBuffer bounds the scanner's buffer for a large document (it reads on through it).
const maxScanBuffer = 64 << 10

// scanNode reads one value, keeping object key order.
func scanNode(s *jsonscan.Scanner, depth int) (JSONNode, error) {
	c, err := s.Peek()
	if err == io.EOF {
		return JSONNode{}, io.ErrUnexpectedEOF
	}
	if err != nil {
		return JSONNode{}, err
	}
	switch c {
	case '{', '[':
		if depth >= maxJSONDepth {
			if err := s.Skip(); err != nil {
				return JSONNode{}, err
			}
			return JSONNode{Kind: JSONTruncated, Text: "components.json.too_deep"}, nil
		}
		if err := s.Enter(c); err != nil {
			return JSONNode{}, err
		}
		if c == '{' {
			return scanObject(s, depth)
		}
		return scanArray(s, depth)
	case '"':
		text, err := s.String()
		return JSONNode{Kind: JSONString, Text: string(text)}, err
	case 't', 'f':
		b, err := s.Bool()
		return JSONNode{Kind: JSONBool, Text: strconv.FormatBool(b)}, err
	case 'n':
		_, err := s.Null()
		return JSONNode{Kind: JSONNull, Text: "null"}, err
	}
	text, err := s.Number()
	return JSONNode{Kind: JSONNumber, Text: string(text)}, err
}

func scanObject(s *jsonscan.Scanner, depth int) (JSONNode, error) {
	n := JSONNode{Kind: JSONObject}
	for first := true; ; first = false {
		more, err := s.More('}', first)
		if err != nil || !more {
			return n, err
		}
		key, err := s.Key()
		if err != nil {
			return JSONNode{}, err
		}
		name := string(key)
		child, err := scanNode(s, depth+1)
		if err != nil {
			return JSONNode{}, err
		}
		n.Entries = append(n.Entries, JSONEntry{Key: name, Value: child})
	}
}

func scanArray(s *jsonscan.Scanner, depth int) (JSONNode, error) {
	n := JSONNode{Kind: JSONArray}
	for first := true; ; first = false {
		more, err := s.More(']', first)
		if err != nil || !more {
			return n, err
		}
		child, err := scanNode(s, depth+1)
		if err != nil {
			return JSONNode{}, err
		}
		n.Items = append(n.Items, child)
	}
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
