package customercache

import (
	"cmp"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/textfold"
)

// SortKey names a column the list can be sorted by.
type SortKey int

// The sort keys. Ties are broken by id, so every order is total and pagination is stable.
const (
	SortByName SortKey = iota
	SortByID
	SortByTaxID
	SortByCity
	SortBySegment
	SortByUpdated
	numSortKeys
)

// ParseSortKey reads a sort key as written in URLs ("name", "id", "taxId", "city", "segment",
// "updated").
func ParseSortKey(s string) (SortKey, bool) {
	for k := range numSortKeys {
		if k.String() == s {
			return k, true
		}
	}
	return 0, false
}

// String is the key as written in URLs.
func (k SortKey) String() string {
	switch k {
	case SortByName:
		return "name"
	case SortByID:
		return "id"
	case SortByTaxID:
		return "taxId"
	case SortByCity:
		return "city"
	case SortBySegment:
		return "segment"
	case SortByUpdated:
		return "updated"
	}
	return ""
}

// row is one customer in compact form: no pointers (the garbage collector never scans the rows
// slice), strings as offsets into the snapshot's text, the repeated values (segment, city,
// country, owners, configurators) as one index into the snapshot's distinct combinations of them.
// 28 bytes plus the text of name, tax id, e-mail and search key (about 105 bytes for the
// simulator's customers: 13 MiB for 100,000).
type row struct {
	id int32
	// off is where the row's text starts: name, tax id, e-mail (unless flagEmailInKey), then the
	// search key. An ASCII name or tax id is not stored itself but as a case mask over its
	// lower-case copy in the key (a bit per byte: 4 bytes for a 25-byte name).
	off uint32
	// Byte lengths of the parts of the text. keyLen covers the whole search key; the key starts
	// with the lower-case name (lowerNameLen bytes), which is what the name order compares.
	nameLen, taxLen, emailLen, keyLen, lowerNameLen uint16
	flags                                           uint8
	attrs                                           uint32 // index into Snapshot.attrs
	updated                                         uint32 // Unix seconds, UTC (until 2106)
}

// Row flags.
const (
	// flagEmailInKey: the e-mail is already lower case, so it is read from the search key
	// instead of being stored twice (most addresses are).
	flagEmailInKey uint8 = 1 << iota
	// flagNameCased, flagTaxCased: the name (tax id) is ASCII and stored as a case mask over
	// its lower-case copy in the key.
	flagNameCased
	flagTaxCased
)

// storedLen is how many bytes a field of n bytes takes in the row's text.
func storedLen(n uint16, cased bool) uint32 {
	if cased {
		return (uint32(n) + 7) / 8
	}
	return uint32(n)
}

// rowAttrs are a row's repeated values as dictionary indexes. Customers share few combinations
// of them (the simulator's 100,000 have a few thousand), so a row holds one index to its
// combination instead of five (16 bytes less a row).
type rowAttrs struct {
	segment, city, country, owners, cpqIDs uint32
}

// Row is one customer of a snapshot, as the list shows it.
type Row struct {
	ID      int32
	Name    string
	TaxID   string
	Email   string
	Segment string
	City    string
	Country string
	// Owners are the owners' names, comma separated.
	Owners    string
	CPQIDs    []int32
	UpdatedAt time.Time
}

// Owner is a sales user seen as an owner in the list (the directory itself is not exposed by
// the v2 API, docs/v2-assumptions.md A8).
type Owner struct {
	ID    int64
	Name  string
	Email string
}

// Snapshot is one user's customer list at one moment. It never changes once built (an update
// makes a new snapshot that shares the old text), so readers need no lock.
type Snapshot struct {
	etag string
	rows []row // sorted by id
	// text holds the strings of the rows read when the list was fetched, in chunks of
	// textChunkSize bytes (a row's text never crosses a chunk); tail those added by later
	// updates (offsets >= textEnd point into tail).
	text    []string
	textEnd uint32
	tail    string
	dict    []string
	attrs   []rowAttrs
	owners  []Owner // sorted by id

	orders [numSortKeys]lazyOrder
	// attrKeys are the search texts of the combinations (attrs): city and owners, lower case and
	// folded, made on the first search.
	attrKeys lazyAttrKeys
	// scratch holds *searchScratch for searches to reuse. A search's masks (one word per
	// combination) and its bitmap of matches were most of what a keystroke allocated (about
	// 150 KiB of the simulator's 100,000 customers, and more the more combinations a list has),
	// garbage that a busy list piled up to the collector's target on top of the cached lists
	// (docs/performance.md, "Resident memory of the list and the stream").
	scratch sync.Pool
}

