package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"time"

	"github.com/cpqportal/portal/internal/apiclient"
)

// streamSize is the attachment streamed up and down: 1 GiB.
const streamSize = 1 << 30

// streamRepeats: each transfer runs this many times, alternating the order of the paths, and the
// fastest run counts (other processes share the machine; a 1 GiB transfer takes a few seconds).
// Downloads take under a second each and are the noisier: on 2 cores the portal's path keeps
// three processes busy (simulator, portal, client) where the direct path keeps two, so a
// neighbour's burst costs the portal's path more (docs/performance.md); they run five times.
const (
	streamRepeats         = 3
	streamDownloadRepeats = 5
)

// streamGrowthBudgetMiB bounds what the transfers add to the portal's resident memory (its peak
// less its RSS once signed in, before the first byte): a 1 GiB file is never held, only the copy
// buffers (4 MiB a download) and a multipart reader's are. The absolute peak
// (stream_portal_peak_rss_mb, target < 64 MiB) also counts the binary's pages and the start's
// heap, which grew with every feature (docs/performance.md "Resident memory of the list and the
// stream"); the growth is the streaming's own.
const streamGrowthBudgetMiB = 32

// measureStream uploads and downloads a 1 GiB attachment through a fresh portal process, directly
// against the simulator and through the bare proxy, and reports the portal's peak resident memory
// (VmHWM) over all of it.
func measureStream(ctx context.Context, l *lab, rep *report) error {
	size, repeats, downloadRepeats := int64(streamSize), streamRepeats, streamDownloadRepeats
	if l.opts.quick {
		size, repeats, downloadRepeats = 128<<20, 1, 1
	}
	env, err := l.newPortal(ctx, "portal-stream")
	if err != nil {
		return err
	}
	defer l.stopPortal(env)
	user, err := signIn(ctx, env, benchUser(3))
	if err != nil {
		return err
	}
	q, err := newBenchQuote(ctx, l, user)
	if err != nil {
		return err
	}
	rssBefore, err := env.proc.memoryMB("VmRSS")
	if err != nil {
		return err
	}
	api, err := l.v2Client()
	if err != nil {
		return err
	}
	s := &streamer{ctx: ctx, l: l, env: env, user: user, q: q, api: api, size: size,
		apiCtx: apiclient.WithToken(ctx, user.accessToken), want: patternSHA256(size),
		client: &http.Client{
			Transport:     &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 2},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}}
	defer s.client.CloseIdleConnections()

	best := map[string]time.Duration{}
	keep := func(name string, d time.Duration) {
		if cur, ok := best[name]; !ok || d < cur {
			best[name] = d
		}
	}
	// Uploads. Each stored file is deleted at once (frees the simulator's spill), except the last one
	// through the portal, which the downloads read.
	var viaPortal int32
	for r := range repeats {
		paths := []string{"direct", "bare_proxy", "portal"}
		if r%2 == 1 {
			paths = []string{"portal", "bare_proxy", "direct"}
		}
		for _, path := range paths {
			took, id, err := s.upload(path, fmt.Sprintf("bench-%s-%d.pdf", path, r))
			if err != nil {
				return fmt.Errorf("upload (%s): %w", path, err)
			}
			keep("upload_"+path, took)
			if path == "portal" {
				if viaPortal != 0 {
					s.remove(viaPortal)
				}
				viaPortal = id
			} else {
				s.remove(id)
			}
		}
	}
	defer s.remove(viaPortal)
	// CPU seconds each process spent on each path's downloads: where the two cores go.
	type downloadCPU struct{ server, sim, client float64 }
	cpu := map[string]*downloadCPU{}
	for r := range downloadRepeats {
		paths := []string{"direct", "bare_proxy", "portal"}
		if r%2 == 1 {
			paths = []string{"portal", "bare_proxy", "direct"}
		}
		for _, path := range paths {
			before := s.cpuSnapshot()
			took, err := s.download(path, viaPortal)
			if err != nil {
				return fmt.Errorf("download (%s): %w", path, err)
			}
			after := s.cpuSnapshot()
			if cpu[path] == nil {
				cpu[path] = &downloadCPU{}
			}
			cpu[path].server += (after.portal - before.portal) + (after.proxy - before.proxy)
			cpu[path].sim += after.sim - before.sim
			cpu[path].client += after.self - before.self
			keep("download_"+path, took)
		}
	}
	peak, err := env.proc.memoryMB("VmHWM")
	if err != nil {
		return err
	}
	if err := memorySnapshot(ctx, l, env, "stream_"); err != nil {
		return err
	}
	// Not timed: what went through the portal is byte for byte what was sent.
	if got, err := downloadSHA256(s.apiCtx, api, viaPortal, q.quoteID); err != nil || got != s.want {
		return fmt.Errorf("the file uploaded through the portal has sha256 %s (%v), want %s", got, err, s.want)
	}

	mbps := func(d time.Duration) float64 { return float64(size) / 1e6 / d.Seconds() }
	rep.add("stream_upload_portal_mbps", mbps(best["upload_portal"]), "MB/s")
	rep.add("stream_upload_direct_mbps", mbps(best["upload_direct"]), "MB/s")
	rep.add("stream_upload_ratio", best["upload_direct"].Seconds()/best["upload_portal"].Seconds(), "ratio")
	rep.add("stream_upload_bare_proxy_mbps", mbps(best["upload_bare_proxy"]), "MB/s")
	rep.add("stream_download_portal_mbps", mbps(best["download_portal"]), "MB/s")
	rep.add("stream_download_direct_mbps", mbps(best["download_direct"]), "MB/s")
	rep.add("stream_download_ratio", best["download_direct"].Seconds()/best["download_portal"].Seconds(), "ratio")
	rep.add("stream_download_bare_proxy_mbps", mbps(best["download_bare_proxy"]), "MB/s")
	perGiB := func(seconds float64) float64 { return seconds / float64(downloadRepeats) / (float64(size) / (1 << 30)) }
	for _, path := range []string{"direct", "bare_proxy", "portal"} {
		if path != "direct" {
			rep.add("stream_download_cpu_s_per_gib_"+path, perGiB(cpu[path].server), "CPU s")
		}
		rep.add("stream_download_cpu_s_per_gib_sim_"+path+"_path", perGiB(cpu[path].sim), "CPU s")
		rep.add("stream_download_cpu_s_per_gib_client_"+path+"_path", perGiB(cpu[path].client), "CPU s")
	}
	rep.add("stream_portal_peak_rss_mb", peak, "MiB")
	rep.add("stream_portal_rss_before_mb", rssBefore, "MiB")
	rep.add("stream_portal_rss_growth_mb", peak-rssBefore, "MiB")
	if peak-rssBefore > streamGrowthBudgetMiB {
		return fmt.Errorf("stream_portal_rss_growth_mb %.1f > %d: the transfers held more than their buffers", peak-rssBefore, streamGrowthBudgetMiB)
	}
	return nil
}

