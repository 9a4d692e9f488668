package customercache

import (
	"cmp"
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
// slice), strings as offsets into the snapshot's text, repeated values as indexes into its
// dictionary. 44 bytes plus the text of name, tax id, e-mail and search key.
type row struct {
	id  int32
	off uint32 // start of the row's text: name, tax id, e-mail (unless emailInKey), then the search key
	// Byte lengths of the parts of the text. keyLen covers the whole search key; the key starts
	// with the lower-case name (lowerNameLen bytes), which is what the name order compares.
	nameLen, taxLen, emailLen, keyLen, lowerNameLen uint16
	// emailInKey: the e-mail is already lower case, so it is read from the search key instead
	// of being stored twice (most addresses are).
	emailInKey bool
	// Dictionary indexes.
	segment, city, country, owners, cpqIDs uint32
	updated                                uint32 // Unix seconds, UTC (until 2106)
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
	// text holds the strings of the rows read when the list was fetched; tail those added by
	// later updates (offsets >= len(text) point into tail).
	text, tail string
	dict       []string
	owners     []Owner // sorted by id

	orders [numSortKeys]lazyOrder
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

func (s *Snapshot) str(off uint32, n uint16) string {
	if int(off) >= len(s.text) {
		o := int(off) - len(s.text)
		return s.tail[o : o+int(n)]
	}
	return s.text[off : off+uint32(n)]
}

func (s *Snapshot) name(r *row) string { return s.str(r.off, r.nameLen) }

func (s *Snapshot) taxID(r *row) string { return s.str(r.off+uint32(r.nameLen), r.taxLen) }

// keyOff is where the row's search key starts.
func (r *row) keyOff() uint32 {
	off := r.off + uint32(r.nameLen) + uint32(r.taxLen)
	if !r.emailInKey {
		off += uint32(r.emailLen)
	}
	return off
}

func (s *Snapshot) email(r *row) string {
	if r.emailInKey {
		// key = lower(name) NUL lower(taxId) NUL email NUL id
		key := s.key(r)
		start := int(r.lowerNameLen) + 1
		start += strings.IndexByte(key[start:], 0) + 1
		return key[start : start+int(r.emailLen)]
	}
	return s.str(r.off+uint32(r.nameLen)+uint32(r.taxLen), r.emailLen)
}

func (s *Snapshot) key(r *row) string { return s.str(r.keyOff(), r.keyLen) }

func (s *Snapshot) lowerName(r *row) string { return s.str(r.keyOff(), r.lowerNameLen) }

// public turns a compact row into a Row.
func (s *Snapshot) public(r *row) Row {
	return Row{
		ID: r.id, Name: s.name(r), TaxID: s.taxID(r), Email: s.email(r),
		Segment: s.dict[r.segment], City: s.dict[r.city], Country: s.dict[r.country], Owners: s.dict[r.owners],
		CPQIDs: parseIDList(s.dict[r.cpqIDs]), UpdatedAt: time.Unix(int64(r.updated), 0).UTC(),
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
	// Text is what the user typed: every word must occur (case-insensitive) in the customer's
	// name, tax id, e-mail or id. Empty matches everyone.
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
	terms := SearchTerms(q.Text)
	n := len(s.rows)
	res := Result{Total: n}
	var hits []uint64
	if len(terms) > 0 {
		hits = make([]uint64, (n+63)/64)
		res.Total = 0
		for i := range s.rows {
			if matches(s.key(&s.rows[i]), terms) {
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

// SearchTerms splits what the user typed into lower-case words.
func SearchTerms(text string) []string {
	return strings.Fields(strings.ToLower(text))
}

func matches(key string, terms []string) bool {
	for _, t := range terms {
		if !strings.Contains(key, t) {
			return false
		}
	}
	return true
}

// searchKey is what Search looks at: lower-case name, tax id, e-mail and the id, separated by
// NUL so that no word matches across two fields. The name comes first (the name order reads it).
func searchKey(name, taxID, email string, id int32) string {
	return strings.ToLower(name) + "\x00" + strings.ToLower(taxID) + "\x00" + strings.ToLower(email) + "\x00" + strconv.Itoa(int(id))
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

func (s *Snapshot) buildOrder(key SortKey) []int32 {
	idx := make([]int32, len(s.rows))
	for i := range idx {
		idx[i] = int32(i)
	}
	var compare func(a, b *row) int
	switch key {
	case SortByName:
		compare = func(a, b *row) int { return strings.Compare(s.lowerName(a), s.lowerName(b)) }
	case SortByTaxID:
		compare = func(a, b *row) int { return strings.Compare(s.taxID(a), s.taxID(b)) }
	case SortByCity:
		compare = func(a, b *row) int { return strings.Compare(s.dict[a.city], s.dict[b.city]) }
	case SortBySegment:
		compare = func(a, b *row) int { return strings.Compare(s.dict[a.segment], s.dict[b.segment]) }
	case SortByUpdated:
		compare = func(a, b *row) int { return cmp.Compare(a.updated, b.updated) }
	}
	// Rows are in id order, so breaking ties by position breaks them by id. An explicit tie-break
	// with the (unstable, O(n log n)) pattern-defeating quicksort gives the stable order at about
	// a third of SortStableFunc's cost (its O(n log² n) merging showed in the cold first page).
	slices.SortFunc(idx, func(i, j int32) int {
		if c := compare(&s.rows[i], &s.rows[j]); c != 0 {
			return c
		}
		return cmp.Compare(i, j)
	})
	return idx
}

// Duplicates returns the customers (at most limit) whose name equals name (ignoring case and
// repeated spaces) or whose tax id equals taxID (ignoring case and spaces), except exceptID.
func (s *Snapshot) Duplicates(name, taxID string, exceptID int32, limit int) []Row {
	wantName := NormalizeName(name)
	wantTax := NormalizeTaxID(taxID)
	var out []Row
	for i := range s.rows {
		r := &s.rows[i]
		if r.id == exceptID {
			continue
		}
		if (wantName != "" && s.lowerName(r) == wantName) || (wantTax != "" && s.taxID(r) == wantTax) {
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

// builder collects customers into a new snapshot.
type builder struct {
	rows    []row
	text    strings.Builder
	dict    []string
	dictIdx map[string]uint32
	owners  map[int64]Owner
	sorted  bool
	lastID  int32
}

// errTooLarge: the compact text would not fit 32-bit offsets (4 GiB of names).
var errTooLarge = errors.New("customercache: customer list too large")

func newBuilder(sizeHint int) *builder {
	b := &builder{dictIdx: map[string]uint32{}, owners: map[int64]Owner{}, sorted: true}
	if sizeHint > 0 {
		b.rows = make([]row, 0, sizeHint)
	}
	b.intern("") // index 0 is the empty string
	return b
}

func (b *builder) intern(s string) uint32 {
	if i, ok := b.dictIdx[s]; ok {
		return i
	}
	i := uint32(len(b.dict))
	b.dict = append(b.dict, s)
	b.dictIdx[s] = i
	return i
}

// add appends one customer. It copies what it keeps, so c may be reused.
func (b *builder) add(c *apiclient.Customer) error {
	r, err := makeRow(c, b.text.Len(), b.intern)
	if err != nil {
		return err
	}
	writeRowText(&b.text, c)
	if len(b.rows) > 0 && c.ID <= b.lastID {
		b.sorted = false
	}
	b.lastID = c.ID
	b.rows = append(b.rows, r)
	for _, o := range c.Owners {
		b.owners[o.OwnerID] = Owner{ID: o.OwnerID, Name: o.Name, Email: o.Email}
	}
	return nil
}

// clip shortens s to at most max bytes at a rune boundary, so each length fits 16 bits.
func clip(s string) string {
	// The key holds three fields lower-cased (which may grow a string by half) plus the id.
	const maxLen = math.MaxUint16 / 8
	if len(s) <= maxLen {
		return s
	}
	s = s[:maxLen]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// makeRow builds the compact row of c whose text starts at offset off.
func makeRow(c *apiclient.Customer, off int, intern func(string) uint32) (row, error) {
	if off > math.MaxUint32-4*math.MaxUint16 {
		return row{}, errTooLarge
	}
	name, taxID, email := clip(c.Name), clip(c.TaxID), clip(c.Email)
	key := searchKey(name, taxID, email, c.ID)
	ownerNames := make([]string, 0, len(c.Owners))
	for _, o := range c.Owners {
		ownerNames = append(ownerNames, o.Name)
	}
	return row{
		id: c.ID, off: uint32(off),
		nameLen: uint16(len(name)), taxLen: uint16(len(taxID)), emailLen: uint16(len(email)),
		keyLen: uint16(len(key)), lowerNameLen: uint16(strings.IndexByte(key, 0)), emailInKey: emailInKey(email),
		segment: intern(c.Segment), city: intern(c.Address.City), country: intern(c.Address.Country),
		owners: intern(strings.Join(ownerNames, ", ")), cpqIDs: intern(formatIDList(c.CPQIDs)),
		updated: unixSeconds(c.UpdatedAt),
	}, nil
}

// emailInKey reports whether the e-mail can be read back from the search key.
func emailInKey(email string) bool { return strings.ToLower(email) == email }

// unixSeconds fits a time into 32 bits (1970 to 2106); the list shows minutes at most.
func unixSeconds(t time.Time) uint32 {
	return uint32(min(max(t.Unix(), 0), math.MaxUint32))
}

// writeRowText appends the text makeRow points at.
func writeRowText(w *strings.Builder, c *apiclient.Customer) {
	name, taxID, email := clip(c.Name), clip(c.TaxID), clip(c.Email)
	w.WriteString(name)
	w.WriteString(taxID)
	if !emailInKey(email) {
		w.WriteString(email)
	}
	w.WriteString(searchKey(name, taxID, email, c.ID))
}

func (b *builder) build(etag string) *Snapshot {
	if !b.sorted {
		slices.SortStableFunc(b.rows, func(x, y row) int { return cmp.Compare(x.id, y.id) })
		// A list with the same id twice keeps the last one.
		b.rows = slices.CompactFunc(b.rows, func(x, y row) bool { return x.id == y.id })
	}
	owners := make([]Owner, 0, len(b.owners))
	for _, o := range b.owners {
		owners = append(owners, o)
	}
	sort.Slice(owners, func(i, j int) bool { return owners[i].ID < owners[j].ID })
	// Exact-size copies: the builder's buffers grew by doubling and may be half empty.
	return &Snapshot{etag: etag, rows: slices.Clone(b.rows), text: strings.Clone(b.text.String()), dict: slices.Clone(b.dict), owners: owners}
}

// withCustomer returns a new snapshot where c replaces the customer with its id, or is added.
// The new snapshot shares the old text; only the rows are copied.
func (s *Snapshot) withCustomer(c *apiclient.Customer) (*Snapshot, error) {
	dict := slices.Clone(s.dict)
	intern := func(v string) uint32 {
		// A few entries per update: a linear look-up in the recent part is enough, and a
		// duplicate entry would only cost a few bytes.
		for i := len(dict) - 1; i >= 0 && i >= len(dict)-64; i-- {
			if dict[i] == v {
				return uint32(i)
			}
		}
		dict = append(dict, v)
		return uint32(len(dict) - 1)
	}
	var tail strings.Builder
	tail.WriteString(s.tail)
	r, err := makeRow(c, len(s.text)+tail.Len(), intern)
	if err != nil {
		return nil, err
	}
	writeRowText(&tail, c)
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
	return &Snapshot{etag: s.etag, rows: rows, text: s.text, tail: tail.String(), dict: dict, owners: owners}, nil
}

// formatIDList writes configurator ids as "1,2,3" (a dictionary entry: few distinct sets).
func formatIDList(ids []int32) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(id)))
	}
	return b.String()
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
	terms := SearchTerms(q.Text)
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
		if len(terms) > 0 && !matches(s.key(r), terms) {
			continue
		}
		if err := fn(s.public(r)); err != nil {
			return err
		}
	}
	return nil
}
