package apiclient

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// String path parameters arrive as exactly one segment, whatever they hold.
func TestContractNumberEscaping(t *testing.T) {
	t.Parallel()
	for _, number := range []string{
		"A/../../x",
		"%2F",
		"a b",
		"C-2026/ü€",
		"?query=1#fragment",
		"a;b=c,d",
		"...",
		".hidden",
		"契約-42",
		"100%",
		strings.Repeat("9", MaxSegmentBytes),
	} {
		t.Run(number[:min(len(number), 20)], func(t *testing.T) {
			t.Parallel()
			client, f := setup(t)
			const prefix = "/v2/contract/bycontractnumber/"
			escaped := url.PathEscape(number)
			f.handle("GET "+prefix+escaped, func(w http.ResponseWriter, r *http.Request) {
				if r.RequestURI != prefix+escaped {
					t.Errorf("RequestURI = %q, want %q", r.RequestURI, prefix+escaped)
				}
				if r.URL.Path != prefix+number {
					t.Errorf("decoded path = %q, want %q", r.URL.Path, prefix+number)
				}
				if r.URL.RawQuery != "" || r.URL.Fragment != "" {
					t.Errorf("query %q / fragment %q created from the number", r.URL.RawQuery, r.URL.Fragment)
				}
				if got := strings.Count(r.RequestURI, "/"); got != 4 {
					t.Errorf("RequestURI %q has %d slashes, want 4", r.RequestURI, got)
				}
				writeJSON(w, 200, contractJSON)
			})
			if _, err := client.Contracts.GetByNumber(authCtx(t), number); err != nil {
				t.Fatalf("GetByNumber(%q): %v", number, err)
			}
			if f.hits.Load() != 1 {
				t.Errorf("%d requests", f.hits.Load())
			}
		})
	}
}

// The archive calls and the attachment type escape the same way.
func TestOtherStringSegmentsEscaping(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	f.handle("GET /v2/contract/contractNumber/A%2F..%2Fb/archive", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, `{"contractNumber": "A/../b", "archived": true, "archiveId": 7}`)
	})
	f.handle("GET /v2/contract/digitalarchivepayload/A%2F..%2Fb", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, `{"contract": {}}`)
	})
	f.handle("POST /v2/attachment/file/quote/900001/attachmentType/..%2FOTHER", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 422, `{"code": "VALIDATION_FAILED"}`)
	})
	ctx := authCtx(t)
	a, err := client.Contracts.Archive(ctx, "A/../b")
	if err != nil || a.ArchiveID != "7" {
		t.Errorf("Archive = %+v, %v", a, err)
	}
	if _, err := client.Contracts.DigitalArchivePayload(ctx, "A/../b"); err != nil {
		t.Errorf("DigitalArchivePayload: %v", err)
	}
	if _, err := client.Attachments.Upload(ctx, 900001, "../OTHER", "a", "", 1, strings.NewReader("a")); !errors.Is(err, ErrUnprocessable) {
		t.Errorf("Upload with type ../OTHER: %v, want the service's 422", err)
	}
	if f.hits.Load() != 3 {
		t.Errorf("%d requests, want 3", f.hits.Load())
	}
}

func TestStringSegmentsRefused(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	ctx := authCtx(t)
	for name, number := range map[string]string{
		"empty":        "",
		"dot":          ".",
		"dot dot":      "..",
		"10 KB":        strings.Repeat("x", 10_000),
		"1025 bytes":   strings.Repeat("x", MaxSegmentBytes+1),
		"invalid UTF8": "C-\xff\xfe",
	} {
		for call, fn := range map[string]func() error{
			"GetByNumber":           func() error { _, err := client.Contracts.GetByNumber(ctx, number); return err },
			"Archive":               func() error { _, err := client.Contracts.Archive(ctx, number); return err },
			"DigitalArchivePayload": func() error { _, err := client.Contracts.DigitalArchivePayload(ctx, number); return err },
		} {
			err := fn()
			if !errors.Is(err, ErrInvalidParameter) {
				t.Errorf("%s with %s number: err = %v, want ErrInvalidParameter", call, name, err)
			}
		}
	}
	if n := f.hits.Load(); n != 0 {
		t.Errorf("%d requests sent for refused numbers", n)
	}
}

