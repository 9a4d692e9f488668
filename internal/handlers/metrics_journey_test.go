package handlers

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TestMetricsJourneyMovesEveryDocumentedFamily signs in, opens a page, uploads an attachment
// through the portal's own router and downloads it again: every metric family docs/operations.md
// documents that the handlers register moves at some point of that journey (a family counted
// nowhere, as portal_streamed_bytes_total once was, fails here), and the streamed bytes are the
// file's, both ways.
func TestMetricsJourneyMovesEveryDocumentedFamily(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	e := newDocsEnv(t, docsOptions{metrics: reg})
	ref := e.newQuote(t)

	moved := map[string]bool{}
	observe := func() {
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range families {
			for _, m := range f.GetMetric() {
				if sampleValue(m) != 0 {
					moved[f.GetName()] = true
				}
			}
		}
	}

	if resp := e.p.get(t, e.user, ref.baseURL(), nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("quote page: %d", resp.StatusCode)
	}

	// The upload's file part stops after 1 MiB until the gauges have been read during it.
	const size = 1536 << 10 // over the 512 KiB the upload reads before its v2 call
	file := bytes.Repeat([]byte("%PDF-1.4 metrics "), size/17+1)[:size]
	release := make(chan struct{})
	body, contentType := streamedMultipart(
		formPart{name: "attachmentType", body: strings.NewReader("OTHER")},
		formPart{name: "file", fileName: "journey.pdf", contentType: "application/pdf",
			body: io.MultiReader(bytes.NewReader(file[:size*2/3]), waitReader{release}, bytes.NewReader(file[size*2/3:]))},
	)
	uploaded := make(chan response, 1)
	go func() { uploaded <- e.upload(t, ref, body, contentType, -1) }()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(scrape(t, reg), "\nportal_uploads_in_flight 1\n") {
		if time.Now().After(deadline) {
			close(release)
			t.Fatal("portal_uploads_in_flight never showed the upload in progress")
		}
		time.Sleep(5 * time.Millisecond) // polling a condition, not waiting a fixed time
	}
	observe()
	close(release)
	if resp := <-uploaded; resp.StatusCode != http.StatusOK {
		t.Fatalf("upload: %d %s", resp.StatusCode, resp.body)
	}
	attachments := e.quote(t, ref).Attachments
	if len(attachments) != 1 {
		t.Fatalf("the simulator has %d attachments", len(attachments))
	}
	download := e.p.get(t, e.user, ref.attachmentURL(attachments[0].AttachmentID), nil)
	if download.StatusCode != http.StatusOK || len(download.body) != size {
		t.Fatalf("download: %d, %d bytes", download.StatusCode, len(download.body))
	}
	observe()

	after := scrape(t, reg)
	for _, want := range []string{
		`portal_streamed_bytes_total{direction="upload"} ` + strconv.FormatFloat(size, 'g', -1, 64),
		`portal_streamed_bytes_total{direction="download"} ` + strconv.FormatFloat(size, 'g', -1, 64),
		`portal_uploads_in_flight 0`,
	} {
		if !strings.Contains(after, "\n"+want+"\n") {
			t.Errorf("after the journey the scrape lacks %q:\n%s", want, seriesOf(after, "portal_streamed_bytes_total"))
		}
	}

	registered := map[string]bool{}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		registered[f.GetName()] = true
	}
	documented := documentedMetricFamilies(t)
	checked := 0
	for _, name := range documented {
		if !registered[name] {
			continue // registered by another package (the v2 client's, the provider's, main's)
		}
		checked++
		if !moved[name] {
			t.Errorf("%s (docs/operations.md) never moved during the journey", name)
		}
	}
	if checked < 6 {
		t.Errorf("only %d documented families are the handlers' (%v): the table was not read", checked, documented)
	}
}

// waitReader answers nothing until its channel closes, then io.EOF.
type waitReader struct{ release <-chan struct{} }

func (w waitReader) Read([]byte) (int, error) {
	<-w.release
	return 0, io.EOF
}

// sampleValue is a metric's value: a counter's or gauge's, a histogram's count.
func sampleValue(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetHistogram() != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return 0
}

// documentedMetricFamilies are the portal_* names of docs/operations.md's metrics table.
func documentedMetricFamilies(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range regexp.MustCompile("(?m)^\\| `(portal_[a-z0-9_]+)` \\|").FindAllStringSubmatch(string(doc), -1) {
		names = append(names, m[1])
	}
	return names
}

// seriesOf returns the lines of body about metric name.
func seriesOf(body, name string) string {
	var out []string
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, name) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
