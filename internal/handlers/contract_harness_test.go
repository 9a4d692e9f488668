package handlers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/demoidp"
	"github.com/cpqportal/portal/internal/v2sim"
	"github.com/cpqportal/portal/web/templates/quotes"
)

// docsEnv is a signed-in portal in front of its own simulator, plus a v2 client that talks to the
// simulator directly to set up data (quotes with carts) and check what it stored. The simulator
// accepts any bearer token (no IssuerURL), so the direct client needs no sign-in.
type docsEnv struct {
	p    *testPortal
	sim  *v2sim.Server
	api  *apiclient.Client
	user *http.Client
}

type docsOptions struct {
	sim         v2sim.Options
	uploadLimit int64
	v2Timeout   time.Duration
	// wrap, when set, stands between the portal and the simulator (to break answers on purpose).
	wrap func(sim http.Handler) http.Handler
	// metrics, when set, receives the portal's HTTP metrics.
	metrics prometheus.Registerer
	// users sign in besides the demo users.
	users []demoidp.User
	// login is the demo user e.user signs in as (default "sales"; the back-office tools need
	// "backoffice").
	login string
	// smtpURL is PORTAL_SMTP_URL (empty: e-mail is off).
	smtpURL string
	// batchConcurrency is PORTAL_BATCH_CONCURRENCY (default 0: one call at a time).
	batchConcurrency int
}

func newDocsEnv(t *testing.T, opts docsOptions) *docsEnv {
	t.Helper()
	simOpts := opts.sim
	if simOpts.Customers == 0 {
		simOpts.Customers = 5
	}
	if simOpts.Seed == 0 {
		simOpts.Seed = 1
	}
	simOpts.TempDir = t.TempDir()
	sim := v2sim.New(simOpts)
	var handler http.Handler = sim
	if opts.wrap != nil {
		handler = opts.wrap(sim)
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(func() { srv.Close(); _ = sim.Close() })
	api, err := apiclient.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	p := newPortal(t, portalOptions{v2URL: srv.URL, uploadLimit: opts.uploadLimit, v2Timeout: opts.v2Timeout, metrics: opts.metrics, extraUsers: opts.users, smtpURL: opts.smtpURL, batchConcurrency: opts.batchConcurrency})
	login := opts.login
	if login == "" {
		login = "sales"
	}
	return &docsEnv{p: p, sim: sim, api: api, user: p.login(t, login, login+"-demo")}
}

// ctx carries a token for the direct client.
func (e *docsEnv) ctx() context.Context {
	return apiclient.WithToken(context.Background(), "test-token")
}

// newQuote creates a quote with one cart (the default main product of the configurator's first
// TOF) for customer 1 of configurator 1, through the v2 API itself.
func (e *docsEnv) newQuote(t *testing.T) quotes.Ref {
	t.Helper()
	ctx := e.ctx()
	const cpqID, customerID = int32(1), int32(1)
	init, err := e.api.CPQ.Init(ctx, cpqID, customerID)
	if err != nil {
		t.Fatalf("init: %v", err)
	}
	tofID := init.TOFList[0].ID
	products, err := e.api.CPQ.ValidProducts(ctx, init.SessionID, cpqID, tofID)
	if err != nil {
		t.Fatalf("valid products: %v", err)
	}
	for _, p := range products {
		if p.Kind != "MAIN" {
			continue
		}
		quote, err := e.api.CPQ.AddCart(ctx, init.SessionID, cpqID, tofID, apiclient.AddCartRequest{
			ProductID: p.ProductID, TOFProductID: p.TOFProductID, CustomerID: customerID, Label: "Test cart",
		})
		if err != nil {
			t.Fatalf("add cart: %v", err)
		}
		return quotes.Ref{CPQID: cpqID, CustomerID: customerID, QuoteID: quote.QuoteID}
	}
	t.Fatal("no MAIN product offered")
	return quotes.Ref{}
}

// quote reads the quote document straight from the simulator.
func (e *docsEnv) quote(t *testing.T, ref quotes.Ref) *apiclient.Quote {
	t.Helper()
	q, err := e.api.CPQ.TOFList(e.ctx(), ref.CPQID, ref.CustomerID, ref.QuoteID)
	if err != nil {
		t.Fatalf("toflist: %v", err)
	}
	return q
}

// newContract makes a quote and generates its contract through the v2 API.
func (e *docsEnv) newContract(t *testing.T) (quotes.Ref, *apiclient.Contract) {
	t.Helper()
	ref := e.newQuote(t)
	res, err := e.api.Contracts.Generate(e.ctx(), ref.QuoteID)
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	_ = res.Close()
	contract, err := e.api.Contracts.Get(e.ctx(), res.ContractID)
	if err != nil {
		t.Fatalf("get contract: %v", err)
	}
	return ref, contract
}

// requestsTo lists what the simulator received for an endpoint (e.g. "attachments.upload").
func (e *docsEnv) requestsTo(endpoint string) []v2sim.RecordedRequest {
	var out []v2sim.RecordedRequest
	for _, r := range e.sim.Requests() {
		if r.Endpoint == endpoint {
			out = append(out, r)
		}
	}
	return out
}

// formPart is one part of a multipart body: a field (fileName "" and noFileName false), or a file.
type formPart struct {
	name        string
	fileName    string
	contentType string
	body        io.Reader
	// fileFieldWithoutName sends a part named like the file field but without a filename parameter.
	fileFieldWithoutName bool
}

// streamedMultipart writes the parts into a pipe as the request is sent (the body has no
// Content-Length: the portal has to enforce the limit while streaming).
func streamedMultipart(parts ...formPart) (io.Reader, string) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		pw.CloseWithError(writeParts(mw, parts))
	}()
	return pr, mw.FormDataContentType()
}

