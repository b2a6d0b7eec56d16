package web_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/templates"
)

// TestPriceHistory: a listing's page links its price history; the history
// lists its published fares newest first, and the market table sets its
// routing price beside the model's lowest, median and highest of the day.
// Another carrier's listing is not found.
func TestPriceHistory(t *testing.T) {
	p := newPortal(t, store.SQLite)
	listing := listingIDs(t, p.store)["nebula"][0]
	publishOne(t, p) // nebula's first listing files input 0.41, approved
	c := p.client()
	c.login("member@nebula.example")
	page := fmt.Sprintf("/listings/%d", listing)
	if !strings.Contains(c.get(page).body, `href="`+page+`/prices"`) {
		t.Error("the listing page does not link its price history")
	}
	res := c.get(page + "/prices")
	wantStatus(t, "price history", res, http.StatusOK)
	fares := regexp.MustCompile(`(?s)data-testid="fare-history".*?</table>`).FindString(res.body)
	rows := regexp.MustCompile(`<tr><td>`).FindAllStringIndex(fares, -1)
	if len(rows) < 2 || !strings.Contains(fares[:rows[1][0]], "$0.4100") {
		t.Errorf("the fare history does not list the new fare first:\n%.800s", fares)
	}
	chart := regexp.MustCompile(`(?s)data-testid="market-chart".*`).FindString(res.body)
	today := regexp.MustCompile(`<tr><th scope="row">(\d{4}-\d{2}-\d{2})</th><td[^>]*>(\d+)</td><td[^>]*>([^<]+)</td><td[^>]*>([^<]+)</td><td[^>]*>([^<]+)</td><td[^>]*>([^<]+)</td></tr>`).FindAllStringSubmatch(chart, -1)
	if len(today) == 0 {
		t.Fatalf("the market table has no rows:\n%.1500s", chart)
	}
	last := today[len(today)-1]
	// 0.41 at the demo's landing fee and discount: the routing price the
	// listing page states for input.
	// The table is exact; the page rounds to four decimals, saying so.
	routes := regexp.MustCompile(`routes at ((?:about )?\$[0-9.]+)`).FindStringSubmatch(c.get(page).body)
	own, err := money.ParsePrice(strings.TrimPrefix(last[6], "$"))
	if routes == nil || err != nil || templates.RoutesAt(own) != routes[1] {
		t.Errorf("today's own price %q, want the listing page's %v", last[6], routes)
	}
	if last[2] == "0" || last[3] == "—" {
		t.Errorf("today's market row %v: the model's listings are in force", last)
	}

	other := p.client()
	other.login("member@orbit.example")
	wantStatus(t, "another carrier's price history", other.get(page+"/prices"), http.StatusNotFound)
}
