package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/filetype"
)

// These tests check the benchmark's own logic (statistics, parsers, budgets, generated bodies). They
// time nothing: the measurements themselves run only with `make bench`.

func TestPercentilesNearestRank(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	var lat []time.Duration
	for i := 100; i >= 1; i-- { // unsorted on purpose
		lat = append(lat, ms(i))
	}
	got := percentiles(lat, 50, 99, 100)
	if got[0] != 50 || got[1] != 99 || got[2] != 100 {
		t.Fatalf("p50/p99/p100 of 1..100 ms = %v, want [50 99 100]", got)
	}
	if lat[0] != ms(100) {
		t.Fatal("percentiles sorted the caller's slice")
	}
	if got := percentiles([]time.Duration{ms(7)}, 50, 99); got[0] != 7 || got[1] != 7 {
		t.Fatalf("one sample: %v, want [7 7]", got)
	}
	if got := percentiles(nil, 50); got[0] != 0 {
		t.Fatalf("no samples: %v, want [0]", got)
	}
}

func TestSampleErrorCheck(t *testing.T) {
	ok := sample{requests: 5000, errors: 5}
	if err := ok.errorCheck("x"); err != nil {
		t.Fatalf("1 in 1000 failed requests must pass: %v", err)
	}
	bad := sample{requests: 5000, errors: 6, firstErr: errors.New("boom")}
	if err := bad.errorCheck("x"); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("more than 1 in 1000 failed must fail with the first error, got %v", err)
	}
	if err := (&sample{}).errorCheck("x"); err == nil {
		t.Fatal("a round without requests must fail")
	}
	s := sample{requests: 300, elapsed: 3 * time.Second}
	if s.rps() != 100 {
		t.Fatalf("rps = %v, want 100", s.rps())
	}
}

const benchOutput = `goos: linux
goarch: amd64
pkg: github.com/cpqportal/portal/internal/handlers
cpu: AMD EPYC
BenchmarkCustomerListPage-2        	    1366	   1548751 ns/op	  304771 B/op	    3173 allocs/op
BenchmarkQuotePage
BenchmarkQuotePage-2               	    1388	   1713076 ns/op	  221057 B/op	    2171 allocs/op
BenchmarkSearchKeystroke-2         	     442	  10064420 ns/op	         5.588 p50-ms	        95.90 p99-ms	  239363 B/op	    1579 allocs/op
PASS
ok  	github.com/cpqportal/portal/internal/handlers	49.750s
`

func TestParseBenchOutput(t *testing.T) {
	results, err := parseBenchOutput(strings.NewReader(benchOutput))
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 3 {
		t.Fatalf("got %d results, want 3: %+v", len(results), results)
	}
	want := benchResult{name: "BenchmarkQuotePage", nsPerOp: 1713076, bytesPerOp: 221057, allocsPerOp: 2171}
	if results[1] != want {
		t.Fatalf("second result %+v, want %+v", results[1], want)
	}
	if results[2].allocsPerOp != 1579 || results[2].bytesPerOp != 239363 {
		t.Fatalf("custom metrics confused the parser: %+v", results[2])
	}
}

func TestCheckBudgets(t *testing.T) {
	results, _ := parseBenchOutput(strings.NewReader(benchOutput))
	budgets := allocBudgets{Package: "./x", Budgets: map[string]int64{
		"BenchmarkCustomerListPage": 3000, // 3173: over
		"BenchmarkQuotePage":        2400, // 2171: within
		"BenchmarkMissing":          10,   // did not run
	}}
	problems := checkBudgets(results, budgets)
	if len(problems) != 2 {
		t.Fatalf("problems %q, want the over-budget and the missing benchmark", problems)
	}
	joined := strings.Join(problems, "\n")
	if !strings.Contains(joined, "BenchmarkCustomerListPage: 3173 allocs/op, over its budget of 3000") ||
		!strings.Contains(joined, "BenchmarkMissing did not run") {
		t.Fatalf("unexpected problems %q", problems)
	}
	budgets.Budgets = map[string]int64{"BenchmarkQuotePage": 2171}
	if problems := checkBudgets(results, budgets); len(problems) != 0 {
		t.Fatalf("exactly at the budget must pass, got %q", problems)
	}
}

