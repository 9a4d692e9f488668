package handlers

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
)

// evidenceManifestName is the checksum list in the evidence ZIP, in the format of sha256sum, so
// `sha256sum -c sha256sums.txt` checks an unpacked copy.
const evidenceManifestName = "sha256sums.txt"

// downloadEvidenceZip answers GET /contracts/:contractId/evidence.zip: every artifact of the
// evidence page in one ZIP, streamed: the ZIP is written to the response as each artifact is read
// from the v2 API (PDFs are never held whole), and sha256sums.txt lists the SHA-256 of each file.
// Everything that can fail cleanly (the documents, opening the PDFs and their %PDF- check) is done
// before the first byte is sent; a break in the middle aborts the connection, so the browser never
// keeps a truncated ZIP.
func (h *Handler) downloadEvidenceZip(c *gin.Context) {
	contractID, err := parseInt32ID(c, "contractId")
	if err != nil {
		h.fail(c, err)
		return
	}
	ctx := h.apiContext(c)
	ev, err := h.loadEvidence(ctx, tr(c), contractID)
	if err != nil {
		h.fail(c, err)
		return
	}
	type opened struct {
		artifact evidenceArtifact
		body     io.Reader
	}
	files := make([]opened, 0, len(ev.artifacts))
	for _, a := range ev.artifacts {
		body, _, closeFn, err := h.openArtifact(ctx, a)
		if err != nil {
			h.failDocument(c, err)
			return
		}
		defer closeFn()
		files = append(files, opened{artifact: a, body: body})
	}

	hdr := c.Writer.Header()
	hdr.Set("Content-Type", "application/zip")
	hdr.Set("Content-Disposition", contentDisposition("attachment",
		safeFileName(t(c, "evidence.file.zip", contractNumberOf(ev.contract)), t(c, "evidence.file.zip", strconv.Itoa(int(contractID))))))
	hdr.Set("Cache-Control", "private, no-store")
	c.Status(http.StatusOK)

	abort := func(what string, err error) {
		h.log(c).Warn("evidence ZIP broken off", slog.Int("contract_id", int(contractID)), slog.String("at", what), slog.Any("err", err))
		panic(http.ErrAbortHandler)
	}
	modified := h.now().UTC()
	zw := zip.NewWriter(c.Writer)
	var manifest strings.Builder
	for _, f := range files {
		method := zip.Deflate
		if f.artifact.isPDF() {
			method = zip.Store // PDFs are compressed already
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: f.artifact.fileName, Method: method, Modified: modified})
		if err != nil {
			abort(f.artifact.key, err)
		}
		hash := sha256.New()
		if _, err := io.Copy(io.MultiWriter(w, hash), f.body); err != nil {
			abort(f.artifact.key, err)
		}
		fmt.Fprintf(&manifest, "%s  %s\n", hex.EncodeToString(hash.Sum(nil)), f.artifact.fileName)
	}
	w, err := zw.CreateHeader(&zip.FileHeader{Name: evidenceManifestName, Method: zip.Deflate, Modified: modified})
	if err != nil {
		abort(evidenceManifestName, err)
	}
	if _, err := io.WriteString(w, manifest.String()); err != nil {
		abort(evidenceManifestName, err)
	}
	if err := zw.Close(); err != nil {
		abort("end of ZIP", err)
	}
}
