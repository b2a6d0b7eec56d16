package earnings

import (
	"fmt"
	"github.com/airside/airside/internal/csvsafe"
	"io"
	"strconv"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/money"
)

// Listing names a listing on a statement.
type Listing struct {
	ID      int64
	Carrier string
	// Model is the model's slug (the CSV's, stable for scripts);
	// ModelName its name, as pages show it.
	Model, ModelName string
}

// Line is one listing's month.
type Line struct {
	Listing
	Traffic
	Unpriced int64
	Money
	// Prices are the fares in force during the month, oldest first: what
	// a finance team checks the amounts against.
	Prices []PriceSpan `json:",omitempty"`
}

// PriceSpan is a fare in force from a time (the month's start when it was
// in force before): its base prices per million tokens and its levers.
type PriceSpan struct {
	From                 time.Time
	Input, Output        money.Micros
	CachedInput          *money.Micros
	Discount, LandingFee money.BasisPoints
	Scheduled, Tiered    bool
}

// pricesIn are the spans of history in force during [from, until).
func pricesIn(history []FareSpan, from, until time.Time) []PriceSpan {
	var out []PriceSpan
	for i, span := range history {
		if span.Fare == nil || !span.From.Before(until) || i+1 < len(history) && !history[i+1].From.After(from) {
			continue
		}
		f := span.Fare
		out = append(out, PriceSpan{From: maxTime(span.From, from), Input: f.Input, Output: f.Output, CachedInput: f.CachedInput,
			Discount: f.Discount, LandingFee: f.LandingFee, Scheduled: f.TimeBased != nil, Tiered: len(f.Tiers) > 0})
	}
	return out
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Statement is a carrier's month: a line per listing and the total.
type Statement struct {
	Carrier string
	Month   time.Time // the first instant of the month, UTC
	// Closed is true once the month is over: its figures no longer move.
	Closed bool
	Lines  []Line
	Total  Line
}

// StatementMonths is how many months of statements a carrier reads: the
// current one and the twelve before it.
const StatementMonths = 13

// StatementMonthsAt are the months (first instants, UTC) whose statements
// are readable at now, newest first.
func StatementMonthsAt(now time.Time) []time.Time {
	current := MonthOf(now)
	out := make([]time.Time, StatementMonths)
	for i := range out {
		out[i] = current.AddDate(0, -i, 0)
	}
	return out
}

// MonthOf returns the first instant of t's month in UTC.
func MonthOf(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// BuildStatement computes the statement of month for listings from their
// hourly traffic in that month and their fare history.
func BuildStatement(carrier string, month, now time.Time, listings []Listing, hours map[int64][]catalogue.HourlyPoint,
	history map[int64][]FareSpan) Statement {
	month = MonthOf(month)
	st := Statement{Carrier: carrier, Month: month, Closed: !now.Before(month.AddDate(0, 1, 0))}
	var total Sum
	for _, l := range listings {
		var sum Sum
		for _, h := range hours[l.ID] {
			sum.Add(h, FareAt(history[l.ID], h.Hour))
		}
		total.Merge(&sum)
		st.Lines = append(st.Lines, Line{Listing: l, Traffic: sum.Traffic, Unpriced: sum.Unpriced, Money: sum.Money(),
			Prices: pricesIn(history[l.ID], month, month.AddDate(0, 1, 0))})
	}
	st.Total = Line{Listing: Listing{Carrier: carrier, Model: "total", ModelName: "Total"}, Traffic: total.Traffic, Unpriced: total.Unpriced}
	// The total is the sum of the rounded lines, so the CSV adds up.
	for _, line := range st.Lines {
		st.Total.Filed += line.Filed
		st.Total.Discount += line.Discount
		st.Total.LandingFee += line.LandingFee
		st.Total.Kept += line.Kept
	}
	return st
}

// CSVHeader heads a statement's CSV.
var CSVHeader = []string{"month", "carrier", "model", "listing_id", "requests", "input_tokens", "cached_input_tokens", "output_tokens",
	"filed_usd", "discount_usd", "landing_fee_usd", "kept_usd"}

// CSVRecord is one line of the statement as CSVHeader lays it out; id is
// the listing id ("" for a total).
func (st *Statement) CSVRecord(l Line, id string) []string {
	return []string{st.Month.Format("2006-01"), l.Carrier, l.Model, id, strconv.FormatInt(l.Requests, 10),
		strconv.FormatInt(l.InputTokens, 10), strconv.FormatInt(l.CachedInputTokens, 10), strconv.FormatInt(l.OutputTokens, 10),
		amount(l.Filed), amount(l.Discount), amount(l.LandingFee), amount(l.Kept)}
}

// WriteCSV writes the statement as CSV: a header, a line per listing, the
// total. Amounts are USD with six decimals, exact.
func (st *Statement) WriteCSV(w io.Writer) error {
	cw := csvsafe.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return fmt.Errorf("write statement: %w", err)
	}
	for _, l := range st.Lines {
		if err := cw.Write(st.CSVRecord(l, strconv.FormatInt(l.ID, 10))); err != nil {
			return fmt.Errorf("write statement: %w", err)
		}
	}
	if err := cw.Write(st.CSVRecord(st.Total, "")); err != nil {
		return fmt.Errorf("write statement: %w", err)
	}
	return cw.Flush()
}

// amount writes micro-USD as dollars, exactly, always with six decimals:
// one column, one format, whatever the value.
func amount(m money.Micros) string { return m.Fixed(6) }

// Minus is the line a less b, field by field: what a correction adds.
func (a Line) Minus(b Line) Line {
	a.Requests -= b.Requests
	a.Errors -= b.Errors
	a.ClientErrors -= b.ClientErrors
	a.Capped -= b.Capped
	a.InputTokens -= b.InputTokens
	a.CachedInputTokens -= b.CachedInputTokens
	a.OutputTokens -= b.OutputTokens
	a.CacheReadTokens -= b.CacheReadTokens
	a.CacheWriteTokens -= b.CacheWriteTokens
	a.Unpriced -= b.Unpriced
	a.Filed -= b.Filed
	a.Discount -= b.Discount
	a.LandingFee -= b.LandingFee
	a.Kept -= b.Kept
	a.Prices = nil
	return a
}

// Plus is the line a and b, field by field.
func (a Line) Plus(b Line) Line {
	zero := Line{}
	return a.Minus(zero.Minus(b))
}

// IsZero is whether the line carries no traffic and no money.
func (a Line) IsZero() bool {
	return a.Traffic == Traffic{} && a.Unpriced == 0 && a.Money == Money{}
}
