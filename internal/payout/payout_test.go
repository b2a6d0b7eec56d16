package payout

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/earnings"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/money"
)

// books is an in-memory Store, Listings and Projections.
type books struct {
	listings []catalogue.Listing
	hours    map[int64][]catalogue.HourlyPoint
	history  map[int64][]earnings.FareSpan
	issued   []Issued
	notes    map[int64][]CreditNote
	now      func() time.Time
}

func (b *books) FindListings(context.Context, catalogue.ListingFilter) ([]catalogue.Listing, error) {
	return b.listings, nil
}
func (b *books) Hourly(_ context.Context, ids []int64, since, until time.Time) (map[int64][]catalogue.HourlyPoint, error) {
	out := map[int64][]catalogue.HourlyPoint{}
	for _, id := range ids {
		for _, h := range b.hours[id] {
			if !h.Hour.Before(since) && h.Hour.Before(until) {
				out[id] = append(out[id], h)
			}
		}
	}
	return out, nil
}
func (b *books) FareHistory(context.Context, []int64) (map[int64][]earnings.FareSpan, error) {
	return b.history, nil
}
func (b *books) IssueStatement(_ context.Context, carrierID int64, st earnings.Statement) (Issued, error) {
	for _, is := range b.issued {
		if is.Month.Equal(st.Month) {
			return is, nil
		}
	}
	is := Issued{ID: int64(len(b.issued) + 1), Number: fmt.Sprintf("ST-%06d", len(b.issued)+1), IssuedAt: b.now(), Statement: st}
	b.issued = append(b.issued, is)
	return is, nil
}
func (b *books) IssuedStatement(_ context.Context, _ int64, month time.Time) (*Issued, error) {
	for _, is := range b.issued {
		if is.Month.Equal(month) {
			return &is, nil
		}
	}
	return nil, nil
}
func (b *books) CreditNotes(_ context.Context, id int64) ([]CreditNote, error) {
	return b.notes[id], nil
}
func (b *books) AddCreditNote(_ context.Context, id int64, seq int, n CreditNote) (bool, error) {
	if len(b.notes[id]) >= seq {
		return false, nil
	}
	n.Number, n.IssuedAt = fmt.Sprintf("CN-%06d", seq), b.now()
	b.notes[id] = append(b.notes[id], n)
	return true, nil
}
func (b *books) PayoutCarriers(context.Context, time.Time) ([]account.Carrier, error) {
	return []account.Carrier{{ID: 1, Slug: "nebula", Name: "Nebula Inference"}}, nil
}

