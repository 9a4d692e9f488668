package apiclient

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReadAllTakesTheAnnouncedLengthAsAHintOnly: the body is read whole whatever Content-Length
// said (shorter, longer, exact, unknown, over the limit), in pieces as the network delivers it,
// and the client's limit still refuses a body over it even when the announced length was small.
func TestReadAllTakesTheAnnouncedLengthAsAHintOnly(t *testing.T) {
	body := strings.Repeat(`{"a":"0123456789"}`, 300) // 5,400 bytes
	for _, size := range []int64{-1, 0, 1, 100, int64(len(body)) - 1, int64(len(body)), int64(len(body)) + 1, 1 << 20} {
		for _, oneByte := range []bool{false, true} {
			var r io.Reader = strings.NewReader(body)
			if oneByte {
				r = iotest.OneByteReader(r)
			}
			got, err := readAll(&limitedReader{r: r, remaining: 1 << 16}, size, 1<<16)
			if err != nil || !bytes.Equal(got, []byte(body)) {
				t.Fatalf("size %d, one byte at a time %v: %d bytes, err %v; want the %d bytes of the body", size, oneByte, len(got), err, len(body))
			}
			if size == int64(len(body)) && cap(got) != len(body)+1 {
				t.Errorf("announced exactly: capacity %d, want one allocation of %d", cap(got), len(body)+1)
			}
		}
	}
	lr := &limitedReader{r: strings.NewReader(body), remaining: 1000}
	if _, err := readAll(lr, 10, 1000); !errors.Is(err, ErrResponseTooLarge) {
		t.Fatalf("a body over the limit announced as 10 bytes: err %v, want ErrResponseTooLarge", err)
	}
	readErr := errors.New("connection reset")
	if _, err := readAll(&limitedReader{r: iotest.ErrReader(readErr), remaining: 1000}, 10, 1000); !errors.Is(err, readErr) {
		t.Fatalf("a transport error: err %v, want it returned", err)
	}
}
