package i18n_test

import (
	"testing"

	"github.com/cpqportal/portal/internal/i18n"
)

// TestEveryKeyUsedAndEveryUsedKeyTranslated scans the repository: a key used in code or templates
// that some catalogue lacks, or a catalogue key nothing uses, fails. (Missing translations and
// placeholders that differ between languages already fail Load.)
func TestEveryKeyUsedAndEveryUsedKeyTranslated(t *testing.T) {
	t.Parallel()
	bundle, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	usage, err := bundle.ScanUsage("../..")
	if err != nil {
		t.Fatal(err)
	}
	if len(usage.Used) < len(bundle.Keys())/2 {
		t.Fatalf("the scan found only %d keys in use of %d: is it reading the sources?", len(usage.Used), len(bundle.Keys()))
	}
	missing, unused := bundle.Problems(usage)
	for _, key := range missing {
		t.Errorf("used in code but missing from the catalogues: %s", key)
	}
	for _, key := range unused {
		t.Errorf("in the catalogues but used nowhere: %s", key)
	}
}
