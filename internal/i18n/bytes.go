package i18n

import "math"

// Localized is a message argument written in the reader's language when its message is
// translated (Translator.T and Message.In resolve it): a byte size in an error built where no translator is known.
type Localized interface {
	In(tr *Translator) string
}

// Bytes is a byte count written for people in their language: "512 bytes", "1.5 MiB", "1,5 Mio".
type Bytes int64

// byteUnitKeys are the binary units from KiB up, as the catalogue writes them.
var byteUnitKeys = [...]string{"common.bytes.kib", "common.bytes.mib", "common.bytes.gib", "common.bytes.tib"}

// In writes b with at most one fraction digit (none when it is .0) in tr's language.
func (b Bytes) In(tr *Translator) string {
	const unit = 1 << 10
	if b < unit {
		return tr.T("common.bytes.b", int64(b))
	}
	value, key := float64(b), ""
	for _, k := range byteUnitKeys {
		value /= unit
		key = k
		if value < unit {
			break
		}
	}
	digits := 1
	if rounded := math.Round(value*10) / 10; rounded == math.Trunc(rounded) {
		digits = 0
	}
	return tr.T(key, tr.Decimal(value, digits))
}