// An id below 1 never becomes a URL.
func TestInvalidIDsRefused(t *testing.T) {
	t.Parallel()
	client, f := setup(t)
	s := testSessionID
	for name, fn := range map[string]func(ctx context.Context) error{
		"init cpqId 0":       func(ctx context.Context) error { _, err := client.CPQ.Init(ctx, 0, 17); return err },
		"init customerId -1": func(ctx context.Context) error { _, err := client.CPQ.Init(ctx, 1, -1); return err },
		"addcart tofId min": func(ctx context.Context) error {
			_, err := client.CPQ.AddCart(ctx, s, 1, math.MinInt32, AddCartRequest{})
			return err
		},
		"addcart quoteId 0": func(ctx context.Context) error { _, err := client.CPQ.AddCartToQuote(ctx, s, 1, 11, 0); return err },
		"additem basketId -5": func(ctx context.Context) error {
			_, err := client.CPQ.AddItem(ctx, s, 1, 900001, -5, 1, AddItemRequest{})
			return err
		},
		"removeitem nodeId 0":   func(ctx context.Context) error { return client.CPQ.RemoveItem(ctx, s, 1, 900001, 700001, 0, 800001) },
		"removeitem parentId 0": func(ctx context.Context) error { return client.CPQ.RemoveItem(ctx, s, 1, 900001, 700001, 1, 0) },
		"removecart quoteId min": func(ctx context.Context) error {
			return client.CPQ.RemoveCart(ctx, s, 1, math.MinInt64, 700001)
		},
		"quantity basketId 0": func(ctx context.Context) error { _, err := client.CPQ.SetQuantity(ctx, s, 1, 1, 0, 1); return err },
		"validproducts tof 0": func(ctx context.Context) error { _, err := client.CPQ.ValidProducts(ctx, s, 1, 0); return err },
		"toflist quote 0":     func(ctx context.Context) error { _, err := client.CPQ.TOFList(ctx, 1, 17, 0); return err },
		"discounts cpq -1":    func(ctx context.Context) error { _, err := client.CPQ.ApplicableDiscounts(ctx, s, -1, 1); return err },
		"apply quote 0": func(ctx context.Context) error {
			_, err := client.CPQ.ApplyDiscounts(ctx, s, 1, 0, ApplyDiscountsRequest{})
			return err
		},
		"reprice cpq 0": func(ctx context.Context) error {
			_, err := client.CPQ.Reprice(ctx, s, 0, 1, RepriceRequest{})
			return err
		},
		"package quote 0": func(ctx context.Context) error { _, err := client.CPQ.PackageConfig(ctx, s, 1, 11, 0); return err },
		"addpackage cpq 0": func(ctx context.Context) error {
			_, err := client.CPQ.AddPackage(ctx, s, 0, AddPackageRequest{})
			return err
		},
		"pricelist quote -1": func(ctx context.Context) error {
			_, err := client.CPQ.ChangePricelist(ctx, s, 1, -1, ChangePricelistRequest{})
			return err
		},
		"attachment delete 0": func(ctx context.Context) error { return client.Attachments.Delete(ctx, 0, 900001) },
		"attachment get q 0":  func(ctx context.Context) error { _, err := client.Attachments.Download(ctx, 5, 0); return err },
		"generate quote 0":    func(ctx context.Context) error { _, err := client.Contracts.Generate(ctx, 0); return err },
		"signature delete 0":  func(ctx context.Context) error { return client.Signatures.Delete(ctx, 0) },
		"contract get -1":     func(ctx context.Context) error { _, err := client.Contracts.Get(ctx, -1); return err },
		"contract pdf 0":      func(ctx context.Context) error { _, err := client.Contracts.DownloadPDF(ctx, 0); return err },
		"audit quote 0":       func(ctx context.Context) error { _, err := client.Contracts.ValidationAudit(ctx, 0); return err },
		"audit pdf quote 0":   func(ctx context.Context) error { _, err := client.Contracts.ValidationAuditPDF(ctx, 0); return err },
		"customer get 0":      func(ctx context.Context) error { _, err := client.Customers.Get(ctx, 0); return err },
		"search cpq 0":        func(ctx context.Context) error { _, err := client.Customers.Search(ctx, 0, ""); return err },
		"update id 0":         func(ctx context.Context) error { _, err := client.Customers.Update(ctx, CustomerUpdate{}); return err },
		"owners id 0":         func(ctx context.Context) error { _, err := client.Customers.SetOwners(ctx, 0, nil); return err },
		"owner add owner 0":   func(ctx context.Context) error { _, err := client.Customers.AddOwner(ctx, 17, 0); return err },
		"owner change id -1":  func(ctx context.Context) error { _, err := client.Customers.ChangeOwner(ctx, -1, 1, 2); return err },
		"profile delete cust 0": func(ctx context.Context) error {
			return client.Customers.DeleteProfile(ctx, 0, 3)
		},
		"profile delete profile -1": func(ctx context.Context) error { return client.Customers.DeleteProfile(ctx, 17, -1) },
		"item id not a uuid": func(ctx context.Context) error {
			_, err := client.CPQ.AddItem(ctx, s, 1, 1, 1, 1, AddItemRequest{ItemUniqueID: "not-a-uuid"})
			return err
		},
		"search query 2 KB": func(ctx context.Context) error {
			_, err := client.Customers.Search(ctx, 1, strings.Repeat("q", 2048))
			return err
		},
	} {
		if err := fn(authCtx(t)); !errors.Is(err, ErrInvalidParameter) {
			t.Errorf("%s: err = %v, want ErrInvalidParameter", name, err)
		}
	}
	if n := f.hits.Load(); n != 0 {
		t.Errorf("%d requests sent with invalid ids", n)
	}
}