// The budgets in the repository load and name benchmarks that exist in the package they point to.
func TestRepositoryBudgetsNameExistingBenchmarks(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	b, err := loadBudgets(filepath.Join(root, "bench", "alloc_budgets.json"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(b.Package), "*_test.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files in %s (%v)", b.Package, err)
	}
	var src bytes.Buffer
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(data)
	}
	for name := range b.Budgets {
		if !regexp.MustCompile(`func ` + name + `\(b \*testing\.B\)`).Match(src.Bytes()) {
			t.Errorf("bench/alloc_budgets.json names %s, which is not a benchmark of %s", name, b.Package)
		}
	}
}

func TestLoadBudgetsRefusesMistakes(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"unknown field":  `{"package": "./x", "budgets": {"BenchmarkA": 1}, "budget": {}}`,
		"no budgets":     `{"package": "./x", "budgets": {}}`,
		"not benchmark":  `{"package": "./x", "budgets": {"TestA": 1}}`,
		"zero budget":    `{"package": "./x", "budgets": {"BenchmarkA": 0}}`,
		"not json":       `budgets`,
		"no package set": `{"budgets": {"BenchmarkA": 1}}`,
	} {
		path := filepath.Join(dir, "b.json")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := loadBudgets(path); err == nil {
			t.Errorf("%s: loadBudgets accepted %s", name, text)
		}
	}
}

func TestSnakeName(t *testing.T) {
	for in, want := range map[string]string{
		"BenchmarkCustomerListPage": "customer_list_page",
		"BenchmarkQuotePage":        "quote_page",
	} {
		if got := snakeName(in); got != want {
			t.Errorf("snakeName(%q) = %q, want %q", in, got, want)
		}
	}
	if got := trimProcs("BenchmarkQuotePage-16"); got != "BenchmarkQuotePage" {
		t.Errorf("trimProcs = %q", got)
	}
}

func TestProcParsers(t *testing.T) {
	status := "Name:\tportal\nVmHWM:\t   65536 kB\nVmRSS:\t   32768 kB\n"
	if mb, err := statusFieldMB(status, "VmRSS"); err != nil || mb != 32 {
		t.Fatalf("VmRSS = %v, %v; want 32 MiB", mb, err)
	}
	if mb, err := statusFieldMB(status, "VmHWM"); err != nil || mb != 64 {
		t.Fatalf("VmHWM = %v, %v; want 64 MiB", mb, err)
	}
	if _, err := statusFieldMB(status, "VmSwap"); err == nil {
		t.Fatal("a missing field must be an error")
	}
	// The command name may hold spaces and parentheses.
	stat := "1234 (my (odd) proc) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 8 0 100 1000 200"
	if s, err := parseStatCPU(stat); err != nil || s != 3 {
		t.Fatalf("cpu = %v, %v; want (250+50)/100 = 3 s", s, err)
	}
	if _, err := parseStatCPU("garbage"); err == nil {
		t.Fatal("a malformed stat line must be an error")
	}
	if got := cpuModel(strings.NewReader("processor\t: 0\nmodel name\t: AMD   EPYC 7B13\nflags: x\n")); got != "AMD EPYC 7B13" {
		t.Fatalf("cpuModel = %q", got)
	}
	if got := cpuModel(strings.NewReader("")); got != "unknown CPU" {
		t.Fatalf("cpuModel of nothing = %q", got)
	}
}

