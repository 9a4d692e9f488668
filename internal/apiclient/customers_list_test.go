package apiclient

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/cpqportal/portal/internal/jsonscan"
)

// plainItem is a list item with strings, to compare.
type plainItem struct {
	ID                                         int32
	Name, TaxID, Email, Segment, City, Country string
	Owners                                     []plainOwner
	CPQIDs                                     []int32
	Updated                                    time.Time
}

type plainOwner struct {
	ID          int64
	Name, Email string
}

func plainOf(it *CustomerListItem) plainItem {
	p := plainItem{ID: it.ID, Name: string(it.Name), TaxID: string(it.TaxID), Email: string(it.Email), Segment: string(it.Segment),
		City: string(it.City), Country: string(it.Country), Updated: it.UpdatedAt}
	for _, o := range it.Owners {
		p.Owners = append(p.Owners, plainOwner{o.OwnerID, string(o.Name), string(o.Email)})
	}
	if len(it.CPQIDs) > 0 {
		p.CPQIDs = append([]int32(nil), it.CPQIDs...)
	}
	return p
}

// decodeItems runs the list decoder over data, one byte per read when oneByte is set (every
// token then crosses a buffer boundary).
func decodeItems(data []byte, oneByte bool) ([]plainItem, error) {
	var r io.Reader = bytes.NewReader(data)
	if oneByte {
		r = iotest.OneByteReader(r)
	}
	d := &listDecoder{sc: jsonscan.New(r, 64)}
	var out []plainItem
	err := d.decodeArray(func(it *CustomerListItem) error {
		out = append(out, plainOf(it))
		return nil
	})
	return out, err
}

// decodeStd decodes data as ListEach does, with encoding/json.
func decodeStd(data []byte) ([]plainItem, error) {
	type fieldsOnly Customer
	var list []fieldsOnly
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, err
	}
	var out []plainItem
	for i := range list {
		out = append(out, plainOf(ListItemOf((*Customer)(&list[i]))))
	}
	return out, nil
}

// unreadFields are the document's fields the list decoder skips without checking their type.
var unreadFields = []string{"phone", "status", "profiles", "attributes", "version", "createdAt"}

// compareDecoders fails when the list decoder and encoding/json disagree on data: both must
// accept it with the same items, or both refuse it (the decoder may accept a document whose only
// fault is the type of a field it does not read).
func compareDecoders(t *testing.T, data []byte) {
	t.Helper()
	want, stdErr := decodeStd(data)
	if stdErr == nil && want == nil && bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		// encoding/json reads a null list as empty; the client refuses it on purpose
		// (TestMalformedArrays): an import's duplicate check must not read "no customers" from it.
		for _, oneByte := range []bool{false, true} {
			if _, err := decodeItems(data, oneByte); !errors.Is(err, ErrMalformedResponse) {
				t.Fatalf("%q (oneByte %v): err = %v, want ErrMalformedResponse", data, oneByte, err)
			}
		}
		return
	}
	for _, oneByte := range []bool{false, true} {
		got, err := decodeItems(data, oneByte)
		switch {
		case err == nil && stdErr == nil:
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%.200q (oneByte %v):\n got %+v\nwant %+v", data, oneByte, got, want)
			}
		case err != nil && stdErr != nil:
		case err == nil:
			var typeErr *json.UnmarshalTypeError
			if errors.As(stdErr, &typeErr) && slicesContainsPrefix(unreadFields, typeErr.Field) {
				continue
			}
			t.Fatalf("%.200q (oneByte %v): accepted, encoding/json refuses: %v", data, oneByte, stdErr)
		default:
			t.Fatalf("%.200q (oneByte %v): refused (%v), encoding/json accepts: %+v", data, oneByte, err, want)
		}
	}
}

func slicesContainsPrefix(fields []string, path string) bool {
	top, _, _ := strings.Cut(path, ".")
	for _, f := range fields {
		if strings.EqualFold(f, top) {
			return true
		}
	}
	return false
}

