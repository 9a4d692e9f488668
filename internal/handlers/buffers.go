package handlers

import (
	"bytes"
	"sync"
)

// bufferPool reuses the buffers a page is rendered into and compressed into. Without it every
// page grows two fresh buffers to its full size (about 14 kB and 4 kB for a customer's page):
// allocation, zeroing and copying that showed in the detail page's profile (docs/performance.md).
type bufferPool struct {
	pool sync.Pool // *bytes.Buffer
}

// maxPooledBuffer: a buffer that grew past this (an unusually large page, such as a long customer
// list) is left to the garbage collector rather than kept for every later response.
const maxPooledBuffer = 256 << 10

func newBufferPool() *bufferPool {
	return &bufferPool{pool: sync.Pool{New: func() any { return new(bytes.Buffer) }}}
}

// get returns an empty buffer.
func (p *bufferPool) get() *bytes.Buffer {
	buf := p.pool.Get().(*bytes.Buffer)
	buf.Reset()
	return buf
}

// put returns buf to the pool; its bytes must not be used afterwards.
func (p *bufferPool) put(buf *bytes.Buffer) {
	if buf.Cap() <= maxPooledBuffer {
		p.pool.Put(buf)
	}
}
