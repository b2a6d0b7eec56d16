package web

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/csvsafe"
	"github.com/airside/airside/internal/earnings"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/payout"
)

// earningsWindows bounds one earnings read by its grouping: a month of
// hours, a quarter of days, thirteen months (what statements cover).
var earningsWindows = map[earnings.Period]time.Duration{
	earnings.ByHour:  31 * 24 * time.Hour,
	earnings.ByDay:   92 * 24 * time.Hour,
	earnings.ByMonth: 397 * 24 * time.Hour,
}

// usd writes micro-USD as dollars with six decimals, exactly: the
// statement CSV's format, a string so no client parses it into a float.
func usd(m money.Micros) string { return m.Fixed(6) }

// earningsRow is one listing's period: what it served and earned under
// the fare in force at each hour of it.
type earningsRow struct {
	Start             time.Time `json:"start"`
	ListingID         int64     `json:"listingId"`
	Model             string    `json:"model"`
	Requests          int64     `json:"requests"`
	Unpriced          int64     `json:"unpriced"`
	InputTokens       int64     `json:"inputTokens"`
	CachedInputTokens int64     `json:"cachedInputTokens"`
	OutputTokens      int64     `json:"outputTokens"`
	Filed             string    `json:"filedUsd"`
	Discount          string    `json:"discountUsd"`
	LandingFee        string    `json:"landingFeeUsd"`
	Kept              string    `json:"keptUsd"`
}

var earningsColumns = []string{"start", "listing_id", "model", "requests", "unpriced", "input_tokens", "cached_input_tokens",
	"output_tokens", "filed_usd", "discount_usd", "landing_fee_usd", "kept_usd"}

func (r *earningsRow) cells() []string {
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	return []string{r.Start.Format(time.RFC3339), n(r.ListingID), r.Model, n(r.Requests), n(r.Unpriced), n(r.InputTokens),
		n(r.CachedInputTokens), n(r.OutputTokens), r.Filed, r.Discount, r.LandingFee, r.Kept}
}