// streamer does the timed transfers of measureStream.
type streamer struct {
	ctx    context.Context
	l      *lab
	env    *portalEnv
	user   *signedIn
	q      *benchQuote
	api    *apiclient.Client
	apiCtx context.Context
	client *http.Client
	size   int64
	want   string // sha256 of the file
}

// remove deletes an attachment on the simulator (frees its spill file).
func (s *streamer) remove(id int32) { _ = s.api.Attachments.Delete(s.apiCtx, id, s.q.quoteID) }

// upload sends the 1 GiB file on path "direct" or "bare_proxy" (the v2 upload, multipart with the file
// part only, bearer token) or "portal" (the portal's upload form: attachment type first, then the
// file, session cookie, as a browser posts it with Content-Length), and returns the time to the answer
// and the stored attachment's id.
func (s *streamer) upload(path, fileName string) (time.Duration, int32, error) {
	var target string
	var fields map[string]string
	header := map[string]string{}
	switch path {
	case "portal":
		target = fmt.Sprintf("%s%s/attachments", s.env.url, documentsBase(s.q))
		fields = map[string]string{"attachmentType": "OTHER"}
		header["Cookie"] = s.user.cookie
		header["Origin"] = s.env.url
	default:
		base := s.l.simURL
		if path == "bare_proxy" {
			base = s.l.proxyURL
		}
		target = fmt.Sprintf("%s/v2/attachment/file/quote/%d/attachmentType/OTHER", base, s.q.quoteID)
		header["Authorization"] = "Bearer " + s.user.accessToken
	}
	body, contentType, length := multipartBody(fields, fileName, s.size)
	req, err := http.NewRequestWithContext(s.ctx, http.MethodPost, target, body)
	if err != nil {
		return 0, 0, err
	}
	req.ContentLength = length
	req.Header.Set("Content-Type", contentType)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	start := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	if err != nil {
		return 0, 0, err
	}
	if path == "portal" {
		if resp.StatusCode != http.StatusSeeOther {
			return 0, 0, fmt.Errorf("%s (want 303 to the documents page)", resp.Status)
		}
		doc, err := s.api.CPQ.TOFList(s.apiCtx, s.q.cpqID, s.q.customerID, s.q.quoteID)
		if err != nil {
			return 0, 0, err
		}
		for _, a := range doc.Attachments {
			if a.FileName == fileName {
				if a.Size != s.size {
					return 0, 0, fmt.Errorf("stored %d bytes, want %d", a.Size, s.size)
				}
				return took, a.AttachmentID, nil
			}
		}
		return 0, 0, fmt.Errorf("the quote has no attachment %s", fileName)
	}
	var stored struct {
		AttachmentID int32  `json:"attachmentId"`
		Size         int64  `json:"size"`
		SHA256       string `json:"sha256"`
	}
	if resp.StatusCode != http.StatusCreated {
		return 0, 0, fmt.Errorf("%s: %.300s", resp.Status, answer)
	}
	if err := json.Unmarshal(answer, &stored); err != nil {
		return 0, 0, err
	}
	if stored.Size != s.size || stored.SHA256 != s.want {
		s.remove(stored.AttachmentID)
		return 0, 0, fmt.Errorf("stored %d bytes with sha256 %s, want %d bytes with %s", stored.Size, stored.SHA256, s.size, s.want)
	}
	return took, stored.AttachmentID, nil
}

