package v2sim

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/go-pdf/fpdf"
)

// PDFs are real documents made with fpdf. Compression is off so their text can be searched (tests look for
// the contract number), and the dates inside are the document's own, so the same contract always gives the
// same bytes (its sha256 is part of the contract document and of the archive payload).

// newPDF starts an A4 document with the shared header and footer.
func newPDF(title, footer string, created time.Time) (*fpdf.Fpdf, func(string) string) {
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.SetCompression(false)
	pdf.SetCatalogSort(true)
	pdf.SetCreationDate(created)
	pdf.SetModificationDate(created)
	tr := pdf.UnicodeTranslatorFromDescriptor("") // core fonts speak cp1252
	pdf.SetTitle(title, true)
	pdf.SetAuthor("v2 API simulator", true)
	pdf.SetCreator("CPQ v2 simulator", true)
	pdf.SetAutoPageBreak(true, 18)
	pdf.AliasNbPages("{nb}")
	pdf.SetFooterFunc(func() {
		pdf.SetY(-12)
		pdf.SetFont("Helvetica", "", 8)
		pdf.SetTextColor(110, 110, 110)
		pdf.CellFormat(0, 5, tr(fmt.Sprintf("%s - page %d of {nb}", footer, pdf.PageNo())), "", 0, "C", false, 0, "")
		pdf.SetTextColor(0, 0, 0)
	})
	pdf.AddPage()
	pdf.SetFont("Helvetica", "", 8)
	pdf.SetTextColor(110, 110, 110)
	pdf.CellFormat(0, 5, tr("Quote Configuration, Contract and Customer Service - v2"), "", 1, "R", false, 0, "")
	pdf.SetTextColor(0, 0, 0)
	pdf.SetFont("Helvetica", "B", 18)
	pdf.CellFormat(0, 10, tr(title), "", 1, "L", false, 0, "")
	pdf.Ln(2)
	return pdf, tr
}

func pdfBytes(pdf *fpdf.Fpdf) ([]byte, error) {
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		return nil, fmt.Errorf("render pdf: %w", err)
	}
	return buf.Bytes(), nil
}

// keyValues writes label/value rows.
func keyValues(pdf *fpdf.Fpdf, tr func(string) string, rows [][2]string) {
	for _, kv := range rows {
		pdf.SetFont("Helvetica", "B", 10)
		pdf.CellFormat(45, 6, tr(kv[0]), "", 0, "L", false, 0, "")
		pdf.SetFont("Helvetica", "", 10)
		pdf.MultiCell(0, 6, tr(kv[1]), "", "L", false)
	}
}

func section(pdf *fpdf.Fpdf, tr func(string) string, title string) {
	pdf.Ln(3)
	pdf.SetFont("Helvetica", "B", 12)
	pdf.SetFillColor(232, 238, 246)
	pdf.CellFormat(0, 8, tr(title), "", 1, "L", true, 0, "")
	pdf.Ln(1)
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-3]) + "..."
}

