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
		st.Lines = append(st.Lines, Line{Listing: l, Traffic: sum.Traffic, Unpriced: sum.Unpriced, Money: sum.Money()})
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

// WriteCSV writes the statement as CSV: a header, a line per listing, the
// total. Amounts are USD with six decimals, exact.
func (st *Statement) WriteCSV(w io.Writer) error {
	cw := csvsafe.NewWriter(w)
	head := []string{"month", "carrier", "model", "listing_id", "requests", "input_tokens", "cached_input_tokens", "output_tokens",
		"filed_usd", "discount_usd", "landing_fee_usd", "kept_usd"}
	if err := cw.Write(head); err != nil {
		return fmt.Errorf("write statement: %w", err)
	}
	row := func(l Line, id string) []string {
		return []string{st.Month.Format("2006-01"), l.Carrier, l.Model, id, strconv.FormatInt(l.Requests, 10),
			strconv.FormatInt(l.InputTokens, 10), strconv.FormatInt(l.CachedInputTokens, 10), strconv.FormatInt(l.OutputTokens, 10),
			amount(l.Filed), amount(l.Discount), amount(l.LandingFee), amount(l.Kept)}
	}
	for _, l := range st.Lines {
		if err := cw.Write(row(l, strconv.FormatInt(l.ID, 10))); err != nil {
			return fmt.Errorf("write statement: %w", err)
		}
	}
	if err := cw.Write(row(st.Total, "")); err != nil {
		return fmt.Errorf("write statement: %w", err)
	}
	return cw.Flush()
}

// amount writes micro-USD as dollars, exactly, always with six decimals:
// one column, one format, whatever the value.
func amount(m money.Micros) string { return m.Fixed(6) }
