package workindex

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cpqportal/portal/internal/store"
)

// Kind says whether a row is a quote or a contract.
type Kind string

// The kinds of rows.
const (
	KindQuote    Kind = "quote"
	KindContract Kind = "contract"
)

// ErrUnavailable is returned by List when the store cannot be read: the lists say "lists
// unavailable right now", every other action goes on.
var ErrUnavailable = errors.New("workindex: lists unavailable")

// numShards is how many store keys hold the rows. 64 keeps a shard of 10,000 + 10,000 rows near
// 300 rows (about 100 KB of JSON), so one write rewrites little and a reload reads few shards.
const numShards = 64

const (
	shardKeyPrefix = "workindex/shard/"
	genKey         = "workindex/gen"
	// maxOwners and maxDenied bound the people kept per row (the most recent stay).
	maxOwners = 64
	maxDenied = 64
	// seenWriteEvery: opening a row the viewer already owns writes again only after this long
	// (so reading a page twice costs no store write).
	seenWriteEvery = time.Minute
)

// Options tune the index; zero values take the defaults.
type Options struct {
	// MaxRows bounds the rows kept per kind (default 100,000); the rows seen longest ago go first.
	MaxRows int
	// RefreshEvery is how often a list asks the store whether other replicas wrote (default 1 s).
	RefreshEvery time.Duration
	// WriteTimeout bounds each write, so a slow store never holds an action up (default 2 s).
	WriteTimeout time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Viewer is the person a row is recorded for or listed to.
type Viewer struct {
	// Subject is the user's OpenID subject; only a hash of it is stored.
	Subject string
	// Name is the display name recorded as creator or last changer.
	Name string
	// Team: the viewer has a role that sees every row (PORTAL_TEAM_ROLES).
	Team bool
}

// Key is the stored form of the viewer's subject (a hash: any subject is safe and none is kept).
func (v Viewer) Key() string { return PersonKey(v.Subject) }

// PersonKey is the stored form of a subject.
func PersonKey(subject string) string {
	if subject == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(subject))
	return hex.EncodeToString(sum[:12])
}

// Act says what the viewer did when a row was seen.
type Act int

// The acts.
const (
	// ActOpened: the viewer read it (a page, a list refresh): they own the row from now on.
	ActOpened Act = iota
	// ActChanged: the viewer changed it through the portal.
	ActChanged
	// ActCreated: the viewer created it through the portal.
	ActCreated
	// ActRefreshed: a background re-read (a stale row on a list, a batch result): the facts are
	// updated, owners are not.
	ActRefreshed
)

// Row is one quote or contract as last seen. Quotes are keyed by quote id, contracts by contract id.
type Row struct {
	Kind           Kind   `json:"k"`
	QuoteID        int64  `json:"q,omitempty"`
	CPQID          int32  `json:"p,omitempty"`
	CustomerID     int32  `json:"cu,omitempty"`
	Customer       string `json:"cn,omitempty"`
	Configurator   string `json:"cf,omitempty"`
	ContractID     int32  `json:"c,omitempty"`
	ContractNumber string `json:"n,omitempty"`
	Stage          Stage  `json:"s"`
	// OneOffCents and MonthlyCents are the net totals as last seen.
	OneOffCents  int64 `json:"o"`
	MonthlyCents int64 `json:"m"`
	// CreatedBy and ChangedBy are person keys (PersonKey); the names are as they signed in.
	CreatedBy     string `json:"cb,omitempty"`
	CreatedByName string `json:"cbn,omitempty"`
	ChangedBy     string `json:"chb,omitempty"`
	ChangedByName string `json:"chbn,omitempty"`
	// Owners are the people who created, changed or opened it (most recent last).
	Owners []string `json:"ow,omitempty"`
	// Denied are the people the v2 API answered 403 or 404 for.
	Denied []string `json:"dn,omitempty"`
	// ChangedAt is the last change known (through the portal, or the v2 document's own time).
	ChangedAt time.Time `json:"ca"`
	// SeenAt is when the portal last read it from the v2 API: the rows's "as of".
	SeenAt time.Time `json:"sa"`

	lowerCustomer string // for "find" (not stored)
}

// ID is the row's id: the quote id or the contract id.
func (r *Row) ID() int64 {
	if r.Kind == KindContract {
		return int64(r.ContractID)
	}
	return r.QuoteID
}

