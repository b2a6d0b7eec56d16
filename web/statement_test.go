package web_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/store"
)

// TestStatementCoversItsMonth (L5): a statement lists the listings that
// existed in its month, by model name; its CSV writes every amount with the
// same six decimals; the month links start at the carrier's first month.
func TestStatementCoversItsMonth(t *testing.T) {
	p := newPortal(t, store.SQLite)
	if err := demo.SeedHistory(context.Background(), p.store, 40); err != nil {
		t.Fatal(err)
	}
	admin := p.client()
	admin.login("admin@nebula.example")
	opt := regexp.MustCompile(`<option value="(\d+:\d+)">GLM-5</option>`).FindStringSubmatch(admin.get("/listings").body)
	if opt == nil {
		t.Fatal("no GLM-5 to add for Nebula")
	}
	added := admin.post("/listings", "/listings", url.Values{"model": {opt[1]}})
	wantStatus(t, "add a listing", added, http.StatusSeeOther)
	link := strings.TrimPrefix(added.location, "/listings/")

	now := time.Now().UTC()
	last := now.AddDate(0, -1, 0).Format("2006-01")
	this := now.Format("2006-01")
	page := admin.get("/traffic/statements/" + last + "?carrier=nebula")
	wantStatus(t, "last month", page, http.StatusOK)
	if strings.Contains(page.body, "/traffic/listings/"+link+"?") {
		t.Error("last month's statement lists a listing created this month")
	}
	if !strings.Contains(admin.get("/traffic/statements/"+this+"?carrier=nebula").body, "/traffic/listings/"+link+"?") {
		t.Error("this month's statement does not list the listing created in it")
	}
	kimi := listingOf(t, p.store, "nebula", "kimi-k2.5")
	if !strings.Contains(page.body, ">"+kimi.Model.Name+"<") {
		t.Errorf("the statement does not name the model %q", kimi.Model.Name)
	}
	// Months: from the history's first month to now, not 13 empty ones.
	first := now.AddDate(0, 0, -40).Format("Jan 2006")
	before := now.AddDate(0, 0, -40).AddDate(0, -1, 0).Format("Jan 2006")
	if !strings.Contains(page.body, ">"+first+"<") || strings.Contains(page.body, ">"+before+"<") {
		t.Errorf("the month links do not start at %s", first)
	}
	res := admin.get("/traffic/statements/" + last + ".csv?carrier=nebula")
	rows, err := csv.NewReader(strings.NewReader(res.body)).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("CSV: %v, %d rows", err, len(rows))
	}
	sixDecimals := regexp.MustCompile(`^-?\d+\.\d{6}$`)
	for _, r := range rows[1:] {
		for _, cell := range r[8:12] {
			if !sixDecimals.MatchString(cell) {
				t.Errorf("amount %q does not have six decimals (row %v)", cell, r)
			}
		}
	}
}

// TestRecentTrafficChartStartsAtTheFirstReport (L14): a listing reported on
// for the last half hour gets a chart from that report, saying so, not six
// hours of mostly empty axis.
func TestRecentTrafficChartStartsAtTheFirstReport(t *testing.T) {
	p := newPortal(t, store.SQLite)
	now := time.Now().UTC()
	l := listingOf(t, p.store, "nebula", "kimi-k2.5")
	var buckets []catalogue.Bucket
	for i := range 30 {
		buckets = append(buckets, catalogue.Bucket{ListingID: l.ID, Minute: now.Truncate(time.Minute).Add(-time.Duration(i) * time.Minute), Counts: catalogue.Counts{Requests: 5}})
	}
	if err := p.store.RecordBuckets(context.Background(), buckets); err != nil {
		t.Fatal(err)
	}
	admin := p.client()
	admin.login("admin@nebula.example")
	body := admin.get(fmt.Sprintf("/listings/%d", l.ID)).body
	if !strings.Contains(body, "Requests since ") || strings.Contains(body, "Requests, last 6 hours") {
		t.Error("the recent-traffic chart does not start at the first report")
	}
}