// contractPDF renders the contract from its snapshots. Caller holds s.mu.
func (s *Server) contractPDF(c *contract) ([]byte, error) {
	q := c.Quote
	cfg := s.cat.cpqByID[c.CPQID]
	pdf, tr := newPDF("Contract "+c.Number, "Contract "+c.Number, c.CreatedAt)
	keyValues(pdf, tr, [][2]string{
		{"Contract number", c.Number},
		{"Date", c.CreatedAt.Format("2 January 2006")},
		{"Quote", fmt.Sprintf("%d (customer reference %d)", q.QuoteID, q.CustomerQuoteID)},
		{"Configurator", cfg.Name},
		{"Currency", "EUR"},
	})

	section(pdf, tr, "Customer")
	cu := c.Customer
	addr := strings.TrimSpace(fmt.Sprintf("%s, %s %s, %s", cu.Address.Street, cu.Address.PostalCode, cu.Address.City, cu.Address.Country))
	keyValues(pdf, tr, [][2]string{
		{"Name", cu.Name},
		{"Tax id", cu.TaxID},
		{"Address", addr},
		{"E-mail", cu.Email},
		{"Phone", cu.Phone},
	})

	widths := []float64{74, 18, 22, 22, 22, 22}
	header := []string{"Item", "Kind", "Unit act.", "Unit rec.", "Net act.", "Net rec."}
	for _, cd := range q.Carts {
		tofName := ""
		if t := s.cat.tofs[cd.TOFID]; t != nil {
			tofName = t.Name
		}
		pl, _ := s.cat.pricelistByID(cd.PricelistID)
		title := fmt.Sprintf("Cart %d - %s", cd.BasketID, tofName)
		if cd.Label != "" {
			title += " - " + cd.Label
		}
		section(pdf, tr, title)
		pdf.SetFont("Helvetica", "", 9)
		pdf.CellFormat(0, 5, tr(fmt.Sprintf("Quantity %d, price list %s", cd.Quantity, pl.Name)), "", 1, "L", false, 0, "")
		pdf.SetFont("Helvetica", "B", 9)
		for i, h := range header {
			align := "R"
			if i < 2 {
				align = "L"
			}
			pdf.CellFormat(widths[i], 6, tr(h), "B", 0, align, false, 0, "")
		}
		pdf.Ln(-1)
		pdf.SetFont("Helvetica", "", 9)
		var row func(n nodeDoc, depth int)
		row = func(n nodeDoc, depth int) {
			name := strings.Repeat("   ", depth) + n.Name
			if n.Repriced {
				name += " *"
			}
			cells := []string{clip(name, 46), n.Kind, n.ActivationPrice.String(), n.RecurringPrice.String(),
				n.Breakdown.Net.Activation.String(), n.Breakdown.Net.Recurring.String()}
			for i, v := range cells {
				align := "R"
				if i < 2 {
					align = "L"
				}
				pdf.CellFormat(widths[i], 5.5, tr(v), "", 0, align, false, 0, "")
			}
			pdf.Ln(-1)
			for _, child := range n.Children {
				row(child, depth+1)
			}
		}
		row(cd.Root, 0)
		pdf.SetFont("Helvetica", "B", 9)
		pdf.CellFormat(widths[0]+widths[1]+widths[2]+widths[3], 6, tr("Cart total (net)"), "T", 0, "L", false, 0, "")
		pdf.CellFormat(widths[4], 6, cd.Totals.NetActivation.String(), "T", 0, "R", false, 0, "")
		pdf.CellFormat(widths[5], 6, cd.Totals.NetRecurring.String(), "T", 1, "R", false, 0, "")
	}

	if len(q.AppliedDiscounts)+len(q.ExtraDiscounts) > 0 {
		section(pdf, tr, "Discounts")
		pdf.SetFont("Helvetica", "", 10)
		for _, d := range q.AppliedDiscounts {
			pdf.CellFormat(0, 6, tr(fmt.Sprintf("%s: %g%% on %s", d.Name, d.Percent, strings.ToLower(d.AppliesTo))), "", 1, "L", false, 0, "")
		}
		for _, d := range q.ExtraDiscounts {
			pdf.CellFormat(0, 6, tr(fmt.Sprintf("%s (extra): %g%% on %s", d.Name, d.DiscountValue, strings.ToLower(d.AppliesTo))), "", 1, "L", false, 0, "")
		}
	}
	if len(q.Packages) > 0 {
		section(pdf, tr, "Packages")
		pdf.SetFont("Helvetica", "", 10)
		for _, p := range q.Packages {
			pdf.CellFormat(0, 6, tr(fmt.Sprintf("%s: %s EUR recurring", p.Name, p.RecurringPrice)), "", 1, "L", false, 0, "")
		}
	}

	section(pdf, tr, "Totals (EUR)")
	t := q.Totals
	pdf.SetFont("Helvetica", "B", 10)
	pdf.CellFormat(70, 6, "", "B", 0, "L", false, 0, "")
	pdf.CellFormat(40, 6, "Activation", "B", 0, "R", false, 0, "")
	pdf.CellFormat(40, 6, "Recurring", "B", 1, "R", false, 0, "")
	for _, line := range []struct {
		label string
		a, r  Money
	}{
		{"List", t.ListActivation, t.ListRecurring},
		{"Discounts", t.DiscountActivation, t.DiscountRecurring},
		{"Extra discounts", t.ExtraActivation, t.ExtraRecurring},
		{"Net", t.NetActivation, t.NetRecurring},
	} {
		style := ""
		if line.label == "Net" {
			style = "B"
		}
		pdf.SetFont("Helvetica", style, 10)
		pdf.CellFormat(70, 6, tr(line.label), "", 0, "L", false, 0, "")
		pdf.CellFormat(40, 6, line.a.String(), "", 0, "R", false, 0, "")
		pdf.CellFormat(40, 6, line.r.String(), "", 1, "R", false, 0, "")
	}
	pdf.SetFont("Helvetica", "I", 8)
	pdf.CellFormat(0, 5, tr("Items marked * carry negotiated prices. Recurring amounts are monthly."), "", 1, "L", false, 0, "")

	// Keep the signature block on one page.
	if _, pageHeight := pdf.GetPageSize(); pdf.GetY() > pageHeight-70 {
		pdf.AddPage()
	}
	section(pdf, tr, "Signatures")
	pdf.SetFont("Helvetica", "", 10)
	pdf.Ln(8)
	pdf.CellFormat(90, 6, tr("For the customer: ______________________"), "", 0, "L", false, 0, "")
	pdf.CellFormat(0, 6, tr("For the provider: ______________________"), "", 1, "L", false, 0, "")
	pdf.CellFormat(90, 6, tr(clip(cu.Name, 40)), "", 0, "L", false, 0, "")
	pdf.CellFormat(0, 6, tr("Date: ______________"), "", 1, "L", false, 0, "")
	return pdfBytes(pdf)
}