// Visible is the visibility rule: nobody sees a row the v2 API refused them (403/404, read with
// their own token); a team role sees every other row; everyone else sees the rows they created,
// changed or opened through the portal.
func (r *Row) Visible(v Viewer) bool { return r.visibleTo(v.Key(), v.Team) }

func (r *Row) visibleTo(key string, team bool) bool {
	if key == "" || slices.Contains(r.Denied, key) {
		return false
	}
	return team || slices.Contains(r.Owners, key)
}

// Mine: the viewer created it or changed it last ("My quotes").
func (r *Row) Mine(v Viewer) bool { return r.mineOf(v.Key()) }

func (r *Row) mineOf(key string) bool {
	return key != "" && (r.CreatedBy == key || r.ChangedBy == key) && !slices.Contains(r.Denied, key)
}

// ValueCents orders rows by value: the one-off total plus a year of the monthly total.
func (r *Row) ValueCents() int64 { return r.OneOffCents + 12*r.MonthlyCents }

type rowKey struct {
	kind Kind
	id   int64
}

func keyOf(kind Kind, id int64) rowKey { return rowKey{kind, id} }

func shardOf(k rowKey) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(k.kind))
	_, _ = h.Write([]byte(strconv.FormatInt(k.id, 10)))
	return int(h.Sum32() % numShards)
}

func shardKey(n int) string { return fmt.Sprintf("%s%02d", shardKeyPrefix, n) }

// shardDoc is one shard as stored.
type shardDoc struct {
	Gen  uint64 `json:"gen"`
	Rows []Row  `json:"rows"`
}

// Index records sightings and answers lists.
type Index struct {
	store store.Store
	opts  Options

	refreshMu sync.Mutex // one refresh at a time
	mu        sync.RWMutex
	shards    [numShards]map[rowKey]*Row
	gens      [numShards]uint64
	checked   time.Time
	loaded    bool
	// downUntil: the store failed; until then reads and writes give up at once instead of waiting
	// for it again on every page and action.
	downUntil time.Time
}

// storeDownFor is how long the index stops asking a store that failed.
const storeDownFor = 5 * time.Second

// storeDown reports whether the store failed a moment ago.
func (ix *Index) storeDown() bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.opts.Now().Before(ix.downUntil)
}

// markDown notes a store failure.
func (ix *Index) markDown() {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.downUntil = ix.opts.Now().Add(storeDownFor)
}

