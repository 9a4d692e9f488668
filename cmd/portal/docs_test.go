package main

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cpqportal/portal/internal/config"
)

var updateDocs = flag.Bool("update", false, "rewrite the generated parts of docs/operations.md and README.md")

const (
	operationsDoc = "../../docs/operations.md"
	readme        = "../../README.md"
)

const (
	configTableBegin = "<!-- config-table:begin -->\n"
	configTableEnd   = "<!-- config-table:end -->"
)

// TestOperationsDocConfigTable: the configuration references in docs/operations.md and README.md are
// settingsMarkdown() as it is now. `go test ./cmd/portal -run TestOperationsDoc -update` regenerates them.
func TestOperationsDocConfigTable(t *testing.T) {
	for _, path := range []string{operationsDoc, readme} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		doc := string(data)
		begin := strings.Index(doc, configTableBegin)
		end := strings.Index(doc, configTableEnd)
		if begin < 0 || end < begin {
			t.Fatalf("%s lacks the %q ... %q markers", path, configTableBegin, configTableEnd)
		}
		current := doc[begin+len(configTableBegin) : end]
		if current == settingsMarkdown() {
			continue
		}
		if *updateDocs {
			doc = doc[:begin+len(configTableBegin)] + settingsMarkdown() + doc[end:]
			if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("the configuration table in %s is out of date; run: go test ./cmd/portal -run TestOperationsDoc -update", path)
	}
}

// TestOperationsDocMetrics: every portal_* metric defined in the code is documented.
func TestOperationsDocMetrics(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(operationsDoc)
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile(`Name:\s+"(portal_[a-z0-9_]+)"`)
	found := 0
	for _, source := range []string{"../../internal/handlers/metrics.go", "../../internal/telemetry/metrics.go"} {
		code, err := os.ReadFile(source)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range name.FindAllStringSubmatch(string(code), -1) {
			found++
			if !strings.Contains(string(data), "`"+m[1]+"`") {
				t.Errorf("metric %s (%s) is not documented in %s", m[1], source, operationsDoc)
			}
		}
	}
	if found < 10 {
		t.Errorf("found only %d metric definitions; has the code moved?", found)
	}
}

// settingsMarkdown renders config.Table as a Markdown table.
func settingsMarkdown() string {
	var b strings.Builder
	b.WriteString("| Variable | Flag | Default | Meaning |\n|---|---|---|---|\n")
	for _, s := range config.Table() {
		flagName := ""
		if s.Flag != "" {
			flagName = "`-" + s.Flag + "`"
		}
		def := ""
		if s.Default != "" {
			def = "`" + s.Default + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", s.Env, flagName, def, s.Description)
	}
	return b.String()
}

// TestDocsNameEveryInternalPackage: README.md's layout table and docs/architecture.md's table of
// packages have a row for every package under internal/ (test-support packages, whose names end in
// "test", aside; the first cell of a row names the package), so a new package cannot land without
// saying what it is for.
func TestDocsNameEveryInternalPackage(t *testing.T) {
	var packages []string
	err := filepath.WalkDir("../../internal", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || strings.HasSuffix(d.Name(), "test") || d.Name() == "testdata" {
			if err == nil && d.IsDir() && path != "../../internal" {
				return filepath.SkipDir
			}
			return err
		}
		code, err := filepath.Glob(filepath.Join(path, "*.go"))
		if err != nil {
			return err
		}
		for _, f := range code {
			if !strings.HasSuffix(f, "_test.go") {
				rel, _ := filepath.Rel("../..", path)
				packages = append(packages, filepath.ToSlash(rel))
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(packages) < 30 {
		t.Fatalf("found %d packages under internal/: the walk is wrong", len(packages))
	}
	for _, doc := range []string{readme, "../../docs/architecture.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		var firstCells strings.Builder
		for _, line := range strings.Split(string(b), "\n") {
			if cells := strings.Split(line, "|"); len(cells) > 2 && cells[0] == "" {
				firstCells.WriteString(cells[1])
			}
		}
		for _, p := range packages {
			if !strings.Contains(firstCells.String(), "`"+p+"`") {
				t.Errorf("%s has no table row for the package `%s`", doc, p)
			}
		}
	}
}
