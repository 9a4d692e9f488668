package session

import (
	"io/fs"
	"os"
	"sync"
	"time"
)

// readCacheEntries bounds the file backend's read cache (a sealed session is one to a few KiB).
const readCacheEntries = 1024

// readCache keeps the entries the file backend read last, so a signed-in user's every request
// costs one stat(2) instead of open, fstat, read, read and close (the file read was about 5 % of
// the customer page's CPU under load, docs/performance.md). An entry is used only while
//   - nothing was written, deleted or swept by this process since it was read (gen): one portal
//     process owns the directory (fileKV), so this alone keeps the cache exact;
//   - the file is still the one it was read from: same inode and device (os.SameFile), same size
//     and modification time. A write replaces the file (rename) and a delete removes it, so a
//     removed data directory is reported as before (the stat fails and the read path says why),
//     and a change made from outside is seen too, short of a burst of rewrites that reuses an
//     inode within one tick of the kernel's coarse file clock;
//   - its expiry has not passed.
type readCache struct {
	mu      sync.Mutex
	gen     uint64 // bumped by every write, delete and sweep of the backend
	entries map[string]readCacheEntry
}

type readCacheEntry struct {
	info    fs.FileInfo
	expires time.Time
	value   []byte // never modified: callers of kv.get only read it
}

// begin returns the cached entry of path, if any, and the generation to pass to store.
func (rc *readCache) begin(path string) (readCacheEntry, bool, uint64) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	e, ok := rc.entries[path]
	return e, ok, rc.gen
}

// valid reports whether e still describes the file that info (a fresh stat of it) describes.
func (e readCacheEntry) valid(info fs.FileInfo) bool {
	return os.SameFile(e.info, info) && e.info.Size() == info.Size() && e.info.ModTime().Equal(info.ModTime())
}

// store keeps what was read from path (info: its stat taken before the read) unless something
// was written since gen.
func (rc *readCache) store(path string, gen uint64, e readCacheEntry) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.gen != gen {
		return
	}
	if rc.entries == nil {
		rc.entries = make(map[string]readCacheEntry, readCacheEntries)
	}
	if _, ok := rc.entries[path]; !ok && len(rc.entries) >= readCacheEntries {
		for k := range rc.entries {
			delete(rc.entries, k) // an arbitrary one (map order)
			break
		}
	}
	rc.entries[path] = e
}

// invalidate forgets path (empty: everything) and starts a new generation; the backend calls it
// before it changes the directory.
func (rc *readCache) invalidate(path string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.gen++
	if path == "" {
		clear(rc.entries)
		return
	}
	delete(rc.entries, path)
}