type lazyAttrKeys struct {
	once sync.Once
	keys []string
}

// searchScratch is what one search writes and drops: the combinations' masks and the bitmap of
// matching rows.
type searchScratch struct {
	masks, hits []uint64
}

// getScratch returns scratch of this snapshot's sizes, all zero; putScratch gives it back.
func (s *Snapshot) getScratch() *searchScratch {
	sc, _ := s.scratch.Get().(*searchScratch)
	if sc == nil {
		return &searchScratch{masks: make([]uint64, len(s.attrs)), hits: make([]uint64, (len(s.rows)+63)/64)}
	}
	clear(sc.masks)
	clear(sc.hits)
	return sc
}

func (s *Snapshot) putScratch(sc *searchScratch) { s.scratch.Put(sc) }

// attrMasks says, for each combination (attrs), which terms occur in its city or owners (bit i
// for terms[i]), written into masks (len(s.attrs), zero): a few thousand combinations are looked
// at once per search instead of every row. The combinations' texts, lower case and folded, are
// made on the first search.
func (s *Snapshot) attrMasks(terms []searchTerm, masks []uint64) {
	s.attrKeys.once.Do(func() {
		keys := make([]string, len(s.attrs))
		var b []byte
		for i, a := range s.attrs {
			b = b[:0]
			for _, v := range []string{s.dict[a.city], s.dict[a.owners]} {
				b = appendLower(b, []byte(v))
				b = append(b, 0)
				b = textfold.Append(b, v)
				b = append(b, 0)
			}
			keys[i] = string(b)
		}
		s.attrKeys.keys = keys
	})
	for i, key := range s.attrKeys.keys {
		for j, t := range terms {
			if t.in(key) {
				masks[i] |= 1 << j
			}
		}
	}
}

// matches reports whether every term occurs in the row's city or owners (masks) or in its search
// key (name, tax id, e-mail, id, folded name).
func (s *Snapshot) matches(r *row, terms []searchTerm, masks []uint64) bool {
	mask := masks[r.attrs]
	var key string
	for i, t := range terms {
		if mask&(1<<i) != 0 {
			continue
		}
		if key == "" {
			key = s.key(r)
		}
		if !t.in(key) {
			return false
		}
	}
	return true
}

// lazyOrder is a permutation of the rows, computed on first use.
type lazyOrder struct {
	once sync.Once
	idx  []int32
}

// Len is the number of customers.
func (s *Snapshot) Len() int { return len(s.rows) }

// ETag is the list's entity tag as the v2 API sent it.
func (s *Snapshot) ETag() string { return s.etag }

// Owners lists every owner named in the list, by id.
func (s *Snapshot) Owners() []Owner { return slices.Clone(s.owners) }

// textChunkShift sizes the chunks of a snapshot's text (1 MiB): the text is built a chunk at a
// time and each chunk copied once to its exact size, instead of a buffer that doubles (and leaves
// its halves to the garbage collector) and a final copy.
const (
	textChunkShift = 20
	textChunkSize  = 1 << textChunkShift
)

func (s *Snapshot) str(off uint32, n uint16) string {
	if off >= s.textEnd {
		o := off - s.textEnd
		return s.tail[o : o+uint32(n)]
	}
	chunk := s.text[off>>textChunkShift]
	o := off & (textChunkSize - 1)
	return chunk[o : o+uint32(n)]
}

func (s *Snapshot) name(r *row) string {
	if r.flags&flagNameCased == 0 {
		return s.str(r.off, r.nameLen)
	}
	return string(applyCase(nil, s.lowerName(r), s.str(r.off, uint16(storedLen(r.nameLen, true)))))
}

// appendTaxID appends the row's tax id to dst (no allocation when dst has room).
func (s *Snapshot) appendTaxID(dst []byte, r *row) []byte {
	off := r.off + storedLen(r.nameLen, r.flags&flagNameCased != 0)
	if r.flags&flagTaxCased == 0 {
		return append(dst, s.str(off, r.taxLen)...)
	}
	// key = lower(name) NUL lower(taxId) NUL ...; an ASCII tax id keeps its length lowered.
	start := uint32(r.lowerNameLen) + 1
	lower := s.str(r.keyOff()+start, r.taxLen)
	return applyCase(dst, lower, s.str(off, uint16(storedLen(r.taxLen, true))))
}