func TestListDecoderAgreesWithEncodingJSON(t *testing.T) {
	t.Parallel()
	full := `{"id":1,"name":"Conti & D'Angelo S.n.c.","taxId":"IT31029068246","email":"sales@conti.it","phone":"+39 030","segment":"BUSINESS","status":"ACTIVE","address":{"street":"Via Roma 94","city":"Brescia","postalCode":"25121","country":"IT"},"owners":[{"ownerId":1009,"name":"Lucía García","email":"lucia@sales.example.com"}],"profiles":[{"profileId":1,"customerId":1,"profileType":"BILLING","contactName":"V","email":"v@x","phone":"1","createdAt":"2023-12-10T11:00:00Z"}],"cpqIds":[1,2,3,4],"attributes":{"creditRating":"B","tags":["x"],"deep":{"a":[[[]]]}},"version":1,"createdAt":"2023-12-09T11:00:00Z","updatedAt":"2024-01-15T13:00:00Z"}`
	cases := []string{
		`[]`, `[` + full + `]`, `[` + full + `,` + full + `]`, ` [ {} , null ] `,
		// Missing and null fields, unusual case of names, duplicates (the last wins).
		`[{"id":7}]`, `[{"id":null,"name":null,"address":null,"owners":null,"cpqIds":null,"updatedAt":null}]`,
		`[{"ID":3,"NAME":"upper","TaxId":"x","Address":{"CITY":"c"}}]`, `[{"name":"a","name":"b","owners":[{"ownerId":1}],"owners":[]}]`,
		`[{"owners":[null,{"ownerId":2,"name":"n"}],"cpqIds":[null,5]}]`,
		// Unicode: escapes, surrogate pairs, unpaired surrogates, invalid UTF-8, NUL.
		`[{"name":"caf\u00e9 \ud83d\ude00 \ud800 \"q\" \\ \/ \n","email":"A\u0000B"}]`, "[{\"name\":\"bad \xff\xfe utf8 \xe2\x82\",\"city\":\"ok\"}]",
		`[{"name":"` + strings.Repeat("Ω", 100_000) + `"}]`,
		// Wrong types of read fields.
		`[{"id":"1"}]`, `[{"id":1.5}]`, `[{"id":2147483648}]`, `[{"name":5}]`, `[{"address":"Brescia"}]`, `[{"address":{"city":1}}]`,
		`[{"address":{"street":[]}}]`, `[{"owners":{}}]`, `[{"owners":[1]}]`, `[{"owners":[{"ownerId":"x"}]}]`, `[{"cpqIds":["1"]}]`,
		`[{"updatedAt":"yesterday"}]`, `[{"updatedAt":5}]`, `[1]`, `["x"]`, `[[]]`, `[true]`,
		// Wrong types of skipped fields (the decoder accepts them).
		`[{"phone":5,"profiles":"none","version":"1"}]`,
		// Malformed.
		``, `{}`, `[`, `[{]`, `[{"id":1,}]`, `[{"id":1}`, `[{"id":1}]]`, `[{"id":1}] x`, `[{"id":01}]`, `[{"name":"a` + "\x01" + `"}]`,
		`[{"attributes":{"a":[1,]}}]`, `[{"attributes":tru}]`, `[{"name":"\x"}]`, `[{"id":1}{"id":2}]`,
		// A null list: refused on purpose where encoding/json reads it as empty.
		`null`, " null \n", `nul`, `null x`,
	}
	for _, c := range cases {
		compareDecoders(t, []byte(c))
	}
}

// TestListDecoderOnTheSimulatorsList compares the decoders over a real list (written by make
// bench's simulator) when one is at hand: set CUSTOMER_LIST_JSON to its file.
func TestListDecoderOnTheSimulatorsList(t *testing.T) {
	path := os.Getenv("CUSTOMER_LIST_JSON")
	if path == "" {
		t.Skip("CUSTOMER_LIST_JSON not set")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := decodeStd(data)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeItems(data, false)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("decoders disagree (err %v, %d vs %d items)", err, len(got), len(want))
	}
}

