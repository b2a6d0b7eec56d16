package payout

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"codeberg.org/go-pdf/fpdf"

	"github.com/airside/airside/internal/earnings"
	"github.com/airside/airside/internal/money"
)

// Exact writes an amount as the PDF and the page's exact line do: dollars
// with thousands grouped and all six decimals, nothing rounded.
func Exact(m money.Micros) string {
	s := money.GroupThousands(m.Fixed(6))
	if len(s) > 0 && s[0] == '-' {
		return "-$" + s[1:]
	}
	return "$" + s
}

func count(n int64) string { return money.GroupThousands(strconv.FormatInt(n, 10)) }

// pdfColumns are the table's columns on A4 landscape (277 mm inside the
// margins).
var pdfColumns = []struct {
	head  string
	width float64
}{{"Model", 55}, {"Requests", 22}, {"Input tokens", 30}, {"Cached", 28}, {"Output tokens", 28}, {"Filed", 28}, {"Discount", 28},
	{"Landing fee", 28}, {"You are owed", 30}}

// WritePDF writes a document as a PDF a finance team files: the
// statement's number and period, a row per listing with tokens by kind
// and amounts, the total, the prices in force, each credit note and the
// net owed. Amounts are exact to the micro-dollar, as in the CSV. The
// PDF's own dates are the statement's, so an issued statement's PDF is
// the same file every time it is downloaded.
func WritePDF(w io.Writer, d Document, carrierName string) error {
	pdf := fpdf.New("L", "mm", "A4", "")
	pdf.SetCompression(false) // plain text streams: a reader's search and our tests find the figures
	pdf.SetCatalogSort(true)  // fonts and resources in a fixed order: the same file every time
	at := d.Month
	if d.IssuedAt != nil {
		at = *d.IssuedAt
	}
	pdf.SetCreationDate(at)
	pdf.SetModificationDate(at)
	tr := pdf.UnicodeTranslatorFromDescriptor("")
	title := "Airside payout statement " + d.Number
	if d.Number == "" {
		title = "Airside payout statement (provisional)"
	}
	pdf.SetTitle(title, true)
	pdf.SetAuthor("Airside", true)
	pdf.SetSubject(carrierName+" "+d.Month.Format("January 2006"), true)
	pdf.SetAutoPageBreak(true, 12)
	pdf.AliasNbPages("")
	pdf.SetFooterFunc(func() {
		pdf.SetY(-10)
		pdf.SetFont("Helvetica", "", 8)
		pdf.CellFormat(0, 5, tr(fmt.Sprintf("%s - %s - page %d of {nb}", title, carrierName, pdf.PageNo())), "", 0, "C", false, 0, "")
	})
	pdf.AddPage()
	pdf.SetFont("Helvetica", "B", 15)
	pdf.CellFormat(0, 8, tr(title), "", 1, "L", false, 0, "")
	pdf.SetFont("Helvetica", "", 10)
	line := func(text string) { pdf.CellFormat(0, 5.5, tr(text), "", 1, "L", false, 0, "") }
	line("Carrier: " + carrierName + " (" + d.Carrier + ")")
	end := d.Month.AddDate(0, 1, 0).Add(-time.Second)
	line("Period: " + d.Month.Format("2 January 2006") + " to " + end.Format("2 January 2006") + " (UTC)")
	if d.IssuedAt != nil {
		line("Issued: " + d.IssuedAt.UTC().Format("2 January 2006 15:04") + " UTC. Issued statements never change; corrections come as credit notes.")
	} else {
		line("Provisional: the month's figures can still move until " + d.Month.AddDate(0, 1, 0).Add(SettleAfter).Format("2 January 2006 15:04") + " UTC, when it is issued and numbered.")
	}
	pdf.Ln(3)
	table := func(lines []earnings.Line, total earnings.Line, totalLabel string) {
		pdf.SetFont("Helvetica", "B", 9)
		pdf.SetFillColor(235, 239, 244)
		for i, c := range pdfColumns {
			align := "R"
			if i == 0 {
				align = "L"
			}
			pdf.CellFormat(c.width, 6, c.head, "B", 0, align, true, 0, "")
		}
		pdf.Ln(-1)
		row := func(l earnings.Line, name string, bold bool) {
			style := ""
			if bold {
				style = "B"
			}
			pdf.SetFont("Helvetica", style, 9)
			cells := []string{name, count(l.Requests), count(l.InputTokens), count(l.CachedInputTokens), count(l.OutputTokens),
				Exact(l.Filed), Exact(l.Discount), Exact(l.LandingFee), Exact(l.Kept)}
			for i, c := range pdfColumns {
				align, border := "R", ""
				if i == 0 {
					align = "L"
				}
				if bold {
					border = "T"
				}
				pdf.CellFormat(c.width, 5.5, tr(cells[i]), border, 0, align, false, 0, "")
			}
			pdf.Ln(-1)
		}
		for _, l := range lines {
			row(l, l.ModelName, false)
		}
		row(total, totalLabel, true)
	}
	table(d.Lines, d.Total, "Total")
	pdf.Ln(3)
	pdf.SetFont("Helvetica", "", 9)
	pdf.MultiCell(0, 4.5, tr("Filed is tokens times the prices of the fare published at each hour. The developer paid filed less the "+
		"carrier's discount; the gateway's share is the landing fee, taken from that; the carrier is owed the rest. Amounts are USD, exact."), "", "L", false)
	if d.Total.Unpriced > 0 {
		pdf.MultiCell(0, 4.5, tr(count(d.Total.Unpriced)+" requests were served before a fare was published and are not billed here."), "", "L", false)
	}
	pdf.Ln(2)
	pdf.SetFont("Helvetica", "B", 11)
	pdf.CellFormat(0, 7, "Prices in force (USD per million tokens)", "", 1, "L", false, 0, "")
	pdf.SetFont("Helvetica", "", 9)
	for _, l := range d.Lines {
		for _, p := range l.Prices {
			cached := "-"
			if p.CachedInput != nil {
				cached = "$" + p.CachedInput.Fixed(4)
			}
			extra := ""
			if p.Scheduled {
				extra += ", peak and off-peak prices"
			}
			if p.Tiered {
				extra += ", context tiers"
			}
			line(fmt.Sprintf("%s from %s: input $%s, output $%s, cached input %s, discount %s %%, landing fee %s %%%s",
				l.ModelName, p.From.UTC().Format("2 Jan 15:04"), p.Input.Fixed(4), p.Output.Fixed(4), cached, p.Discount.Percent(), p.LandingFee.Percent(), extra))
		}
	}
	for _, n := range d.Notes {
		pdf.Ln(3)
		pdf.SetFont("Helvetica", "B", 11)
		pdf.CellFormat(0, 7, tr("Credit note "+n.Number+", issued "+n.IssuedAt.UTC().Format("2 January 2006 15:04")+" UTC"), "", 1, "L", false, 0, "")
		pdf.SetFont("Helvetica", "", 9)
		line(n.Reason)
		table(n.Lines, n.Total, "Credit note total")
	}
	pdf.Ln(3)
	pdf.SetFont("Helvetica", "B", 11)
	owed := d.Total
	if len(d.Notes) > 0 {
		owed = d.Net()
	}
	line("Owed to the carrier: " + Exact(owed.Kept) + "    Gateway's share (landing fee): " + Exact(owed.LandingFee))
	return pdf.Output(w)
}
