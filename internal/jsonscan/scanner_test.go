package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// skipAll reads one value and the end of the input, through a buffer of size bytes and a reader
// that hands out one byte at a time when oneByte is set (every token then crosses a boundary).
func skipAll(data []byte, size int, oneByte bool) error {
	var r io.Reader = bytes.NewReader(data)
	if oneByte {
		r = iotest.OneByteReader(r)
	}
	s := New(r, size)
	if err := s.Skip(); err != nil {
		return err
	}
	if _, err := s.Peek(); err != io.EOF {
		if err == nil {
			return errors.New("data after the value")
		}
		return err
	}
	return nil
}

func TestSkipAgreesWithEncodingJSON(t *testing.T) {
	t.Parallel()
	cases := []string{
		`{}`, `[]`, `null`, `true`, ` "\b"`, `false`, `0`, `-0`, `1.5e-3`, `"a"`, `""`,
		`{"a":[1,2,{"b":null}],"c":"\u00e9\n\"","d":-12.5E+7}`,
		` [ 1 , 2 ] `, `"\ud83d\ude00"`, `"\ud800"`, "\"\xff\"", "\"caf\xc3\xa9\"",
		// Malformed.
		``, ` `, `{`, `[1,]`, `[,1]`, `{"a"}`, `{"a":1,}`, `{,"a":1}`, `{"a" 1}`, `{1:2}`,
		`01`, `1.`, `.5`, `-`, `1e`, `+1`, `tru`, `nul`, `nulll`, `"abc`, `"\x"`, `"\u12"`, `"\u12g4"`,
		"\"a\x01b\"", `[1 2]`, `{"a":1 "b":2}`, `]`, `}`, `1 2`, `NaN`, `[1]]`,
	}
	for _, c := range cases {
		want := json.Valid([]byte(c))
		for _, oneByte := range []bool{false, true} {
			err := skipAll([]byte(c), 64, oneByte)
			if (err == nil) != want {
				t.Errorf("Skip(%q) oneByte=%v: err %v, encoding/json valid %v", c, oneByte, err, want)
			}
		}
	}
}

func TestSkipDepthLimit(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	if err := skipAll([]byte(deep), 64, false); !errors.Is(err, ErrSyntax) {
		t.Errorf("nesting %d deep: %v, want a syntax error", maxDepth+1, err)
	}
	ok := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	if err := skipAll([]byte(ok), 64, false); err != nil {
		t.Errorf("nesting 100 deep: %v", err)
	}
}

func TestStringAgreesWithEncodingJSON(t *testing.T) {
	t.Parallel()
	cases := []string{
		`"plain"`, `""`, `"caf\u00e9"`, "\"caf\xc3\xa9\"", `"\"\\\/\b\f\n\r\t"`, `"\ud83d\ude00"`,
		`"\ud800"`, `"\ud800x"`, `"\udc00\ud800"`, `"\ud800\u0041"`, "\"\xff\xfe\"", "\"a\xe2\x82\"",
		`"` + strings.Repeat("long ", 50_000) + `"`, `"\u0000"`,
	}
	for _, c := range cases {
		var want string
		if err := json.Unmarshal([]byte(c), &want); err != nil {
			t.Fatalf("encoding/json refuses %q: %v", c, err)
		}
		for _, oneByte := range []bool{false, true} {
			var r io.Reader = strings.NewReader(c)
			if oneByte {
				r = iotest.OneByteReader(r)
			}
			got, err := New(r, 64).String()
			if err != nil || string(got) != want {
				t.Errorf("String(%.40q) oneByte=%v = %.40q, %v; want %.40q", c, oneByte, got, err, want)
			}
		}
	}
}

func TestReadErrorIsWrapped(t *testing.T) {
	t.Parallel()
	boom := errors.New("connection reset")
	s := New(io.MultiReader(strings.NewReader(`["abc`), iotest.ErrReader(boom)), 64)
	err := s.Skip()
	if !errors.Is(err, boom) || errors.Is(err, ErrSyntax) {
		t.Errorf("Skip on a failing reader: %v, want the reader's error", err)
	}
}