func TestPatternReaderIsDeterministicAndExact(t *testing.T) {
	const size = 3*patternBlock + 12345
	whole, err := io.ReadAll(newPatternReader(size))
	if err != nil {
		t.Fatal(err)
	}
	if len(whole) != size {
		t.Fatalf("read %d bytes, want %d", len(whole), size)
	}
	// Read again in odd-sized pieces: the same bytes.
	r := newPatternReader(size)
	var pieces bytes.Buffer
	buf := make([]byte, 7777)
	for {
		n, err := r.Read(buf[:1+pieces.Len()%len(buf)])
		pieces.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(pieces.Bytes(), whole) {
		t.Fatal("reading in pieces gave other bytes than reading at once")
	}
	if bytes.Equal(whole[:patternBlock], whole[patternBlock:2*patternBlock]) || bytes.Equal(whole[patternBlock:2*patternBlock], whole[2*patternBlock:3*patternBlock]) {
		t.Fatal("two blocks are equal: the block index is missing")
	}
	// A PDF by its header, as the portal's upload check wants a .pdf (the stream group's upload).
	if kind, err := filetype.Check("bench.pdf", "application/octet-stream", whole[:512], false); err != nil || kind.MediaType != "application/pdf" {
		t.Fatalf("the pattern is not a PDF to the upload check: %+v, %v", kind, err)
	}
	sum := sha256.Sum256(whole)
	if got := patternSHA256(size); got != hex.EncodeToString(sum[:]) {
		t.Fatalf("patternSHA256 = %s, want %x", got, sum)
	}
}

func TestMultipartBodyHasItsDeclaredLengthAndParses(t *testing.T) {
	const size = 100_000
	body, contentType, length := multipartBody(map[string]string{"attachmentType": "OTHER"}, "f.bin", size)
	data, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(data)) != length {
		t.Fatalf("body is %d bytes, Content-Length would say %d", len(data), length)
	}
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		t.Fatal(err)
	}
	mr := multipart.NewReader(bytes.NewReader(data), params["boundary"])
	first, err := mr.NextPart()
	if err != nil || first.FormName() != "attachmentType" {
		t.Fatalf("first part %v (%v), want attachmentType", first, err)
	}
	if v, _ := io.ReadAll(first); string(v) != "OTHER" {
		t.Fatalf("attachmentType = %q", v)
	}
	file, err := mr.NextPart()
	if err != nil || file.FormName() != "file" || file.FileName() != "f.bin" {
		t.Fatalf("second part %v (%v), want the file", file, err)
	}
	content, _ := io.ReadAll(file)
	want, _ := io.ReadAll(newPatternReader(size))
	if !bytes.Equal(content, want) {
		t.Fatal("the file part is not the pattern")
	}
	if _, err := mr.NextPart(); err != io.EOF {
		t.Fatalf("after the file: %v, want the end of the form", err)
	}
}

func TestReportPrintsLinesAndWritesJSON(t *testing.T) {
	var out, errs bytes.Buffer
	rep := newReport(&out, &errs)
	rep.machine = "nproc 2, Test CPU, go1.26"
	rep.add("overhead_portal_rps", 1234.56789, "req/s")
	rep.add("page_weight_quote_kb", 30.1, "kB")
	if got := out.String(); got != "overhead_portal_rps: 1234.568 req/s\npage_weight_quote_kb: 30.1 kB\n" {
		t.Fatalf("printed %q", got)
	}
	path := filepath.Join(t.TempDir(), "sub", "results.json")
	if err := rep.write(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("results.json is not JSON: %v\n%s", err, data)
	}
	if got["machine"] != "nproc 2, Test CPU, go1.26" || got["overhead_portal_rps"] != 1234.568 || got["page_weight_quote_kb"] != 30.1 {
		t.Fatalf("results.json = %v", got)
	}
	if !strings.HasPrefix(string(data), "{\n  \"machine\"") {
		t.Fatalf("machine should come first:\n%s", data)
	}
}

func TestParseOptions(t *testing.T) {
	o, err := parseOptions([]string{"-only", "list, stream", "-quick"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !o.runs("list") || !o.runs("stream") || o.runs("overhead") || !o.quick {
		t.Fatalf("options %+v", o)
	}
	if _, err := parseOptions([]string{"-only", "lsit"}, io.Discard); err == nil || !strings.Contains(err.Error(), "unknown group") {
		t.Fatalf("a misspelt group must be refused, got %v", err)
	}
	if _, err := parseOptions([]string{"-c", "0"}, io.Discard); err == nil {
		t.Fatal("-c 0 must be refused")
	}
	o, _ = parseOptions(nil, io.Discard)
	for _, g := range groups {
		if !o.runs(g) {
			t.Fatalf("by default every group runs; %s does not", g)
		}
	}
}