func (s *Snapshot) taxID(r *row) string {
	if r.flags&flagTaxCased == 0 {
		return s.str(r.off+storedLen(r.nameLen, r.flags&flagNameCased != 0), r.taxLen)
	}
	return string(s.appendTaxID(nil, r))
}

// applyCase appends lower with the letters whose bit is set in mask upper-cased.
func applyCase(dst []byte, lower, mask string) []byte {
	for i := range len(lower) {
		c := lower[i]
		if mask[i/8]&(1<<(i%8)) != 0 {
			c -= 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// appendCaseMask appends the case mask of an ASCII string: bit i set when byte i is upper case.
func appendCaseMask(dst, ascii []byte) []byte {
	for i := 0; i < len(ascii); i += 8 {
		var m byte
		for j := i; j < min(i+8, len(ascii)); j++ {
			if 'A' <= ascii[j] && ascii[j] <= 'Z' {
				m |= 1 << (j - i)
			}
		}
		dst = append(dst, m)
	}
	return dst
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// textOff is where the row's e-mail (when stored) starts: after the name and the tax id.
func (r *row) textOff() uint32 {
	return r.off + storedLen(r.nameLen, r.flags&flagNameCased != 0) + storedLen(r.taxLen, r.flags&flagTaxCased != 0)
}

// keyOff is where the row's search key starts.
func (r *row) keyOff() uint32 {
	off := r.textOff()
	if r.flags&flagEmailInKey == 0 {
		off += uint32(r.emailLen)
	}
	return off
}

func (s *Snapshot) email(r *row) string {
	if r.flags&flagEmailInKey != 0 {
		// key = lower(name) NUL lower(taxId) NUL email NUL id
		key := s.key(r)
		start := int(r.lowerNameLen) + 1
		start += strings.IndexByte(key[start:], 0) + 1
		return key[start : start+int(r.emailLen)]
	}
	return s.str(r.textOff(), r.emailLen)
}

func (s *Snapshot) key(r *row) string { return s.str(r.keyOff(), r.keyLen) }

func (s *Snapshot) lowerName(r *row) string { return s.str(r.keyOff(), r.lowerNameLen) }

// public turns a compact row into a Row.
func (s *Snapshot) public(r *row) Row {
	a := &s.attrs[r.attrs]
	return Row{
		ID: r.id, Name: s.name(r), TaxID: s.taxID(r), Email: s.email(r),
		Segment: s.dict[a.segment], City: s.dict[a.city], Country: s.dict[a.country], Owners: s.dict[a.owners],
		CPQIDs: parseIDList(s.dict[a.cpqIDs]), UpdatedAt: time.Unix(int64(r.updated), 0).UTC(),
	}
}

// Lookup returns the customer with the id.
func (s *Snapshot) Lookup(id int32) (Row, bool) {
	i, found := slices.BinarySearchFunc(s.rows, id, func(r row, id int32) int { return cmp.Compare(r.id, id) })
	if !found {
		return Row{}, false
	}
	return s.public(&s.rows[i]), true
}

// Query asks a snapshot for one page of customers.
type Query struct {
	// Text is what the user typed: every word must occur in the customer's name, tax id, e-mail,
	// id, city or owners, compared without case, accents and punctuation (fold.go). Empty
	// matches everyone.
	Text string
	Sort SortKey
	Desc bool
	// Offset and Limit pick the page (Limit <= 0: no rows, only the count).
	Offset, Limit int
}

// Result is a page of customers and how many matched in all.
type Result struct {
	Total int
	Rows  []Row
}

// Search filters, sorts and pages the customers. It reads every search key once, in storage
// order (no index: the keys are short, lower-case and lie next to each other in memory, so this
// is a fast sequential scan), marks the matches in a bitmap, then walks the sort order only as
// far as the page needs.
func (s *Snapshot) Search(q Query) Result {
	terms := searchTermsOf(q.Text)
	n := len(s.rows)
	res := Result{Total: n}
	var hits []uint64
	if len(terms) > 0 {
		sc := s.getScratch()
		defer s.putScratch(sc)
		masks := sc.masks
		s.attrMasks(terms, masks)
		hits = sc.hits
		res.Total = 0
		for i := range s.rows {
			if s.matches(&s.rows[i], terms, masks) {
				hits[i/64] |= 1 << (i % 64)
				res.Total++
			}
		}
	}
	if q.Limit <= 0 || q.Offset >= res.Total {
		return res
	}
	order := s.order(q.Sort)
	skipped := 0
	for i := 0; i < n && len(res.Rows) < q.Limit; i++ {
		pos := i
		if q.Desc {
			pos = n - 1 - i
		}
		ri := pos
		if order != nil {
			ri = int(order[pos])
		}
		if hits != nil && hits[ri/64]&(1<<(ri%64)) == 0 {
			continue
		}
		if skipped < q.Offset {
			skipped++
			continue
		}
		res.Rows = append(res.Rows, s.public(&s.rows[ri]))
	}
	return res
}

// SearchTerms splits what the user typed into lower-case words (the command palette's pages).
func SearchTerms(text string) []string {
	return strings.Fields(strings.ToLower(text))
}

// order returns the permutation of rows for key; nil means id order (the rows' own order).
func (s *Snapshot) order(key SortKey) []int32 {
	if key == SortByID || key < 0 || key >= numSortKeys {
		return nil
	}
	lo := &s.orders[key]
	lo.once.Do(func() { lo.idx = s.buildOrder(key) })
	return lo.idx
}

// buildOrder sorts the rows by key, ties by id. Each row is given a 64-bit sort key first: the
// first eight bytes of the name or tax id (big-endian, so comparing the numbers compares the
// bytes), the rank of the city or segment among the dictionary's values, the update time. Most
// comparisons are then one integer comparison between neighbours in memory; only rows whose
// eight-byte prefixes are equal compare their whole strings. This is about four times quicker than
// comparing strings throughout, which showed in the cold first page (docs/performance.md).
func (s *Snapshot) buildOrder(key SortKey) []int32 {
	// Each entry carries its key and, for the string orders, the string itself, so that a
	// comparison reads one entry and never goes back to the rows and their text chunks.
	type sortEntry struct {
		key uint64
		str string
		idx int32
	}
	entries := make([]sortEntry, len(s.rows))
	switch key {
	case SortByName:
		for i := range s.rows {
			v := s.lowerName(&s.rows[i])
			entries[i] = sortEntry{prefix8(v), v, int32(i)}
		}
	case SortByTaxID:
		// Tax ids kept as case masks are rebuilt into one temporary block.
		var block []byte
		ends := make([]int, len(s.rows))
		for i := range s.rows {
			block = s.appendTaxID(block, &s.rows[i])
			ends[i] = len(block)
		}
		all := string(block)
		start := 0
		for i := range s.rows {
			v := all[start:ends[i]]
			entries[i] = sortEntry{prefix8(v), v, int32(i)}
			start = ends[i]
		}
	case SortByCity, SortBySegment:
		rank := s.dictRanks()
		for i := range s.rows {
			a := &s.attrs[s.rows[i].attrs]
			d := a.city
			if key == SortBySegment {
				d = a.segment
			}
			entries[i] = sortEntry{key: uint64(rank[d]), idx: int32(i)}
		}
	case SortByUpdated:
		for i := range s.rows {
			entries[i] = sortEntry{key: uint64(s.rows[i].updated), idx: int32(i)}
		}
	}
	// Rows are in id order, so breaking ties by position breaks them by id. An explicit tie-break
	// with the (unstable, O(n log n)) pattern-defeating quicksort gives the stable order at about
	// a third of SortStableFunc's cost.
	slices.SortFunc(entries, func(a, b sortEntry) int {
		if c := cmp.Compare(a.key, b.key); c != 0 {
			return c
		}
		if c := strings.Compare(a.str, b.str); c != 0 {
			return c
		}
		return cmp.Compare(a.idx, b.idx)
	})
	idx := make([]int32, len(entries))
	for i, e := range entries {
		idx[i] = e.idx
	}
	return idx
}

// prefix8 is the first eight bytes of v as a big-endian number, zero-padded: for two strings whose
// prefixes differ, comparing the numbers orders them as strings.Compare does.
func prefix8[T string | []byte](v T) uint64 {
	var b [8]byte
	copy(b[:], v)
	return binary.BigEndian.Uint64(b[:])
}

// dictRanks ranks the dictionary's values in string order (equal values, which updates may
// repeat, rank equal).
func (s *Snapshot) dictRanks() []uint32 {
	byValue := make([]uint32, len(s.dict))
	for i := range byValue {
		byValue[i] = uint32(i)
	}
	slices.SortFunc(byValue, func(a, b uint32) int { return strings.Compare(s.dict[a], s.dict[b]) })
	rank := make([]uint32, len(s.dict))
	r := uint32(0)
	for i, d := range byValue {
		if i > 0 && s.dict[d] != s.dict[byValue[i-1]] {
			r++
		}
		rank[d] = r
	}
	return rank
}

// Duplicates returns the customers (at most limit) whose name equals name (ignoring case and
// repeated spaces) or whose tax id equals taxID (ignoring case and spaces), except exceptID.
func (s *Snapshot) Duplicates(name, taxID string, exceptID int32, limit int) []Row {
	wantName := NormalizeName(name)
	wantTax := NormalizeTaxID(taxID)
	var out []Row
	var tax []byte
	for i := range s.rows {
		r := &s.rows[i]
		if r.id == exceptID {
			continue
		}
		if wantTax != "" {
			tax = s.appendTaxID(tax[:0], r)
		}
		if (wantName != "" && s.lowerName(r) == wantName) || (wantTax != "" && string(tax) == wantTax) {
			out = append(out, s.public(r))
			if len(out) >= limit {
				break
			}
		}
	}
	return out
}

// NormalizeName is the form names are compared in: lower case, single spaces, trimmed.
func NormalizeName(name string) string {
	return strings.Join(strings.Fields(strings.ToLower(name)), " ")
}

// NormalizeTaxID is the form tax ids are compared in: upper case without spaces.
func NormalizeTaxID(taxID string) string {
	return strings.ToUpper(strings.Join(strings.Fields(taxID), ""))
}

// builder collects customers into a new snapshot as the list is decoded: each customer's row,
// text and search key are made as it arrives, so the snapshot is complete when the last byte is.
type builder struct {
	chunks  [][]row // rows, in chunks of rowChunkLen (no slice doubling while 100,000 arrive)
	text    []string
	cur     []byte // the text chunk being filled
	rowText []byte // one row's text, before it is placed
	scratch []byte
	dict    []string
	dictIdx map[string]uint32
	attrs   []rowAttrs
	attrIdx map[rowAttrs]uint32
	owners  map[int64]Owner
	sorted  bool
	lastID  int32
}

// rowChunkLen is the number of rows per chunk while building (352 KiB).
const rowChunkLen = 8192

// errTooLarge: the compact text would not fit 32-bit offsets (4 GiB of names).
var errTooLarge = errors.New("customercache: customer list too large")

func newBuilder() *builder {
	b := &builder{dictIdx: map[string]uint32{}, attrIdx: map[rowAttrs]uint32{}, owners: map[int64]Owner{}, sorted: true}
	b.intern(nil) // index 0 is the empty string
	return b
}

// interner hands out the dictionary and combination indexes of new rows.
type interner interface {
	intern(v []byte) uint32
	attr(a rowAttrs) uint32
}

func (b *builder) attr(a rowAttrs) uint32 {
	if i, ok := b.attrIdx[a]; ok {
		return i
	}
	i := uint32(len(b.attrs))
	b.attrs = append(b.attrs, a)
	b.attrIdx[a] = i
	return i
}

func (b *builder) intern(v []byte) uint32 {
	if i, ok := b.dictIdx[string(v)]; ok { // no allocation for the look-up
		return i
	}
	i := uint32(len(b.dict))
	b.dict = append(b.dict, string(v))
	b.dictIdx[b.dict[i]] = i
	return i
}

// add appends one customer. It copies what it keeps, so the item's bytes may be reused.
func (b *builder) add(c *apiclient.CustomerListItem) error {
	var r row
	r, b.rowText, b.scratch = makeRow(c, b.rowText[:0], b.scratch, b)
	if len(b.cur)+len(b.rowText) > textChunkSize {
		b.flushText()
	}
	off := len(b.text)<<textChunkShift + len(b.cur)
	if off > math.MaxUint32-textChunkSize {
		return errTooLarge
	}
	if b.cur == nil {
		b.cur = make([]byte, 0, textChunkSize)
	}
	r.off = uint32(off)
	b.cur = append(b.cur, b.rowText...)
	if len(b.chunks) > 0 && c.ID <= b.lastID {
		b.sorted = false
	}
	b.lastID = c.ID
	if n := len(b.chunks); n == 0 || len(b.chunks[n-1]) == rowChunkLen {
		b.chunks = append(b.chunks, make([]row, 0, rowChunkLen))
	}
	last := &b.chunks[len(b.chunks)-1]
	*last = append(*last, r)
	for _, o := range c.Owners {
		// Most customers name the same few owners: only a new or changed one is stored (the
		// comparisons do not allocate).
		if ex, ok := b.owners[o.OwnerID]; ok && ex.Name == string(o.Name) && ex.Email == string(o.Email) {
			continue
		}
		b.owners[o.OwnerID] = Owner{ID: o.OwnerID, Name: string(o.Name), Email: string(o.Email)}
	}
	return nil
}

// flushText stores the text chunk being filled at its exact size and starts the next one in the
// same buffer.
func (b *builder) flushText() {
	b.text = append(b.text, string(b.cur))
	b.cur = b.cur[:0]
}

// clip shortens s to at most max bytes at a rune boundary, so each length fits 16 bits.
func clip(s []byte) []byte {
	// The key holds three fields lower-cased (which may grow a string by half) plus the id.
	const maxLen = math.MaxUint16 / 8
	if len(s) <= maxLen {
		return s
	}
	s = s[:maxLen]
	for len(s) > 0 && !utf8.Valid(s) {
		s = s[:len(s)-1]
	}
	return s
}

// makeRow builds the compact row of c (its offset left to the caller) and appends its text to
// text: name, tax id, e-mail (unless it can be read from the key), then the search key, which is
// what Search looks at: lower-case name, tax id, e-mail and the id, separated by NUL so that no
// word matches across two fields (the name comes first: the name order reads it). scratch is a
// buffer for the dictionary values; both are returned for reuse.
func makeRow(c *apiclient.CustomerListItem, text, scratch []byte, in interner) (row, []byte, []byte) {
	name, taxID, email := clip(c.Name), clip(c.TaxID), clip(c.Email)
	inKey := emailInKey(email)
	var flags uint8
	if inKey {
		flags |= flagEmailInKey
	}
	if isASCII(name) {
		flags |= flagNameCased
		text = appendCaseMask(text, name)
	} else {
		text = append(text, name...)
	}
	if isASCII(taxID) {
		flags |= flagTaxCased
		text = appendCaseMask(text, taxID)
	} else {
		text = append(text, taxID...)
	}
	if !inKey {
		text = append(text, email...)
	}
	keyStart := len(text)
	text = appendLower(text, name)
	lowerNameLen := len(text) - keyStart
	text = append(text, 0)
	text = appendLower(text, taxID)
	text = append(text, 0)
	text = appendLower(text, email)
	text = append(text, 0)
	text = strconv.AppendInt(text, int64(c.ID), 10)
	// The folded words of the name (fold.go) that differ from their lower-case form: "spa" for
	// "Impianti S.p.A." (search terms are matched word by word, so the others are already in the
	// key; this keeps the key about 10 bytes longer instead of a whole second name).
	extra := false
	lowerName := text[keyStart : keyStart+lowerNameLen]
	for start := 0; start < len(lowerName); {
		end := start
		for end < len(lowerName) && lowerName[end] != ' ' {
			end++
		}
		word := lowerName[start:end]
		start = end + 1
		if len(word) == 0 || !textfold.Changes(word) {
			continue
		}
		scratch = textfold.Append(scratch[:0], word)
		if len(scratch) == 0 {
			continue
		}
		if !extra {
			text = append(text, 0)
			extra = true
		} else {
			text = append(text, ' ')
		}
		text = append(text, scratch...)
	}

	scratch = scratch[:0]
	for i, o := range c.Owners {
		if i > 0 {
			scratch = append(scratch, ", "...)
		}
		scratch = append(scratch, o.Name...)
	}
	owners := in.intern(scratch)
	scratch = appendIDList(scratch[:0], c.CPQIDs)
	cpqIDs := in.intern(scratch)
	attrs := in.attr(rowAttrs{segment: in.intern(c.Segment), city: in.intern(c.City), country: in.intern(c.Country), owners: owners, cpqIDs: cpqIDs})
	return row{
		id:      c.ID,
		nameLen: uint16(len(name)), taxLen: uint16(len(taxID)), emailLen: uint16(len(email)),
		keyLen: uint16(len(text) - keyStart), lowerNameLen: uint16(lowerNameLen), flags: flags,
		attrs: attrs, updated: unixSeconds(c.UpdatedAt),
	}, text, scratch
}

// appendLower appends strings.ToLower(s): byte by byte for ASCII (no allocation), through
// strings.ToLower otherwise, so that the key is lowered exactly as SearchTerms lowers the query.
func appendLower(dst, s []byte) []byte {
	for _, c := range s {
		if c >= utf8.RuneSelf {
			return append(dst, strings.ToLower(string(s))...)
		}
	}
	for _, c := range s {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// emailInKey reports whether the e-mail can be read back from the search key (it is already
// lower case, as most addresses are).
func emailInKey(email []byte) bool {
	for _, c := range email {
		if c >= utf8.RuneSelf {
			return strings.ToLower(string(email)) == string(email)
		}
		if 'A' <= c && c <= 'Z' {
			return false
		}
	}
	return true
}

// unixSeconds fits a time into 32 bits (1970 to 2106); the list shows minutes at most.
func unixSeconds(t time.Time) uint32 {
	return uint32(min(max(t.Unix(), 0), math.MaxUint32))
}

func (b *builder) build(etag string) *Snapshot {
	n := 0
	for _, c := range b.chunks {
		n += len(c)
	}
	rows := make([]row, 0, n)
	for i, c := range b.chunks {
		rows = append(rows, c...)
		b.chunks[i] = nil // let the chunks go as they are copied
	}
	if !b.sorted {
		slices.SortStableFunc(rows, func(x, y row) int { return cmp.Compare(x.id, y.id) })
		// A list with the same id twice keeps the first one (the sort is stable).
		rows = slices.CompactFunc(rows, func(x, y row) bool { return x.id == y.id })
	}
	if len(b.cur) > 0 {
		b.flushText()
	}
	owners := make([]Owner, 0, len(b.owners))
	for _, o := range b.owners {
		owners = append(owners, o)
	}
	sort.Slice(owners, func(i, j int) bool { return owners[i].ID < owners[j].ID })
	return &Snapshot{etag: etag, rows: rows, text: b.text, textEnd: uint32(len(b.text)) << textChunkShift,
		dict: slices.Clip(b.dict), attrs: slices.Clip(b.attrs), owners: owners}
}

// withCustomer returns a new snapshot where c replaces the customer with its id, or is added.
// The new snapshot shares the old text; only the rows are copied.
func (s *Snapshot) withCustomer(c *apiclient.Customer) (*Snapshot, error) {
	in := &updateInterner{dict: slices.Clone(s.dict), attrs: slices.Clone(s.attrs)}
	r, text, _ := makeRow(apiclient.ListItemOf(c), []byte(s.tail), nil, in)
	off := uint64(s.textEnd) + uint64(len(s.tail))
	if off+uint64(len(text)) > math.MaxUint32 {
		return nil, errTooLarge
	}
	r.off = uint32(off)
	rows := slices.Clone(s.rows)
	i, found := slices.BinarySearchFunc(rows, c.ID, func(r row, id int32) int { return cmp.Compare(r.id, id) })
	if found {
		rows[i] = r
	} else {
		rows = slices.Insert(rows, i, r)
	}
	owners := slices.Clone(s.owners)
	for _, o := range c.Owners {
		j, found := slices.BinarySearchFunc(owners, o.OwnerID, func(x Owner, id int64) int { return cmp.Compare(x.ID, id) })
		if found {
			owners[j] = Owner{ID: o.OwnerID, Name: o.Name, Email: o.Email}
		} else {
			owners = slices.Insert(owners, j, Owner{ID: o.OwnerID, Name: o.Name, Email: o.Email})
		}
	}
	return &Snapshot{etag: s.etag, rows: rows, text: s.text, textEnd: s.textEnd, tail: string(text), dict: in.dict, attrs: in.attrs, owners: owners}, nil
}

// updateInterner interns the values of an updated customer into copies of a snapshot's
// dictionary and combinations. A few entries per update: a linear look-up in the recent part is
// enough, and a duplicate entry would only cost a few bytes.
type updateInterner struct {
	dict  []string
	attrs []rowAttrs
}

func (u *updateInterner) intern(v []byte) uint32 {
	for i := len(u.dict) - 1; i >= 0 && i >= len(u.dict)-64; i-- {
		if u.dict[i] == string(v) {
			return uint32(i)
		}
	}
	u.dict = append(u.dict, string(v))
	return uint32(len(u.dict) - 1)
}

func (u *updateInterner) attr(a rowAttrs) uint32 {
	for i := len(u.attrs) - 1; i >= 0 && i >= len(u.attrs)-64; i-- {
		if u.attrs[i] == a {
			return uint32(i)
		}
	}
	u.attrs = append(u.attrs, a)
	return uint32(len(u.attrs) - 1)
}

// appendIDList writes configurator ids as "1,2,3" (a dictionary entry: few distinct sets).
func appendIDList(dst []byte, ids []int32) []byte {
	for i, id := range ids {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendInt(dst, int64(id), 10)
	}
	return dst
}

func parseIDList(s string) []int32 {
	if s == "" {
		return nil
	}
	parts := strings.Split(s, ",")
	out := make([]int32, 0, len(parts))
	for _, p := range parts {
		n, err := strconv.ParseInt(p, 10, 32)
		if err == nil {
			out = append(out, int32(n))
		}
	}
	return out
}

// RowOf is the list row of a customer document (for online search results, which do not come
// from a snapshot).
func RowOf(c *apiclient.Customer) Row {
	ownerNames := make([]string, 0, len(c.Owners))
	for _, o := range c.Owners {
		ownerNames = append(ownerNames, o.Name)
	}
	return Row{
		ID: c.ID, Name: c.Name, TaxID: c.TaxID, Email: c.Email, Segment: c.Segment,
		City: c.Address.City, Country: c.Address.Country, Owners: strings.Join(ownerNames, ", "),
		CPQIDs: slices.Clone(c.CPQIDs), UpdatedAt: time.Unix(int64(unixSeconds(c.UpdatedAt)), 0).UTC(),
	}
}

// SortRows orders rows the way Search orders a snapshot (ties by id; descending is the exact
// reverse of ascending).
func SortRows(rows []Row, key SortKey, desc bool) {
	var compare func(a, b *Row) int
	switch key {
	case SortByName:
		compare = func(a, b *Row) int { return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)) }
	case SortByTaxID:
		compare = func(a, b *Row) int { return strings.Compare(a.TaxID, b.TaxID) }
	case SortByCity:
		compare = func(a, b *Row) int { return strings.Compare(a.City, b.City) }
	case SortBySegment:
		compare = func(a, b *Row) int { return strings.Compare(a.Segment, b.Segment) }
	case SortByUpdated:
		compare = func(a, b *Row) int { return a.UpdatedAt.Compare(b.UpdatedAt) }
	default:
		compare = func(*Row, *Row) int { return 0 }
	}
	slices.SortFunc(rows, func(a, b Row) int {
		if c := compare(&a, &b); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	if desc {
		slices.Reverse(rows)
	}
}

// Walk calls fn for every customer matching q.Text, in q's order (Offset and Limit are
// ignored), without building the whole result: an export of 100,000 customers holds one row at
// a time. It stops at fn's first error and returns it.
func (s *Snapshot) Walk(q Query, fn func(Row) error) error {
	terms := searchTermsOf(q.Text)
	var masks []uint64
	if len(terms) > 0 {
		sc := s.getScratch()
		defer s.putScratch(sc)
		masks = sc.masks
		s.attrMasks(terms, masks)
	}
	order := s.order(q.Sort)
	n := len(s.rows)
	for i := range n {
		pos := i
		if q.Desc {
			pos = n - 1 - i
		}
		ri := pos
		if order != nil {
			ri = int(order[pos])
		}
		r := &s.rows[ri]
		if len(terms) > 0 && !s.matches(r, terms, masks) {
			continue
		}
		if err := fn(s.public(r)); err != nil {
			return err
		}
	}
	return nil
}