// handleCarrierEarnings answers what the carrier's listings earned, per
// listing and hour, day or month (UTC), under the fare in force at each
// hour: the same sums as the traffic pages and the statement. Periods
// that served nothing are left out.
func (s *Server) handleCarrierEarnings(c echo.Context) error {
	period := earnings.Period(c.QueryParam("period"))
	if period == "" {
		period = earnings.ByDay
	}
	limit, ok := earningsWindows[period]
	if !ok {
		return apperr.Invalid(map[string]string{"period": "hour, day (the default) or month"})
	}
	g := period.UTC()
	now := s.Now().UTC()
	since, until, err := apiWindow(c, now.Add(-30*24*time.Hour), now, limit)
	if err != nil {
		return err
	}
	// Whole periods: a day asked from noon is the whole day.
	since, until = g.Start(since), g.Start(until.Add(-time.Nanosecond))
	until = g.Next(until)
	format, err := apiFormat(c)
	if err != nil {
		return err
	}
	ls, err := s.carrierListingsParam(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	ids := make([]int64, len(ls))
	for i, l := range ls {
		ids[i] = l.ID
	}
	hours, err := s.TrafficReads.HourlyTraffic(ctx, ids, since, until)
	if err != nil {
		return err
	}
	history, err := s.TrafficReads.FareHistory(ctx, ids)
	if err != nil {
		return err
	}
	rows := []earningsRow{}
	var total earnings.Money
	for _, l := range ls {
		for _, pt := range earnings.Series(g, since, until, hours[l.ID], history[l.ID], nil) {
			if pt.Requests == 0 && pt.Money == (earnings.Money{}) {
				continue
			}
			total.Filed += pt.Filed
			total.Discount += pt.Discount
			total.LandingFee += pt.LandingFee
			total.Kept += pt.Kept
			rows = append(rows, earningsRow{Start: pt.Start.UTC(), ListingID: l.ID, Model: l.Model.Slug, Requests: pt.Requests,
				Unpriced: pt.Unpriced, InputTokens: pt.InputTokens, CachedInputTokens: pt.CachedInputTokens,
				OutputTokens: pt.OutputTokens, Filed: usd(pt.Filed), Discount: usd(pt.Discount), LandingFee: usd(pt.LandingFee), Kept: usd(pt.Kept)})
		}
	}
	if format != "csv" {
		type totals struct {
			Filed      string `json:"filedUsd"`
			Discount   string `json:"discountUsd"`
			LandingFee string `json:"landingFeeUsd"`
			Kept       string `json:"keptUsd"`
		}
		return c.JSON(http.StatusOK, struct {
			Since   time.Time     `json:"since"`
			Until   time.Time     `json:"until"`
			Period  string        `json:"period"`
			Periods []earningsRow `json:"periods"`
			Total   totals        `json:"total"`
		}{since, until, string(period), rows, totals{usd(total.Filed), usd(total.Discount), usd(total.LandingFee), usd(total.Kept)}})
	}
	return writeCSV(c, "earnings.csv", earningsColumns, len(rows), func(i int) []string { return rows[i].cells() })
}

// handleCarrierStatement answers the carrier's statement of a month
// (YYYY-MM, the last 13): the document the statements page shows, issued
// or provisional, with its credit notes, as JSON or the page's CSV.
func (s *Server) handleCarrierStatement(c echo.Context) error {
	month, err := statementMonth(c.Param("month"), s.Now())
	if err != nil {
		return err
	}
	format, err := apiFormat(c)
	if err != nil {
		return err
	}
	// A carrier's token acts within its one carrier.
	ms := principal(c).Memberships
	if len(ms) != 1 {
		return apperr.Errorf(apperr.ENOTFOUND, "This token acts for no carrier.")
	}
	doc, err := s.Payouts.Document(c.Request().Context(), ms[0].Carrier, month)
	if err != nil {
		return err
	}
	if format == "csv" {
		var buf bytes.Buffer
		if err := payout.WriteCSV(&buf, doc); err != nil {
			return err
		}
		c.Response().Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="statement-%s.csv"`, month.Format("2006-01")))
		return c.Blob(http.StatusOK, "text/csv; charset=utf-8", buf.Bytes())
	}
	return c.JSON(http.StatusOK, statementBodyOf(doc))
}

// statementLine is one line of a statement, amounts as exact strings.
type statementLine struct {
	ListingID         int64  `json:"listingId,omitempty"`
	Model             string `json:"model"`
	Requests          int64  `json:"requests"`
	InputTokens       int64  `json:"inputTokens"`
	CachedInputTokens int64  `json:"cachedInputTokens"`
	OutputTokens      int64  `json:"outputTokens"`
	Filed             string `json:"filedUsd"`
	Discount          string `json:"discountUsd"`
	LandingFee        string `json:"landingFeeUsd"`
	Kept              string `json:"keptUsd"`
}

func statementLineOf(l earnings.Line) statementLine {
	return statementLine{ListingID: l.ID, Model: l.Model, Requests: l.Requests, InputTokens: l.InputTokens,
		CachedInputTokens: l.CachedInputTokens, OutputTokens: l.OutputTokens,
		Filed: usd(l.Filed), Discount: usd(l.Discount), LandingFee: usd(l.LandingFee), Kept: usd(l.Kept)}
}

func statementLinesOf(ls []earnings.Line) []statementLine {
	out := make([]statementLine, len(ls))
	for i, l := range ls {
		out[i] = statementLineOf(l)
	}
	return out
}

type creditNoteBody struct {
	Number   string          `json:"number"`
	IssuedAt time.Time       `json:"issuedAt"`
	Reason   string          `json:"reason"`
	Lines    []statementLine `json:"lines"`
	Total    statementLine   `json:"total"`
}

type statementBody struct {
	Month string `json:"month"`
	// Number and IssuedAt are absent while the month can still move.
	Number      string           `json:"number,omitempty"`
	IssuedAt    *time.Time       `json:"issuedAt,omitempty"`
	Provisional bool             `json:"provisional"`
	Lines       []statementLine  `json:"lines"`
	Total       statementLine    `json:"total"`
	CreditNotes []creditNoteBody `json:"creditNotes"`
	Net         statementLine    `json:"net"`
}

func statementBodyOf(d payout.Document) statementBody {
	b := statementBody{Month: d.Month.Format("2006-01"), Number: d.Number, IssuedAt: d.IssuedAt, Provisional: d.Number == "",
		Lines: statementLinesOf(d.Lines), Total: statementLineOf(d.Total), CreditNotes: []creditNoteBody{}, Net: statementLineOf(d.Net())}
	for _, n := range d.Notes {
		b.CreditNotes = append(b.CreditNotes, creditNoteBody{Number: n.Number, IssuedAt: n.IssuedAt, Reason: n.Reason,
			Lines: statementLinesOf(n.Lines), Total: statementLineOf(n.Total)})
	}
	return b
}

// apiWindow reads since and until (RFC 3339) with defaults, refusing a
// window that runs backwards or is longer than limit.
func apiWindow(c echo.Context, since, until time.Time, limit time.Duration) (time.Time, time.Time, error) {
	for _, q := range []struct {
		name string
		at   *time.Time
	}{{"since", &since}, {"until", &until}} {
		if raw := c.QueryParam(q.name); raw != "" {
			t, err := time.Parse(time.RFC3339, raw)
			if err != nil {
				return since, until, apperr.Invalid(map[string]string{q.name: "a time in RFC 3339, like 2026-12-01T00:00:00Z"})
			}
			*q.at = t.UTC()
		}
	}
	if !since.Before(until) || until.Sub(since) > limit {
		return since, until, apperr.Invalid(map[string]string{"since": fmt.Sprintf("since comes before until, at most %d days before it", int(limit.Hours()/24))})
	}
	return since, until, nil
}

// apiFormat reads format: json (the default) or csv.
func apiFormat(c echo.Context) (string, error) {
	format := c.QueryParam("format")
	if format != "" && format != "json" && format != "csv" {
		return "", apperr.Invalid(map[string]string{"format": "json (the default) or csv"})
	}
	return format, nil
}

// carrierListingsParam is the token's carrier's listings, or the one
// listingId names (not found when it is not the carrier's).
func (s *Server) carrierListingsParam(c echo.Context) ([]catalogue.Listing, error) {
	filter := catalogue.ListingFilter{CarrierIDs: principal(c).CarrierIDs(), WithoutFares: true, StoredHealth: true}
	if raw := c.QueryParam("listingId"); raw != "" {
		id, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || id < 1 {
			return nil, apperr.Invalid(map[string]string{"listingId": "a listing id is a positive whole number"})
		}
		filter.IDs = []int64{id}
	}
	ls, err := s.ListingReads.FindListings(c.Request().Context(), filter)
	if err != nil {
		return nil, err
	}
	if len(filter.IDs) > 0 && len(ls) == 0 {
		return nil, apperr.Errorf(apperr.ENOTFOUND, "Listing not found.")
	}
	return ls, nil
}

// writeCSV streams n records under a header as a CSV a spreadsheet opens
// safely.
func writeCSV(c echo.Context, name string, header []string, n int, record func(int) []string) error {
	res := c.Response()
	res.Header().Set("Content-Type", "text/csv; charset=utf-8")
	res.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename=%q`, name))
	res.WriteHeader(http.StatusOK)
	w := csvsafe.NewWriter(res)
	if err := w.Write(header); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		if err := w.Write(record(i)); err != nil {
			return err
		}
	}
	return w.Flush()
}