func FuzzListDecoder(f *testing.F) {
	for _, seed := range []string{
		`[{"id":1,"name":"n","taxId":"t","email":"e","segment":"s","address":{"city":"c","country":"IT"},"owners":[{"ownerId":2,"name":"o","email":"oe"}],"cpqIds":[1,2],"updatedAt":"2024-01-15T13:00:00Z","profiles":[{}],"attributes":{"a":[1]}}]`,
		`[{"id":null},null]`, `null`, `[{"name":"\ud800\u00e9"}]`, "[{\"name\":\"\xff\"}]", `[{"ID":1,"id":2}]`, `[{"owners":[null]}]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		compareDecoders(t, data)
	})
}

// TestListItems is the HTTP side: the ETag, 304, a callback's error, and malformed answers.
func TestListItems(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	const n = 10_000
	f.handle("GET /v2/customer/", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == `"big"` {
			w.Header().Set("ETag", `"big"`)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("ETag", `"big"`)
		bw := bufio.NewWriter(w)
		bw.WriteString("[")
		for i := 1; i <= n; i++ {
			if i > 1 {
				bw.WriteString(",")
			}
			fmt.Fprintf(bw, `{"id":%d,"name":"Customer %d","taxId":"IT%011d","segment":"BUSINESS","owners":[{"ownerId":1001,"name":"Ann"}],"cpqIds":[1],"profiles":[{"profileId":1}]}`, i, i, i)
		}
		bw.WriteString("]")
		bw.Flush()
	})
	count, sum := 0, int64(0)
	etag, notModified, err := client.Customers.ListItems(authCtx(t), "", func(c *CustomerListItem) error {
		count++
		sum += int64(c.ID)
		if string(c.Name) != fmt.Sprintf("Customer %d", c.ID) || len(c.Owners) != 1 || string(c.Owners[0].Name) != "Ann" {
			return fmt.Errorf("customer %d decoded as %+v", c.ID, plainOf(c))
		}
		return nil
	})
	if err != nil || count != n || sum != n*(n+1)/2 || etag != `"big"` || notModified {
		t.Fatalf("ListItems: %d customers (id sum %d), etag %q, notModified %v, err %v", count, sum, etag, notModified, err)
	}

	etag, notModified, err = client.Customers.ListItems(authCtx(t), `"big"`, func(*CustomerListItem) error { return errors.New("called") })
	if err != nil || !notModified || etag != `"big"` {
		t.Errorf("ListItems with etag = %q, %v, %v; want 304 handling", etag, notModified, err)
	}

	stop := errors.New("cache full")
	seen := 0
	_, _, err = client.Customers.ListItems(authCtx(t), "", func(*CustomerListItem) error {
		if seen++; seen == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || errors.Is(err, ErrMalformedResponse) || seen != 3 {
		t.Errorf("ListItems with failing callback: err %v after %d customers", err, seen)
	}
}

func TestListItemsMalformed(t *testing.T) {
	t.Parallel()
	for _, body := range []string{``, `{}`, `[{"id":1}`, `[{"id":"x"}]`, `[1] [2]`} {
		client, f := setup(t)
		f.handle("GET /v2/customer/", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, body)
		})
		_, _, err := client.Customers.ListItems(authCtx(t), "", func(*CustomerListItem) error { return nil })
		if !errors.Is(err, ErrMalformedResponse) {
			t.Errorf("body %q: %v, want ErrMalformedResponse", body, err)
		}
	}
}

func TestListItemsTooLarge(t *testing.T) {
	t.Parallel()
	client, f := setup(t, WithMaxResponseBytes(1000))
	f.handle("GET /v2/customer/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `[{"name":"`+strings.Repeat("x", 5000)+`"}]`)
	})
	_, _, err := client.Customers.ListItems(authCtx(t), "", func(*CustomerListItem) error { return nil })
	if !errors.Is(err, ErrResponseTooLarge) {
		t.Errorf("a list over the limit: %v, want ErrResponseTooLarge", err)
	}
}

// BenchmarkListDecode compares the list decoder with ListEach's encoding/json decode over the
// simulator's list (CUSTOMER_LIST_JSON, as in TestListDecoderOnTheSimulatorsList).
func BenchmarkListDecode(b *testing.B) {
	path := os.Getenv("CUSTOMER_LIST_JSON")
	if path == "" {
		b.Skip("CUSTOMER_LIST_JSON not set")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("scanner", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			d := &listDecoder{sc: jsonscan.New(bytes.NewReader(data), listReadBuffer)}
			if err := d.decodeArray(func(*CustomerListItem) error { return nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			c := &Client{maxResponseBytes: 1 << 40}
			err := c.decodeArray(bytes.NewReader(data), func(dec *json.Decoder) error {
				type fieldsOnly Customer
				var cust Customer
				return dec.Decode((*fieldsOnly)(&cust))
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
