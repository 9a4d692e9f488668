package sheetread

import (
	"context"
	"encoding/xml"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// A workbook stores a date as a number (days since 30 December 1899) in a cell whose style has a
// date format: read raw, a date in a column of postal codes was 43538. A date cell is read as the
// file shows it, formatted by its format code (the first section; built-in formats as Excel shows
// them in English), so a person recognises it and a reader can tell it is no number.

// builtinDateFormats are the built-in number formats that are dates (ECMA-376 18.8.30), as Excel
// shows them in English.
var builtinDateFormats = map[int]string{14: "m/d/yyyy", 15: "d-mmm-yy", 16: "d-mmm", 17: "mmm-yy", 22: "m/d/yyyy h:mm"}

// dateStyles reads the workbook's styles part: the date format code of each cell style (cellXfs,
// by index; "" for a style that is no date), at most lim.MaxCells styles.
func (w *workbook) dateStyles(ctx context.Context, name string, lim Limits) ([]string, error) {
	if name == "" {
		return nil, nil
	}
	d, c, err := w.open(name)
	if d == nil || err != nil {
		return nil, err
	}
	defer c.Close()
	custom := map[int]string{}
	var out []string
	inXfs := false
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, partError(err, 0)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			switch el.Name.Local {
			case "numFmt":
				if id, err := strconv.Atoi(attr(el, "numFmtId")); err == nil && len(custom) < lim.MaxCells {
					custom[id] = attr(el, "formatCode")
				}
			case "cellXfs":
				inXfs = true
			case "xf":
				if !inXfs {
					continue
				}
				if len(out) >= lim.MaxCells {
					return nil, &Error{Kind: TooManyCells, Limit: int64(lim.MaxCells)}
				}
				if len(out)%1024 == 0 && ctx.Err() != nil {
					return nil, contextError(ctx, 0)
				}
				id, _ := strconv.Atoi(attr(el, "numFmtId"))
				code, ok := custom[id]
				if !ok {
					code = builtinDateFormats[id]
				}
				if !isDateFormat(code) {
					code = ""
				}
				out = append(out, code)
			}
		case xml.EndElement:
			if el.Name.Local == "cellXfs" {
				inXfs = false
			}
		}
	}
}

// formatSection is the first section of a format code, without its quoted text, escaped
// characters and [bracketed] colours and conditions.
func formatSection(code string) string {
	var b strings.Builder
	for i := 0; i < len(code); i++ {
		switch ch := code[i]; ch {
		case ';':
			return b.String()
		case '"':
			j := strings.IndexByte(code[i+1:], '"')
			if j < 0 {
				return b.String()
			}
			i += j + 1
		case '\\', '_', '*':
			i++
		case '[':
			j := strings.IndexByte(code[i:], ']')
			if j < 0 {
				return b.String()
			}
			i += j
		default:
			b.WriteByte(ch)
		}
	}
	return b.String()
}

// isDateFormat: the format code shows a day or a year.
func isDateFormat(code string) bool {
	return code != "" && strings.ContainsAny(formatSection(code), "dDyY")
}

var monthNames = [...]string{"January", "February", "March", "April", "May", "June", "July", "August", "September",
	"October", "November", "December"}

// formatDate shows the serial date v as the format code does ("" when v is no date).
func formatDate(v, code string) string {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f < 0 || f > 2958465 || math.IsNaN(f) { // 2958465 is 31 December 9999
		return ""
	}
	t := time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC).Add(time.Duration(math.Round(f*86400)) * time.Second)
	lower := strings.ToLower(code)
	twelve := strings.Contains(lower, "am/pm")
	var b strings.Builder
	afterHour := false
	for i := 0; i < len(code); {
		ch := code[i]
		low := ch | 0x20
		n := 1
		for i+n < len(code) && code[i+n]|0x20 == low && strings.IndexByte("dmyhs", low) >= 0 {
			n++
		}
		switch {
		case ch == ';':
			return b.String()
		case ch == '"':
			j := strings.IndexByte(code[i+1:], '"')
			if j < 0 {
				return b.String()
			}
			b.WriteString(code[i+1 : i+1+j])
			i += j + 2
			continue
		case ch == '\\' && i+1 < len(code):
			b.WriteByte(code[i+1])
			i += 2
			continue
		case ch == '[':
			j := strings.IndexByte(code[i:], ']')
			if j < 0 {
				return b.String()
			}
			i += j + 1
			continue
		case ch == '_' || ch == '*':
			i += 2
			continue
		case twelve && strings.HasPrefix(strings.ToLower(code[i:]), "am/pm"):
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
			i += 5
			continue
		case low == 'y':
			if n <= 2 {
				b.WriteString(pad2(t.Year() % 100))
			} else {
				b.WriteString(strconv.Itoa(t.Year()))
			}
		case low == 'd':
			switch n {
			case 1:
				b.WriteString(strconv.Itoa(t.Day()))
			case 2:
				b.WriteString(pad2(t.Day()))
			case 3:
				b.WriteString(t.Weekday().String()[:3])
			default:
				b.WriteString(t.Weekday().String())
			}
		case low == 'm' && n <= 2 && (afterHour || nextIsSeconds(code[i+n:])):
			if n == 1 {
				b.WriteString(strconv.Itoa(t.Minute()))
			} else {
				b.WriteString(pad2(t.Minute()))
			}
		case low == 'm':
			switch n {
			case 1:
				b.WriteString(strconv.Itoa(int(t.Month())))
			case 2:
				b.WriteString(pad2(int(t.Month())))
			case 3:
				b.WriteString(monthNames[t.Month()-1][:3])
			case 5:
				b.WriteString(monthNames[t.Month()-1][:1])
			default:
				b.WriteString(monthNames[t.Month()-1])
			}
		case low == 'h':
			h := t.Hour()
			if twelve {
				h = (h+11)%12 + 1
			}
			if n == 1 {
				b.WriteString(strconv.Itoa(h))
			} else {
				b.WriteString(pad2(h))
			}
		case low == 's':
			if n == 1 {
				b.WriteString(strconv.Itoa(t.Second()))
			} else {
				b.WriteString(pad2(t.Second()))
			}
		default:
			b.WriteByte(ch)
		}
		if strings.IndexByte("dmyhs", low) >= 0 {
			afterHour = low == 'h' || (afterHour && low != 'd' && low != 'y')
		}
		i += n
	}
	return b.String()
}

// nextIsSeconds: the next date or time part of rest is seconds (so an m before it is minutes).
func nextIsSeconds(rest string) bool {
	for i := 0; i < len(rest); i++ {
		switch rest[i] | 0x20 {
		case 's':
			return true
		case 'd', 'm', 'y', 'h':
			return false
		}
	}
	return false
}

func pad2(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}