// auditPDFBytes renders the validation audit of a quote. Caller holds s.mu.
func (s *Server) auditPDFBytes(q *quote) ([]byte, error) {
	created := q.UpdatedAt
	pdf, tr := newPDF(fmt.Sprintf("Validation audit - quote %d", q.ID), fmt.Sprintf("Validation audit of quote %d", q.ID), created)
	cu := s.customerByID(int64(q.CustomerID))
	rows := [][2]string{
		{"Quote", fmt.Sprintf("%d", q.ID)},
		{"Customer", fmt.Sprintf("%s (%s, id %d)", cu.Name, cu.TaxID, cu.ID)},
		{"Configurator", s.cat.cpqByID[q.CPQID].Name},
		{"Entries", fmt.Sprintf("%d", len(q.Audit))},
	}
	if q.ContractID != 0 {
		rows = append(rows, [2]string{"Contract", s.contracts[q.ContractID].Number})
	}
	keyValues(pdf, tr, rows)
	section(pdf, tr, "Entries")
	for _, e := range q.Audit {
		pdf.SetFont("Helvetica", "B", 9)
		pdf.CellFormat(0, 5.5, tr(fmt.Sprintf("#%d  %s  %s  %s", e.EntryID, e.At.UTC().Format("2006-01-02 15:04:05 UTC"), e.Action, e.Actor)), "", 1, "L", false, 0, "")
		pdf.SetFont("Helvetica", "", 9)
		pdf.MultiCell(0, 5, tr(e.Summary), "", "L", false)
		pdf.SetFont("Helvetica", "", 8)
		for _, ch := range e.Changes {
			pdf.SetX(16)
			pdf.MultiCell(0, 4.5, tr(clip(fmt.Sprintf("%s: %s -> %s", ch.Field, orDash(ch.Before), orDash(ch.After)), 400)), "", "L", false)
		}
		pdf.Ln(1.5)
	}
	return pdfBytes(pdf)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