func TestInt(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		bits int
		want int64
		ok   bool
	}{
		{"12", 32, 12, true}, {"-2147483648", 32, -2147483648, true}, {"2147483648", 32, 0, false},
		{"1.0", 32, 0, false}, {"1e2", 32, 0, false}, {"9223372036854775807", 64, 1<<63 - 1, true},
	} {
		n, err := New(strings.NewReader(c.in), 64).Int(c.bits)
		if (err == nil) != c.ok || (c.ok && n != c.want) {
			t.Errorf("Int(%q, %d) = %d, %v", c.in, c.bits, n, err)
		}
		if !c.ok && !errors.Is(err, ErrType) {
			t.Errorf("Int(%q): %v, want ErrType", c.in, err)
		}
	}
}

func TestBool(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in       string
		want, ok bool
	}{
		{" true", true, true}, {"false", false, true}, {"tru", false, false}, {"fals", false, false},
		{"null", false, false}, {"1", false, false}, {"trUe", false, false},
	} {
		b, err := New(iotest.OneByteReader(strings.NewReader(c.in)), 64).Bool()
		if (err == nil) != c.ok || b != c.want {
			t.Errorf("Bool(%q) = %v, %v", c.in, b, err)
		}
		if !c.ok && !errors.Is(err, ErrSyntax) {
			t.Errorf("Bool(%q): %v, want ErrSyntax", c.in, err)
		}
	}
}

// FuzzSkip checks that the scanner accepts exactly the texts encoding/json accepts, and decodes
// strings as it does, whatever the buffer boundaries.
func FuzzSkip(f *testing.F) {
	for _, seed := range []string{`{"a":[1,"x",null,true]}`, `"\ud83d\ude00"`, `[1,]`, "\"\xff\"", `-0.5e+3`, `{"id":1,"name":"é"}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want := json.Valid(data)
		for _, oneByte := range []bool{false, true} {
			if err := skipAll(data, 64, oneByte); (err == nil) != want {
				t.Fatalf("Skip(%q) oneByte=%v: err %v, encoding/json valid %v", data, oneByte, err, want)
			}
		}
		var str string
		if json.Unmarshal(data, &str) == nil && bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte(`"`)) {
			got, err := New(iotest.OneByteReader(bytes.NewReader(data)), 64).String()
			if err != nil || string(got) != str {
				t.Fatalf("String(%q) = %q, %v; encoding/json %q", data, got, err, str)
			}
		}
	})
}

// TestPlainRun checks the eight-bytes-at-a-time scan against the byte table: every byte value at
// every position of a run of plain bytes.
func TestPlainRun(t *testing.T) {
	t.Parallel()
	for c := range 256 {
		for at := range 20 {
			b := bytes.Repeat([]byte("a"), 24)
			b[at] = byte(c)
			want := len(b)
			if special[c] {
				want = at
			}
			if got := plainRun(b, 0); got != want {
				t.Fatalf("plainRun with %#x at %d = %d, want %d", c, at, got, want)
			}
		}
	}
}

// TestObjectKeysAcrossBuffers walks an object through a tiny buffer: a key must survive the
// buffer moving while the colon after it is read.
func TestObjectKeysAcrossBuffers(t *testing.T) {
	t.Parallel()
	s := New(iotest.OneByteReader(strings.NewReader(`{"alpha" : 1, "beta":"x", "gamma":[true]}`)), 64)
	if err := s.Enter('{'); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for first := true; ; first = false {
		more, err := s.More('}', first)
		if err != nil {
			t.Fatal(err)
		}
		if !more {
			break
		}
		key, err := s.Key()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, string(key))
		if err := s.Skip(); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Join(keys, ",") != "alpha,beta,gamma" {
		t.Errorf("keys %q", keys)
	}
}
