package i18n

import (
	"encoding/json"
	"go/ast"
	"go/constant"
	"go/types"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// verbKinds maps each argument a message takes (0-based) to the letter of the verb that writes it,
// following fmt's rule for explicit indexes; count is how many arguments it takes.
func verbKinds(msg string) (kinds map[int]byte, count int) {
	kinds = map[int]byte{}
	next := 0
	for _, verb := range verbPattern.FindAllString(msg, -1) {
		letter := verb[len(verb)-1]
		if letter == '%' {
			continue
		}
		if open := strings.IndexByte(verb, '['); open >= 0 {
			n, _ := strconv.Atoi(verb[open+1 : strings.IndexByte(verb, ']')])
			next = n - 1
		}
		kinds[next] = letter
		next++
		count = max(count, next)
	}
	return kinds, count
}

// Every call that passes a catalogue key and then the message's arguments (T, M, i18n.T, the
// handlers' t and badRequest, the templates' i18n.T…) passes as many as the message takes, each of
// a type its verb writes: an integer for %d, a string (or a Localized value, which T writes in the
// reader's language, or a Stringer) for %s, a float for %f. A call forwarding args... or an
// interface value is not judged. Issue 33 showed "%!s(i18n.Bytes=385)" on every page language.
func TestCallSitesPassTheArgumentsTheirMessagesTake(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the whole module")
	}
	t.Parallel()
	raw, err := localeFiles.ReadFile("locales/" + Source.String() + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var source map[string]string
	if err := json.Unmarshal(raw, &source); err != nil {
		t.Fatal(err)
	}
	cfg := &packages.Config{Dir: "../..", Mode: packages.NeedName | packages.NeedTypes | packages.NeedTypesInfo | packages.NeedSyntax}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		t.Fatal(err)
	}
	var localized *types.Interface
	stringer := types.NewInterfaceType([]*types.Func{types.NewFunc(0, nil, "String",
		types.NewSignatureType(nil, nil, nil, nil, types.NewTuple(types.NewVar(0, nil, "", types.Typ[types.String])), false))}, nil).Complete()
	for _, p := range pkgs {
		if p.PkgPath == "github.com/cpqportal/portal/internal/i18n" {
			localized = p.Types.Scope().Lookup("Localized").Type().Underlying().(*types.Interface)
		}
	}
	if localized == nil {
		t.Fatal("the i18n package was not loaded")
	}
	calls := 0
	for _, p := range pkgs {
		for _, e := range p.Errors {
			t.Fatalf("%s: %v", p.PkgPath, e)
		}
		for _, file := range p.Syntax {
			ast.Inspect(file, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || call.Ellipsis.IsValid() {
					return true
				}
				sig, ok := p.TypesInfo.TypeOf(call.Fun).(*types.Signature)
				if !ok || !sig.Variadic() {
					return true
				}
				keyParam := sig.Params().Len() - 2 // the key is the last parameter before ...any
				if keyParam < 0 || keyParam >= len(call.Args) {
					return true
				}
				keyOf := func(i int) (string, bool) {
					tv := p.TypesInfo.Types[call.Args[i]]
					if tv.Value == nil || tv.Value.Kind() != constant.String {
						return "", false
					}
					_, known := source[constant.StringVal(tv.Value)]
					return constant.StringVal(tv.Value), known
				}
				key, ok := keyOf(keyParam)
				if !ok {
					return true
				}
				args := call.Args[keyParam+1:]
				keys := []string{key}
				// Plural-shaped (n int, one, other string, args ...any): both forms get n first.
				if keyParam >= 2 && isBasic(sig.Params().At(keyParam-1).Type(), types.IsString) &&
					isBasic(sig.Params().At(keyParam-2).Type(), types.IsInteger) {
					if one, ok := keyOf(keyParam - 1); ok {
						keys = append(keys, one)
						args = append([]ast.Expr{call.Args[keyParam-2]}, args...)
					}
				}
				for _, key := range keys {
					calls++
					checkCall(t, p, call, key, source[key], args, localized, stringer)
				}
				return true
			})
		}
	}
	if calls < 500 {
		t.Errorf("only %d calls with a catalogue key found: the scan is not seeing the code", calls)
	}
	t.Logf("%d calls checked", calls)
}

func isBasic(typ types.Type, info types.BasicInfo) bool {
	basic, ok := typ.Underlying().(*types.Basic)
	return ok && basic.Info()&info != 0
}

// checkCall reports a call passing msg's arguments in another number or of a type its verbs do
// not write.
func checkCall(t *testing.T, p *packages.Package, call *ast.CallExpr, key, msg string, args []ast.Expr, localized, stringer *types.Interface) {
	t.Helper()
	where := p.Fset.Position(call.Pos()).String()
	kinds, count := verbKinds(msg)
	if len(args) != count {
		t.Errorf("%s: %q takes %d arguments, the call passes %d", where, key, count, len(args))
		return
	}
	for i, arg := range args {
		typ := p.TypesInfo.TypeOf(arg)
		if typ == nil || types.IsInterface(typ) {
			continue // an any forwarded: not judged
		}
		basic, _ := typ.Underlying().(*types.Basic)
		var fits bool
		switch kinds[i] {
		case 'd':
			fits = basic != nil && basic.Info()&types.IsInteger != 0
		case 's', 'q':
			fits = basic != nil && basic.Info()&types.IsString != 0 ||
				types.Implements(typ, localized) || types.Implements(typ, stringer)
		case 'f', 'g', 'e':
			fits = basic != nil && basic.Info()&types.IsFloat != 0
		default:
			fits = true
		}
		if !fits {
			t.Errorf("%s: %q writes argument %d with %%%c, the call passes a %s", where, key, i+1, kinds[i], typ)
		}
	}
}
