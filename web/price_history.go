package web

import (
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/earnings"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/workflow"
	"github.com/airside/airside/templates"
)

// priceHistoryDays is how far back the market chart looks.
const priceHistoryDays = 30

// handlePriceHistory is /listings/:id/prices: the listing's published fares
// over time, and its model's market (the lowest, median and highest routing
// input price of the model's listings, day by day) with its own beside it.
// Competitors appear only as those three figures a day, never by name or
// with their landing fees.
func (s *Server) handlePriceHistory(c echo.Context) error {
	ctx, p := c.Request().Context(), principal(c)
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	l, err := s.ListingReads.FindListingHeader(ctx, id, workflow.Scope(p))
	if err != nil {
		return err
	}
	peers, err := s.ListingReads.FindListings(ctx, catalogue.ListingFilter{ModelID: l.Model.ID, Published: true, StoredHealth: true})
	if err != nil {
		return err
	}
	ids := []int64{l.ID}
	for _, peer := range peers {
		if peer.ID != l.ID {
			ids = append(ids, peer.ID)
		}
	}
	history, err := s.TrafficReads.FareHistory(ctx, ids)
	if err != nil {
		return err
	}
	today := s.Now().UTC().Truncate(24 * time.Hour)
	days := earnings.Market(history, l.ID, today.AddDate(0, 0, -(priceHistoryDays-1)), today.Add(24*time.Hour))
	v := templates.PriceHistoryView{Page: s.page(c, "Price history: "+l.Model.Name, "listings"), Carrier: l.CarrierName,
		Model: l.Model.Name, ListingURL: fmt.Sprintf("/listings/%d", l.ID)}
	spans := history[l.ID]
	for i := len(spans) - 1; i >= 0; i-- { // newest first
		f := spans[i].Fare
		v.Fares = append(v.Fares, templates.FareHistoryRow{From: spans[i].From.UTC().Format("2006-01-02 15:04"),
			Input: templates.Dollars(f.Input), Output: templates.Dollars(f.Output), Cached: templates.OptDollars(f.CachedInput),
			Discount: f.Discount.Percent() + " %", LandingFee: f.LandingFee.Percent() + " %", RoutesAt: templates.RoutesAt(f.Effective(f.Input))})
	}
	v.Chart = marketChart(days)
	return render(c, http.StatusOK, templates.PriceHistory(v))
}

// marketChart draws the market's median as bars and the listing's own
// routing input price as a line, with every day's figures in its table.
func marketChart(days []earnings.MarketDay) templates.SeriesChartView {
	usd := func(m money.Micros) float64 { return float64(m) / 1e6 }
	spec := templates.SeriesSpec{Title: "Routing input price against the model's market", TestID: "market-chart",
		Description: "The median routing input price of the model's listings each day (bars) and this listing's own (line), USD per million tokens, at the fare in force at each day's end.",
		YLabel:      "USD / M tokens", XLabel: "Day (UTC)", BarName: "market median", LineName: "this listing",
		Format:    templates.AxisUSD,
		TableHead: []string{"Day (UTC)", "Listings", "Lowest", "Median", "Highest", "This listing"}}
	for _, d := range days {
		spec.Labels = append(spec.Labels, d.Day.Format("01-02"))
		mine, mineText := math.NaN(), "—"
		if d.Mine != nil {
			mine, mineText = usd(*d.Mine), templates.Dollars(*d.Mine)
		}
		spec.Line = append(spec.Line, mine)
		if d.Listings == 0 {
			spec.Bars = append(spec.Bars, math.NaN())
			spec.TableRows = append(spec.TableRows, []string{d.Day.Format("2006-01-02"), "0", "—", "—", "—", mineText})
			continue
		}
		spec.Bars = append(spec.Bars, usd(d.Median))
		spec.TableRows = append(spec.TableRows, []string{d.Day.Format("2006-01-02"), templates.Count(int64(d.Listings)),
			templates.Dollars(d.Min), templates.Dollars(d.Median), templates.Dollars(d.Max), mineText})
	}
	return templates.NewSeriesChart(spec)
}
