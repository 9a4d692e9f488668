package handlers

import "testing"

// Large downloads get a large copy buffer, but never more than maxLargeCopyBuffers at once: a
// crowd of slow downloads must not hold 4 MiB each.
func TestCopyBufferPoolBoundsLargeBuffers(t *testing.T) {
	t.Parallel()
	p := newCopyBufferPool()
	if buf, release := p.get(10 << 10); len(buf) != standardCopyBytes {
		t.Errorf("a 10 KiB file got a %d-byte buffer, want %d", len(buf), standardCopyBytes)
	} else {
		release()
	}

	var releases []func()
	for i := range maxLargeCopyBuffers {
		length := int64(1 << 30)
		if i%2 == 1 {
			length = -1 // unknown length counts as large
		}
		buf, release := p.get(length)
		if len(buf) != largeCopyBytes {
			t.Fatalf("large download %d got a %d-byte buffer, want %d", i+1, len(buf), largeCopyBytes)
		}
		releases = append(releases, release)
	}
	buf, release := p.get(1 << 30)
	if len(buf) != standardCopyBytes {
		t.Errorf("download %d (over the limit) got a %d-byte buffer, want the standard %d", maxLargeCopyBuffers+1, len(buf), standardCopyBytes)
	}
	release()

	releases[0]()
	if buf, release := p.get(1 << 30); len(buf) != largeCopyBytes {
		t.Errorf("after one large download ended, the next got %d bytes, want %d", len(buf), largeCopyBytes)
	} else {
		release()
	}
	for _, release := range releases[1:] {
		release()
	}
	if n := len(p.inUse); n != 0 {
		t.Errorf("%d large buffers still counted as lent after every release", n)
	}
}