func TestParseID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in     string
		want32 int32
		ok32   bool
		want64 int64
		ok64   bool
	}{
		{"1", 1, true, 1, true},
		{"2147483647", math.MaxInt32, true, math.MaxInt32, true},
		{"2147483648", 0, false, 2147483648, true},
		{"9223372036854775807", 0, false, math.MaxInt64, true},
		{"9223372036854775808", 0, false, 0, false},
		{"0", 0, false, 0, false},
		{"-1", 0, false, 0, false},
		{"+1", 0, false, 0, false},
		{" 1", 0, false, 0, false},
		{"1.0", 0, false, 0, false},
		{"0x10", 0, false, 0, false},
		{"", 0, false, 0, false},
		{"12/../3", 0, false, 0, false},
	} {
		got32, err32 := ParseID32(tc.in)
		if (err32 == nil) != tc.ok32 || got32 != tc.want32 || (err32 != nil && !errors.Is(err32, ErrInvalidParameter)) {
			t.Errorf("ParseID32(%q) = %d, %v", tc.in, got32, err32)
		}
		got64, err64 := parseID(tc.in, math.MaxInt64)
		if (err64 == nil) != tc.ok64 || got64 != tc.want64 {
			t.Errorf("parseID(%q, MaxInt64) = %d, %v", tc.in, got64, err64)
		}
	}
}

func TestFileNameOf(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		``:                              "",
		`attachment; filename="id.pdf"`: "id.pdf",
		`attachment; filename="../../etc/passwd"`:         "passwd",
		`attachment; filename="C:\\fake\\x.pdf"`:          "x.pdf",
		`attachment; filename*=UTF-8''d%C3%A9j%C3%A0.pdf`: "déjà.pdf",
		`attachment; filename="a` + "\x01" + `b.pdf"`:     "ab.pdf",
		`attachment; filename=".."`:                       "",
		`attachment`:                                      "",
		`inline; filename="scan 1.png"`:                   "scan 1.png",
		`;;garbage`:                                       "",
	} {
		if got := fileNameOf(in); got != want {
			t.Errorf("fileNameOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzSegment: any accepted string parameter becomes exactly one path
// segment that decodes back to itself.
func FuzzSegment(f *testing.F) {
	for _, s := range []string{"A/../../x", "%2F", "..", ".", "a b", "ü", "?#", "", "a/b/c", "%", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		p := segment("contractnumber", v)
		if p.err != nil {
			return
		}
		path, raw, err := expandPath("/v2/contract/bycontractnumber/{contractnumber}", []param{p})
		if err != nil {
			t.Fatal(err)
		}
		u := url.URL{Path: path, RawPath: raw}
		escaped := u.EscapedPath()
		seg, ok := strings.CutPrefix(escaped, "/v2/contract/bycontractnumber/")
		if !ok || strings.Contains(seg, "/") || seg == "." || seg == ".." || seg == "" {
			t.Fatalf("%q became %q", v, escaped)
		}
		back, err := url.PathUnescape(seg)
		if err != nil || back != v {
			t.Fatalf("%q escaped to %q, decodes to %q (%v)", v, seg, back, err)
		}
		// What the service parses is the same segment.
		parsed, err := url.ParseRequestURI(escaped)
		if err != nil || parsed.Path != "/v2/contract/bycontractnumber/"+v {
			t.Fatalf("service would see %v (%v)", parsed, err)
		}
	})
}