func price(t *testing.T, s string) money.Micros {
	t.Helper()
	m, err := money.ParsePrice(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestMonthsAreIssuedOnceSettledAndCorrectedByNotes: a month is
// provisional until its figures settle, then issued once with a number;
// traffic recorded for it afterwards is a credit note, never an edit; the
// net is the month as computed now.
func TestMonthsAreIssuedOnceSettledAndCorrectedByNotes(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	november := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	created := november.AddDate(0, -2, 0)
	b := &books{now: func() time.Time { return now }, notes: map[int64][]CreditNote{},
		listings: []catalogue.Listing{{ID: 7, CarrierSlug: "nebula", Model: catalogue.Model{Slug: "kimi-k2.5", Name: "Kimi K2.5"}, CreatedAt: created}},
		history: map[int64][]earnings.FareSpan{7: {{From: created, Fare: &fare.Fare{Input: price(t, "0.50"), Output: price(t, "2.00"),
			LandingFee: 2000, Discount: 1000}}}},
		hours: map[int64][]catalogue.HourlyPoint{7: {
			{Hour: november.Add(5 * time.Hour), Counts: catalogue.Counts{Requests: 100, InputTokens: 1_000_000, OutputTokens: 100_000}},
			{Hour: november.AddDate(0, -1, 3), Counts: catalogue.Counts{Requests: 10, InputTokens: 100_000, OutputTokens: 10_000}},
		}}}
	s := &Service{Listings: b, Projections: b, Store: b, Now: b.now}
	carrier := account.Carrier{ID: 1, Slug: "nebula", Name: "Nebula Inference"}
	issued, notes, err := s.Settle(context.Background())
	if err != nil || issued != 1 || notes != 0 || !b.issued[0].Month.Equal(november.AddDate(0, -1, 0)) {
		t.Fatalf("on 1 December: issued %d (%+v), notes %d, %v; want October only: November can still move", issued, b.issued, notes, err)
	}
	doc, err := s.Document(context.Background(), carrier, november)
	if err != nil || doc.Number != "" || !doc.Closed || doc.Total.Requests != 100 {
		t.Fatalf("November on 1 December: %+v, %v; want provisional, closed, 100 requests", doc, err)
	}
	now = november.AddDate(0, 1, 0).Add(SettleAfter)
	if issued, _, _ := s.Settle(context.Background()); issued != 1 {
		t.Fatalf("November settled: issued %d", issued)
	}
	doc, _ = s.Document(context.Background(), carrier, november)
	if doc.Number != "ST-000002" || doc.IssuedAt == nil || len(doc.Lines) != 1 || len(doc.Lines[0].Prices) != 1 {
		t.Fatalf("November issued: %+v", doc)
	}
	// 1,000,000 input at $0.50 and 100,000 output at $2.00: $0.70 filed,
	// $0.07 discount, 20 % of the $0.63 paid to the gateway, $0.504 kept.
	if doc.Total.Filed != price(t, "0.70") || doc.Total.Kept != price(t, "0.504") {
		t.Errorf("November's total %+v", doc.Total.Money)
	}
	keptBefore := doc.Total.Kept
	// A late hour of November recorded after the statement was issued.
	b.hours[7] = append(b.hours[7], catalogue.HourlyPoint{Hour: november.Add(30 * time.Hour), Counts: catalogue.Counts{Requests: 50, InputTokens: 500_000}})
	if _, notes, err := s.Settle(context.Background()); err != nil || notes != 1 {
		t.Fatalf("a moved month: %d notes, %v", notes, err)
	}
	if _, notes, _ := s.Settle(context.Background()); notes != 0 {
		t.Errorf("the same correction was noted again")
	}
	doc, _ = s.Document(context.Background(), carrier, november)
	recomputed, _, _ := s.Compute(context.Background(), carrier, november)
	if doc.Total.Kept != keptBefore || len(doc.Notes) != 1 || doc.Notes[0].Total.Requests != 50 || doc.Net().Kept != recomputed.Total.Kept ||
		doc.Net().Requests != 150 {
		t.Errorf("after the correction: total kept %s (was %s), notes %+v, net %+v, now %+v", doc.Total.Kept, keptBefore, doc.Notes, doc.Net(), recomputed.Total)
	}
}

func TestCorrection(t *testing.T) {
	parse := func(s string) money.Micros {
		m, _ := money.ParsePrice(strings.TrimPrefix(s, "-"))
		if strings.HasPrefix(s, "-") {
			return -m
		}
		return m
	}
	line := func(id, requests int64, kept string) earnings.Line {
		m := parse(kept)
		return earnings.Line{Listing: earnings.Listing{ID: id, ModelName: fmt.Sprint("model ", id)}, Traffic: earnings.Traffic{Requests: requests},
			Money: earnings.Money{Kept: m}}
	}
	issued := earnings.Statement{Lines: []earnings.Line{line(1, 100, "1.00"), line(2, 50, "0.50")}}
	for _, test := range []struct {
		name     string
		notes    []CreditNote
		now      []earnings.Line
		want     bool
		requests int64
		kept     string
	}{
		{"nothing moved", nil, []earnings.Line{line(1, 100, "1.00"), line(2, 50, "0.50")}, false, 0, "0"},
		{"more traffic", nil, []earnings.Line{line(1, 110, "1.10"), line(2, 50, "0.50")}, true, 10, "0.10"},
		{"less traffic", nil, []earnings.Line{line(1, 90, "0.90"), line(2, 50, "0.50")}, true, -10, "-0.10"},
		{"a listing gone", nil, []earnings.Line{line(1, 100, "1.00")}, true, -50, "-0.50"},
		{"a new listing", nil, []earnings.Line{line(1, 100, "1.00"), line(2, 50, "0.50"), line(3, 5, "0.05")}, true, 5, "0.05"},
		{"already noted", []CreditNote{{Lines: []earnings.Line{line(1, 10, "0.10")}}}, []earnings.Line{line(1, 110, "1.10"), line(2, 50, "0.50")}, false, 0, "0"},
	} {
		note, needed := Correction(issued, test.notes, earnings.Statement{Lines: test.now})
		kept := parse(test.kept)
		if needed != test.want || note.Total.Requests != test.requests || note.Total.Kept != kept {
			t.Errorf("%s: %v %+v, want %v, %d requests, %s kept", test.name, needed, note.Total, test.want, test.requests, test.kept)
		}
	}
}

// TestThePDFAndTheCSVAgree: a statement with a credit note writes the same
// totals, to the micro-dollar, in its PDF and its CSV.
func TestThePDFAndTheCSVAgree(t *testing.T) {
	issuedAt := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	m := func(s string) money.Micros { return price(t, s) }
	l := earnings.Line{Listing: earnings.Listing{ID: 7, Carrier: "nebula", Model: "kimi-k2.5", ModelName: "Kimi K2.5"},
		Traffic: earnings.Traffic{Requests: 1234567, InputTokens: 9876543210, OutputTokens: 123456789},
		Money:   earnings.Money{Filed: m("5185.183456"), Discount: m("518.518345"), LandingFee: m("933.333022"), Kept: m("3733.332089")},
		Prices:  []earnings.PriceSpan{{From: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), Input: m("0.50"), Output: m("2.00"), Discount: 1000, LandingFee: 2000}}}
	st := earnings.Statement{Carrier: "nebula", Month: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), Closed: true, Lines: []earnings.Line{l}}
	st.Total = l
	st.Total.Listing, st.Total.Prices = earnings.Listing{Carrier: "nebula", Model: "total", ModelName: "Total"}, nil
	delta := earnings.Line{Listing: l.Listing, Traffic: earnings.Traffic{Requests: 10}, Money: earnings.Money{Filed: m("0.000010"), Kept: m("0.000007")}}
	doc := Document{Statement: st, Number: "ST-000042", IssuedAt: &issuedAt,
		Notes: []CreditNote{{Number: "CN-000003", IssuedAt: issuedAt.Add(time.Hour), Reason: "late minutes", Lines: []earnings.Line{delta}, Total: delta}}}
	var pdf, csvOut bytes.Buffer
	if err := WritePDF(&pdf, doc, "Nebula Inference"); err != nil {
		t.Fatal(err)
	}
	if err := WriteCSV(&csvOut, doc); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&csvOut).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	net := rows[len(rows)-1]
	if net[len(net)-1] != "net" || net[11] != "3733.332096" || rows[2][12] != "ST-000042" || rows[3][12] != "CN-000003" {
		t.Fatalf("CSV rows %q", rows)
	}
	// The PDF's text, as a reader extracts it: the strings its page shows.
	var text strings.Builder
	for _, s := range regexp.MustCompile(`\(((?:[^()\\]|\\.)*)\) ?Tj`).FindAllStringSubmatch(pdf.String(), -1) {
		text.WriteString(strings.NewReplacer(`\(`, "(", `\)`, ")", `\\`, `\`).Replace(s[1]) + "\n")
	}
	got := text.String()
	for _, want := range []string{"Airside payout statement ST-000042", "Period: 1 November 2026 to 30 November 2026 (UTC)",
		"$3,733.332089", "Credit note CN-000003", "$0.000007", "Owed to the carrier: $3,733.332096", "1,234,567",
		"Kimi K2.5 from 1 Nov 00:00: input $0.5000, output $2.0000"} {
		if !strings.Contains(got, want) {
			t.Errorf("the PDF does not say %q:\n%s", want, got)
		}
	}
	if !bytes.HasPrefix(pdf.Bytes(), []byte("%PDF-")) {
		t.Error("not a PDF")
	}
	var again bytes.Buffer
	_ = WritePDF(&again, doc, "Nebula Inference")
	if !bytes.Equal(again.Bytes(), pdf.Bytes()) {
		t.Error("an issued statement's PDF differs from one download to the next")
	}
}