// New returns an index kept in st.
func New(st store.Store, opts Options) *Index {
	if opts.MaxRows <= 0 {
		opts.MaxRows = 100_000
	}
	if opts.RefreshEvery <= 0 {
		opts.RefreshEvery = time.Second
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = 2 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	ix := &Index{store: st, opts: opts}
	for i := range ix.shards {
		ix.shards[i] = map[rowKey]*Row{}
	}
	return ix
}

// perShard is the row limit of one shard and kind.
func (ix *Index) perShard() int { return max(1, ix.opts.MaxRows/numShards) }

// QuoteSighting is what a v2 quote document (call 10 and the answers of every quote action) says.
type QuoteSighting struct {
	QuoteID      int64
	CPQID        int32
	CustomerID   int32
	Customer     string // the customer's name, when known
	Configurator string // the configurator's name, when known
	// ContractID and ContractNumber are the quote's contract (0 and "" when it has none).
	ContractID     int32
	ContractNumber string
	OneOffCents    int64
	MonthlyCents   int64
	// UpdatedAt is the quote document's updatedAt, when it has one.
	UpdatedAt time.Time
}

// ContractSighting is what a v2 contract document (GET /v2/contract, the signature and archive
// answers, batch results) says.
type ContractSighting struct {
	ContractID   int32
	Number       string
	QuoteID      int64
	CPQID        int32
	CustomerID   int32
	Customer     string
	Facts        ContractFacts
	OneOffCents  int64
	MonthlyCents int64
	CreatedAt    time.Time
}

// ObserveQuote records a quote the viewer saw (act says how).
func (ix *Index) ObserveQuote(ctx context.Context, v Viewer, s QuoteSighting, act Act) error {
	if s.QuoteID <= 0 {
		return fmt.Errorf("workindex: quote without id")
	}
	contractStage := Stage("")
	if s.ContractID > 0 {
		contractStage = ix.stageOf(keyOf(KindContract, int64(s.ContractID)))
	}
	stage := StageOfQuote(s.ContractID > 0 || s.ContractNumber != "", contractStage)
	return ix.write(ctx, keyOf(KindQuote, s.QuoteID), v, act, true, func(r *Row) bool {
		changed := r.Stage != stage || r.OneOffCents != s.OneOffCents || r.MonthlyCents != s.MonthlyCents
		r.QuoteID, r.CPQID, r.CustomerID = s.QuoteID, s.CPQID, s.CustomerID
		r.Customer = firstNonEmpty(s.Customer, r.Customer)
		r.Configurator = firstNonEmpty(s.Configurator, r.Configurator)
		if s.ContractID > 0 {
			r.ContractID = s.ContractID
		}
		r.ContractNumber = firstNonEmpty(s.ContractNumber, r.ContractNumber)
		r.Stage, r.OneOffCents, r.MonthlyCents = stage, s.OneOffCents, s.MonthlyCents
		if s.UpdatedAt.After(r.ChangedAt) {
			r.ChangedAt = s.UpdatedAt.UTC()
		}
		return changed
	})
}

// ObserveContract records a contract the viewer saw, and carries its stage to its quote's row
// when the index has that quote (a quote row is never made from a contract: the viewer did not
// read the quote).
func (ix *Index) ObserveContract(ctx context.Context, v Viewer, s ContractSighting, act Act) error {
	if s.ContractID <= 0 {
		return fmt.Errorf("workindex: contract without id")
	}
	stage := StageOfContract(s.Facts)
	err := ix.write(ctx, keyOf(KindContract, int64(s.ContractID)), v, act, true, func(r *Row) bool {
		changed := r.Stage != stage || r.OneOffCents != s.OneOffCents || r.MonthlyCents != s.MonthlyCents
		r.ContractID, r.QuoteID, r.CPQID, r.CustomerID = s.ContractID, s.QuoteID, s.CPQID, s.CustomerID
		r.ContractNumber = firstNonEmpty(s.Number, r.ContractNumber)
		r.Customer = firstNonEmpty(s.Customer, r.Customer)
		r.Stage, r.OneOffCents, r.MonthlyCents = stage, s.OneOffCents, s.MonthlyCents
		if r.ChangedAt.IsZero() && !s.CreatedAt.IsZero() {
			r.ChangedAt = s.CreatedAt.UTC()
		}
		return changed
	})
	if err != nil || s.QuoteID <= 0 {
		return err
	}
	quote := keyOf(KindQuote, s.QuoteID)
	if _, ok := ix.lookup(quote); !ok {
		return nil
	}
	// The quote's row follows its contract's stage; the viewer's act concerns the contract.
	return ix.write(ctx, quote, v, ActRefreshed, false, func(r *Row) bool {
		if r.Stage == stage && r.ContractID == s.ContractID {
			return false
		}
		r.ContractID = s.ContractID
		r.ContractNumber = firstNonEmpty(s.Number, r.ContractNumber)
		r.Stage = stage
		if r.Configurator == "" && s.CPQID != 0 {
			r.CPQID = s.CPQID
		}
		return true
	})
}

// Forget removes a row from the viewer's lists: the v2 API answered 403 or 404 for it, read with
// their token. A later successful read by them gives it back.
func (ix *Index) Forget(ctx context.Context, v Viewer, kind Kind, id int64) error {
	key := v.Key()
	if key == "" {
		return nil
	}
	k := keyOf(kind, id)
	if r, ok := ix.lookup(k); !ok || slices.Contains(r.Denied, key) {
		return nil
	}
	return ix.update(ctx, k, func(r *Row, exists bool) bool {
		if !exists {
			return false
		}
		r.Owners = slices.DeleteFunc(r.Owners, func(o string) bool { return o == key })
		r.Denied = appendBounded(slices.DeleteFunc(r.Denied, func(o string) bool { return o == key }), key, maxDenied)
		return true
	})
}

// write applies a sighting to row k: fill sets the facts and says whether they changed; act
// decides who is recorded. ownerCreates: the row is made when absent (a quote row followed from
// its contract is not).
func (ix *Index) write(ctx context.Context, k rowKey, v Viewer, act Act, create bool, fill func(r *Row) bool) error {
	now := ix.opts.Now().UTC()
	key := v.Key()
	// Nothing new: the viewer owns it, the facts are the same and it was seen a moment ago.
	if old, ok := ix.lookup(k); ok && (act == ActOpened || act == ActRefreshed) {
		probe := *old
		probe.Owners, probe.Denied = slices.Clone(old.Owners), slices.Clone(old.Denied)
		if !fill(&probe) && probe.Customer == old.Customer && probe.Configurator == old.Configurator &&
			probe.ContractNumber == old.ContractNumber && now.Sub(old.SeenAt) < seenWriteEvery &&
			(act == ActRefreshed || key == "" || (slices.Contains(old.Owners, key) && !slices.Contains(old.Denied, key))) {
			return nil
		}
	}
	return ix.update(ctx, k, func(r *Row, exists bool) bool {
		if !exists && !create {
			return false
		}
		if fill(r) || act == ActChanged || act == ActCreated {
			r.ChangedAt = now
		}
		r.SeenAt = now
		if key != "" && act != ActRefreshed {
			r.Owners = appendBounded(slices.DeleteFunc(r.Owners, func(o string) bool { return o == key }), key, maxOwners)
			r.Denied = slices.DeleteFunc(r.Denied, func(o string) bool { return o == key })
		}
		switch act {
		case ActCreated:
			if r.CreatedBy == "" {
				r.CreatedBy, r.CreatedByName = key, v.Name
			}
			r.ChangedBy, r.ChangedByName = key, v.Name
		case ActChanged:
			r.ChangedBy, r.ChangedByName = key, v.Name
		}
		return true
	})
}

// update runs fn on row k inside an atomic Update of its shard, then bumps the shard's
// generation and installs the shard in this replica's projection.
func (ix *Index) update(ctx context.Context, k rowKey, fn func(r *Row, exists bool) bool) error {
	if ix.storeDown() {
		return fmt.Errorf("workindex: write %s %d: %w (the store failed a moment ago)", k.kind, k.id, ErrUnavailable)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ix.opts.WriteTimeout)
	defer cancel()
	n := shardOf(k)
	var written *shardDoc
	err := ix.store.Update(ctx, shardKey(n), 0, func(old []byte) ([]byte, error) {
		doc := &shardDoc{}
		if old != nil {
			if err := json.Unmarshal(old, doc); err != nil {
				doc = &shardDoc{} // a damaged shard starts anew rather than blocking every write
			}
		}
		i := slices.IndexFunc(doc.Rows, func(r Row) bool { return r.Kind == k.kind && r.ID() == k.id })
		row := Row{Kind: k.kind}
		if i >= 0 {
			row = doc.Rows[i]
		}
		switch k.kind {
		case KindQuote:
			row.QuoteID = k.id
		case KindContract:
			row.ContractID = int32(k.id)
		}
		if !fn(&row, i >= 0) {
			return nil, store.ErrSkip
		}
		if i >= 0 {
			doc.Rows[i] = row
		} else {
			doc.Rows = append(doc.Rows, row)
		}
		doc.Rows = ix.evict(doc.Rows, k.kind)
		doc.Gen++
		written = doc
		return json.Marshal(doc)
	})
	if err != nil {
		ix.markDown()
		return fmt.Errorf("workindex: write %s %d: %w", k.kind, k.id, err)
	}
	if written == nil {
		return nil
	}
	gen := written.Gen
	if err := ix.generations().Raise(ctx, n, gen); err != nil {
		// The shard is written; other replicas see it at the next write of that shard.
		return fmt.Errorf("workindex: write generations: %w", err)
	}
	ix.install(n, written)
	return nil
}

// generations is the vector of the shards' generations (store.Generations); it never expires,
// like the shards.
func (ix *Index) generations() store.Generations {
	return store.Generations{Store: ix.store, Key: genKey, Shards: numShards}
}

// evict keeps at most perShard rows of kind, dropping those seen longest ago.
func (ix *Index) evict(rows []Row, kind Kind) []Row {
	limit, count := ix.perShard(), 0
	for i := range rows {
		if rows[i].Kind == kind {
			count++
		}
	}
	for count > limit {
		oldest := -1
		for i := range rows {
			if rows[i].Kind == kind && (oldest < 0 || rows[i].SeenAt.Before(rows[oldest].SeenAt)) {
				oldest = i
			}
		}
		rows = slices.Delete(rows, oldest, oldest+1)
		count--
	}
	return rows
}

// install replaces shard n of the projection with doc, unless the projection already holds a
// newer generation.
func (ix *Index) install(n int, doc *shardDoc) {
	m := make(map[rowKey]*Row, len(doc.Rows))
	for i := range doc.Rows {
		r := doc.Rows[i]
		r.lowerCustomer = strings.ToLower(r.Customer)
		m[keyOf(r.Kind, r.ID())] = &r
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if doc.Gen < ix.gens[n] {
		return
	}
	ix.shards[n], ix.gens[n] = m, doc.Gen
}

// lookup returns row k from this replica's projection (no store read).
func (ix *Index) lookup(k rowKey) (*Row, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	r, ok := ix.shards[shardOf(k)][k]
	return r, ok
}

func (ix *Index) stageOf(k rowKey) Stage {
	if r, ok := ix.lookup(k); ok {
		return r.Stage
	}
	return ""
}

// refresh brings the projection up to date with the store: the generations first, then only
// the shards another replica changed. It asks at most once per RefreshEvery unless force.
func (ix *Index) refresh(ctx context.Context, force bool) error {
	ix.refreshMu.Lock()
	defer ix.refreshMu.Unlock()
	now := ix.opts.Now()
	ix.mu.RLock()
	fresh := ix.loaded && now.Sub(ix.checked) < ix.opts.RefreshEvery
	ix.mu.RUnlock()
	if fresh && !force {
		return nil
	}
	if ix.storeDown() {
		return fmt.Errorf("%w: the store failed a moment ago", ErrUnavailable)
	}
	gens, err := ix.generations().Read(ctx)
	if err != nil {
		ix.markDown()
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	for n := range numShards {
		ix.mu.RLock()
		have := ix.gens[n]
		ix.mu.RUnlock()
		if gens[n] <= have && ix.loaded {
			continue
		}
		if gens[n] == 0 {
			continue
		}
		raw, err := ix.store.Get(ctx, shardKey(n))
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			ix.markDown()
			return fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		doc := &shardDoc{}
		if err := json.Unmarshal(raw, doc); err != nil {
			continue
		}
		ix.install(n, doc)
	}
	ix.mu.Lock()
	ix.loaded, ix.checked = true, now
	ix.mu.Unlock()
	return nil
}

// Lookup returns the row of a quote or contract as this replica last knew it (after a refresh
// when one is due), for the viewer; false when absent or not visible to them.
func (ix *Index) Lookup(ctx context.Context, v Viewer, kind Kind, id int64) (Row, bool) {
	if err := ix.refresh(ctx, false); err != nil {
		return Row{}, false
	}
	r, ok := ix.lookup(keyOf(kind, id))
	if !ok || !r.Visible(v) {
		return Row{}, false
	}
	return *r, true
}

func appendBounded(list []string, s string, limit int) []string {
	list = append(list, s)
	if len(list) > limit {
		list = slices.Delete(list, 0, len(list)-limit)
	}
	return list
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// MarkArchived records that the contract with this number was archived (a batch archive's
// result: the v2 archive call succeeded). Only a contract the index already has is changed; the
// row's owners stay as they were.
func (ix *Index) MarkArchived(ctx context.Context, number string) error {
	if err := ix.refresh(ctx, false); err != nil {
		return err
	}
	var found *Row
	ix.mu.RLock()
	for n := range ix.shards {
		for _, r := range ix.shards[n] {
			if r.Kind == KindContract && r.ContractNumber == number {
				found = r
				break
			}
		}
	}
	ix.mu.RUnlock()
	if found == nil {
		return nil
	}
	return ix.ObserveContract(ctx, Viewer{}, ContractSighting{ContractID: found.ContractID, Number: number, QuoteID: found.QuoteID,
		CPQID: found.CPQID, CustomerID: found.CustomerID, Facts: ContractFacts{Status: v2StatusArchived, Archived: true},
		OneOffCents: found.OneOffCents, MonthlyCents: found.MonthlyCents}, ActRefreshed)
}

// Peek returns a row from this replica's projection without a store read and without a
// visibility check: for labels of an object the viewer has just read from the v2 API themselves
// (the customer's name on a quote they have open), never for lists.
func (ix *Index) Peek(kind Kind, id int64) (Row, bool) {
	r, ok := ix.lookup(keyOf(kind, id))
	if !ok {
		return Row{}, false
	}
	return *r, true
}

// ContractStages returns the stage of each contract number this replica's projection has (one
// pass over the rows), for a page that lists contracts the viewer has just read themselves.
func (ix *Index) ContractStages(numbers []string) map[string]Stage {
	want := make(map[string]bool, len(numbers))
	for _, n := range numbers {
		want[n] = true
	}
	out := make(map[string]Stage, len(numbers))
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	for n := range ix.shards {
		for _, r := range ix.shards[n] {
			if r.Kind == KindContract && want[r.ContractNumber] {
				out[r.ContractNumber] = r.Stage
			}
		}
	}
	return out
}