// cpuSnapshot is the CPU used so far by the streaming portal, the bare proxy, the simulator and
// this process (the client).
func (s *streamer) cpuSnapshot() cpuSnapshot {
	var snap cpuSnapshot
	snap.portal, _ = s.env.proc.cpuSeconds()
	snap.proxy, _ = s.l.proxy.cpuSeconds()
	snap.sim, _ = s.l.sim.cpuSeconds()
	snap.self, _ = cpuSecondsOf("self")
	return snap
}

// download reads the attachment whole on path "direct", "bare_proxy" or "portal" and returns the time
// to its last byte.
func (s *streamer) download(path string, id int32) (time.Duration, error) {
	var target string
	header := map[string]string{}
	switch path {
	case "portal":
		target = fmt.Sprintf("%s%s/attachments/%d", s.env.url, documentsBase(s.q), id)
		header["Cookie"] = s.user.cookie
		header["Accept-Encoding"] = "gzip"
	default:
		base := s.l.simURL
		if path == "bare_proxy" {
			base = s.l.proxyURL
		}
		target = fmt.Sprintf("%s/v2/attachment/%d/quote/%d", base, id, s.q.quoteID)
		header["Authorization"] = "Bearer " + s.user.accessToken
	}
	req, err := http.NewRequestWithContext(s.ctx, http.MethodGet, target, nil)
	if err != nil {
		return 0, err
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	start := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	took := time.Since(start)
	if err != nil || resp.StatusCode != http.StatusOK || n != s.size {
		return 0, fmt.Errorf("GET %s: %s, %d of %d bytes (%v)", req.URL.Path, resp.Status, n, s.size, err)
	}
	return took, nil
}

// documentsBase is the portal's path of the quote's documents (…/attachments, …/documents).
func documentsBase(q *benchQuote) string {
	return fmt.Sprintf("/quotes/%d/%d/%d", q.cpqID, q.customerID, q.quoteID)
}

func downloadSHA256(ctx context.Context, api *apiclient.Client, attachmentID int32, quoteID int64) (string, error) {
	d, err := api.Attachments.Download(ctx, attachmentID, quoteID)
	if err != nil {
		return "", err
	}
	defer d.Close()
	h := sha256.New()
	if _, err := io.Copy(h, d.Body); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// multipartBody is a multipart/form-data body with the fields (in a fixed order: only
// attachmentType is used) and then one file part of size pattern bytes, with its exact length.
func multipartBody(fields map[string]string, fileName string, size int64) (io.Reader, string, int64) {
	var head bytes.Buffer
	mw := multipart.NewWriter(&head)
	if v, ok := fields["attachmentType"]; ok {
		_ = mw.WriteField("attachmentType", v)
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="`+fileName+`"`)
	h.Set("Content-Type", "application/octet-stream")
	_, _ = mw.CreatePart(h)
	headLen := head.Len()
	_ = mw.Close()
	tail := bytes.Clone(head.Bytes()[headLen:])
	head.Truncate(headLen)
	length := int64(head.Len()) + size + int64(len(tail))
	return io.MultiReader(bytes.NewReader(head.Bytes()), newPatternReader(size), bytes.NewReader(tail)),
		mw.FormDataContentType(), length
}

// patternReader yields size deterministic bytes: a 1 MiB block of seeded pseudo-random bytes, repeated,
// with each block's index written into its first 8 bytes (so no two blocks are equal), except the
// first block's, which start as a PDF does ("%PDF-1.7"): the portal stores an upload only when its
// content is the kind its name says (docs/documents.md), so the file is a PDF by its header, as a
// large scanned annex would be. It costs almost nothing to produce, so the benchmark measures the
// transfer, not the generator.
type patternReader struct {
	block []byte
	size  int64
	off   int64
}

const patternBlock = 1 << 20

// pdfHeader starts the pattern: what the portal's upload check looks for in a .pdf (8 bytes).
const pdfHeader = "%PDF-1.7"

func newPatternReader(size int64) *patternReader {
	block := make([]byte, patternBlock)
	rng := rand.New(rand.NewPCG(2026, 11))
	for i := 0; i < len(block); i += 8 {
		binary.LittleEndian.PutUint64(block[i:], rng.Uint64())
	}
	return &patternReader{block: block, size: size}
}

func (p *patternReader) Read(b []byte) (int, error) {
	if p.off >= p.size {
		return 0, io.EOF
	}
	n := 0
	for n < len(b) && p.off < p.size {
		index := p.off / patternBlock
		within := p.off % patternBlock
		if within < 8 {
			// The block index, little-endian, in the block's first 8 bytes; the PDF header in the first's.
			var idx [8]byte
			binary.LittleEndian.PutUint64(idx[:], uint64(index))
			if index == 0 {
				copy(idx[:], pdfHeader)
			}
			c := copy(b[n:], idx[within:])
			c = int(min(int64(c), p.size-p.off))
			n += c
			p.off += int64(c)
			continue
		}
		c := copy(b[n:], p.block[within:])
		c = int(min(int64(c), p.size-p.off))
		n += c
		p.off += int64(c)
	}
	return n, nil
}

// patternSHA256 is the SHA-256 of the first size bytes of the pattern.
func patternSHA256(size int64) string {
	h := sha256.New()
	_, _ = io.Copy(h, newPatternReader(size))
	return hex.EncodeToString(h.Sum(nil))
}
