// Command i18ncheck is the catalogue check of `make i18n`: it scans the Go and templ sources for
// the catalogue keys they use and reports the keys missing from the catalogues (people would see
// a raw key) and the keys nobody uses. Loading the bundle also checks that every language has the
// source's keys with the same placeholders. It exits 1 on any problem.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/cpqportal/portal/internal/i18n"
)

func main() {
	root := flag.String("root", ".", "the repository to scan")
	flag.Parse()
	if err := run(*root); err != nil {
		fmt.Fprintln(os.Stderr, "i18ncheck:", err)
		os.Exit(1)
	}
}

func run(root string) error {
	bundle, err := i18n.Load()
	if err != nil {
		return err
	}
	usage, err := bundle.ScanUsage(root)
	if err != nil {
		return err
	}
	missing, unused := bundle.Problems(usage)
	for _, key := range missing {
		fmt.Println("missing from the catalogues:", key)
	}
	for _, key := range unused {
		fmt.Println("in the catalogues, used nowhere:", key)
	}
	if len(missing)+len(unused) > 0 {
		return fmt.Errorf("%d keys missing, %d unused (catalogues: internal/i18n/locales/*.json)", len(missing), len(unused))
	}
	fmt.Printf("i18ncheck: %d keys, all used, none missing, in %d languages\n", len(bundle.Keys()), len(i18n.Languages))
	return nil
}