// bufferedMultipart builds the whole body (it has a Content-Length).
func bufferedMultipart(t *testing.T, parts ...formPart) (*bytes.Buffer, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if err := writeParts(mw, parts); err != nil {
		t.Fatal(err)
	}
	return &buf, mw.FormDataContentType()
}

func writeParts(mw *multipart.Writer, parts []formPart) error {
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		switch {
		case p.fileFieldWithoutName:
			h.Set("Content-Disposition", `form-data; name="`+p.name+`"`)
			h.Set("Content-Type", "application/octet-stream")
		case p.fileName != "" || p.contentType != "":
			h.Set("Content-Disposition", multipart.FileContentDisposition(p.name, p.fileName))
			ct := p.contentType
			if ct == "" {
				ct = "application/octet-stream"
			}
			h.Set("Content-Type", ct)
		default:
			h.Set("Content-Disposition", `form-data; name="`+p.name+`"`)
		}
		w, err := mw.CreatePart(h)
		if err != nil {
			return err
		}
		if _, err := io.Copy(w, p.body); err != nil {
			return err
		}
	}
	return mw.Close()
}

// randomBytes is a deterministic stream of n pseudo-random bytes.
func randomBytes(seed uint64, n int64) io.Reader {
	var key [32]byte
	key[0] = byte(seed)
	key[1] = byte(seed >> 8)
	return io.LimitReader(rand.NewChaCha8(key), n)
}

func sha256Of(t *testing.T, r io.Reader) string {
	t.Helper()
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// upload posts a multipart body to the quote's upload route as htmx does.
func (e *docsEnv) upload(t *testing.T, ref quotes.Ref, body io.Reader, contentType string, length int64) response {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, e.p.URL+ref.URL()+"/attachments", body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = length
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("HX-Request", "true")
	req.Header.Set("Origin", e.p.URL)
	resp, err := e.user.Do(req)
	if err != nil {
		t.Fatalf("upload: %v", err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return response{Response: resp, body: string(data)}
}

// htmxDo sends an htmx request (form fields urlencoded, or no body when form is nil) with the
// portal's Origin, as a browser on the portal would.
func (e *docsEnv) htmxDo(t *testing.T, method, path string, form url.Values) response {
	t.Helper()
	headers := map[string]string{"HX-Request": "true", "Origin": e.p.URL}
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
		headers["Content-Type"] = "application/x-www-form-urlencoded"
	}
	return e.p.do(t, e.user, method, path, body, headers)
}

// confirmedGenerate is the form "Generate contract" posts after the person confirmed: the state
// the confirmation (GET .../contract/confirm, read now) described.
func confirmedGenerate(t *testing.T, r response) url.Values {
	t.Helper()
	if r.StatusCode != http.StatusOK {
		t.Fatalf("generate confirmation: %d %s", r.StatusCode, r.body)
	}
	var answer confirmation
	if err := json.Unmarshal([]byte(r.body), &answer); err != nil || answer.State == "" || answer.Question == "" {
		t.Fatalf("generate confirmation %q: %v", r.body, err)
	}
	return url.Values{"confirmed": {answer.State}}
}

// generateForm asks the confirmation of "Generate contract" as the page does when clicked, and
// answers the form the POST sends once confirmed.
func (e *docsEnv) generateForm(t *testing.T, ref quotes.Ref) url.Values {
	t.Helper()
	return confirmedGenerate(t, e.p.get(t, e.user, ref.URL()+"/contract/confirm", htmx))
}
