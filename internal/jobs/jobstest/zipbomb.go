// Package jobstest makes hostile batch-archive uploads for tests.
package jobstest

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"

	"github.com/xuri/excelize/v2"
)

// ZipBombXLSX returns a valid workbook (its first sheet lists numbers under a "Contract number"
// heading) with one more part that inflates to inflated bytes of zeros: a few hundred KB that
// unpack to far more than any list needs.
func ZipBombXLSX(numbers []string, inflated int64) ([]byte, error) {
	f := excelize.NewFile()
	defer f.Close()
	if err := f.SetCellValue("Sheet1", "A1", "Contract number"); err != nil {
		return nil, err
	}
	for i, n := range numbers {
		if err := f.SetCellValue("Sheet1", fmt.Sprintf("A%d", i+2), n); err != nil {
			return nil, err
		}
	}
	var plain bytes.Buffer
	if err := f.Write(&plain); err != nil {
		return nil, err
	}
	src, err := zip.NewReader(bytes.NewReader(plain.Bytes()), int64(plain.Len()))
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	w := zip.NewWriter(&out)
	for _, part := range src.File {
		if err := w.Copy(part); err != nil {
			return nil, err
		}
	}
	bomb, err := w.CreateHeader(&zip.FileHeader{Name: "xl/media/padding.bin", Method: zip.Deflate})
	if err != nil {
		return nil, err
	}
	if _, err := io.CopyN(bomb, zeros{}, inflated); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
