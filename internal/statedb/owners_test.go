package statedb_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestEachTableHasOneOwner holds docs/architecture.md's rule "each table has one owner": no SQL
// string in the portal's code (tests, migrations, the Go ones in migrate.go included, and make
// bench's bulk fill aside) names a table
// outside the packages its row in the document's table of tables names. internal/stateimport, the
// one-time import of an older portal's state, is the documented exception.
func TestEachTableHasOneOwner(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	owners := tableOwners(t, filepath.Join(root, "docs", "architecture.md"))
	if len(owners) < 20 {
		t.Fatalf("docs/architecture.md names %d tables; the table of tables was not read", len(owners))
	}
	// Every table a migration creates has its row in the document.
	created := regexp.MustCompile(`(?i)create table (?:if not exists )?([a-z_]+)`)
	migrations, err := filepath.Glob(filepath.Join("migrations", "*.sql"))
	if err != nil || len(migrations) == 0 {
		t.Fatalf("migrations: %v, %d files", err, len(migrations))
	}
	for _, path := range append(migrations, "migrate.go") { // migrate.go: the Go migrations
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range created.FindAllStringSubmatch(string(b), -1) {
			if _, ok := owners[strings.ToLower(m[1])]; !ok {
				t.Errorf("%s creates %s, which docs/architecture.md's table of tables does not name", path, m[1])
			}
		}
	}
	tables := make([]string, 0, len(owners))
	for name := range owners {
		tables = append(tables, regexp.QuoteMeta(name))
	}
	// A table named where SQL names one: after FROM, JOIN, INTO, UPDATE, TABLE or EXISTS.
	sqlNames := regexp.MustCompile(`(?i)\b(?:from|join|into|update|table|exists)\s+(` + strings.Join(tables, "|") + `)\b`)

	checked := 0
	for _, dir := range []string{"internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			rel, _ := filepath.Rel(root, path)
			pkg := filepath.ToSlash(filepath.Dir(rel))
			if pkg == "internal/stateimport" || strings.HasSuffix(pkg, "test") || rel == filepath.Join("internal", "statedb", "migrate.go") {
				return nil // the documented exception; test-support packages; the Go migrations
			}
			file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			checked++
			ast.Inspect(file, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					return true
				}
				for _, m := range sqlNames.FindAllStringSubmatch(s, -1) {
					if table := strings.ToLower(m[1]); !slices.Contains(owners[table], pkg) {
						t.Errorf("%s: SQL on %s, owned by %v (docs/architecture.md)", rel, table, owners[table])
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 100 {
		t.Fatalf("only %d files checked", checked)
	}
}

// tableOwners reads the table of tables in docs/architecture.md: each row's backticked table names
// and the backticked internal/ packages of its owner column.
func tableOwners(t *testing.T, path string) map[string][]string {
	t.Helper()
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ticked := regexp.MustCompile("`([^`]+)`")
	owners := map[string][]string{}
	inTable := false
	for _, line := range strings.Split(string(doc), "\n") {
		switch {
		case strings.HasPrefix(line, "| tables | owner |"):
			inTable = true
			continue
		case inTable && !strings.HasPrefix(line, "|"):
			inTable = false
		}
		if !inTable || strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			continue
		}
		var pkgs []string
		for _, m := range ticked.FindAllStringSubmatch(cells[2], -1) {
			if strings.HasPrefix(m[1], "internal/") {
				pkgs = append(pkgs, m[1])
			}
		}
		for _, m := range ticked.FindAllStringSubmatch(cells[1], -1) {
			owners[strings.ToLower(m[1])] = pkgs
		}
	}
	return owners
}
