package i18n

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// keyLiteral finds string literals shaped like catalogue keys (dotted lower-case words).
var keyLiteral = regexp.MustCompile(`"([a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+)"`)

// skipDirs hold no text people read; apiclient and v2sim name the v2 operations with dotted words
// (customers dot get) that would look like keys.
var skipDirs = map[string]bool{"node_modules": true, "testdata": true, "e2e": true, "apiclient": true, "v2sim": true}

// Usage is what a scan of the source finds: the keys the code uses and where.
type Usage struct {
	// Used maps each key-shaped literal whose namespace (first segment) the catalogue has to the
	// files that use it.
	Used map[string][]string
}

// ScanUsage reads the Go and templ sources under root (tests and generated _templ.go files
// excluded: a key only tests mention is not used) and collects the literals shaped like keys of
// the catalogue's namespaces. Code passes keys around as plain literals (i18n.T(ctx, "k"),
// i18n.M("k"), badRequest("k"), a struct field), so every literal counts wherever it stands.
func (b *Bundle) ScanUsage(root string) (Usage, error) {
	namespaces := map[string]bool{}
	for _, key := range b.keys {
		ns, _, _ := strings.Cut(key, ".")
		namespaces[ns] = true
	}
	u := Usage{Used: map[string][]string{}}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || skipDirs[name]) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, "_test.go") || strings.HasSuffix(name, "_templ.go") ||
			!(strings.HasSuffix(name, ".go") || strings.HasSuffix(name, ".templ")) {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range keyLiteral.FindAllStringSubmatch(string(src), -1) {
			key := m[1]
			ns, _, _ := strings.Cut(key, ".")
			if namespaces[ns] && !slices.Contains(u.Used[key], path) {
				u.Used[key] = append(u.Used[key], path)
			}
		}
		return nil
	})
	if err != nil {
		return Usage{}, fmt.Errorf("i18n: scan %s: %w", root, err)
	}
	return u, nil
}

// Problems compares the usage with the catalogue: keys used but missing from the catalogue
// (shown as raw keys to people) and keys nobody uses (dead translations), each sorted.
func (b *Bundle) Problems(u Usage) (missing, unused []string) {
	known := map[string]bool{}
	for _, key := range b.keys {
		known[key] = true
		if _, ok := u.Used[key]; !ok {
			unused = append(unused, key)
		}
	}
	for key, files := range u.Used {
		if !known[key] {
			missing = append(missing, key+" (in "+strings.Join(files, ", ")+")")
		}
	}
	slices.Sort(missing)
	return missing, unused
}
