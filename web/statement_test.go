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
	"github.com/airside/airside/internal/earnings"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/payout"
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

// TestAnIssuedStatementsFormsAgree: last month's statement, once settled,
// carries its number on the page, the PDF and the CSV, and the three say
// what the carrier is owed to the micro-dollar; downloading again gives
// the same files.
func TestAnIssuedStatementsFormsAgree(t *testing.T) {
	p := newPortal(t, store.SQLite)
	if err := demo.SeedHistory(context.Background(), p.store, 40); err != nil {
		t.Fatal(err)
	}
	admin := p.client()
	admin.login("admin@nebula.example")
	// The month two back is settled whatever today's date.
	month := time.Now().UTC().AddDate(0, 0, -35)
	name := earnings.MonthOf(month).Format("2006-01")
	page := admin.get("/traffic/statements/" + name + "?carrier=nebula")
	wantStatus(t, "statement", page, http.StatusOK)
	number := regexp.MustCompile(`Statement (ST-\d{6}), issued`).FindStringSubmatch(page.body)
	exact := regexp.MustCompile(`you are owed (\$[\d,]+\.\d{6})`).FindStringSubmatch(page.body)
	if number == nil || exact == nil {
		t.Fatalf("the page shows no number or no exact amount owed:\n%s", regexp.MustCompile(`(?s)<main.{0,1000}`).FindString(page.body))
	}
	csvRes := admin.get("/traffic/statements/" + name + ".csv?carrier=nebula")
	rows, err := csv.NewReader(strings.NewReader(csvRes.body)).ReadAll()
	if err != nil || len(rows) < 3 {
		t.Fatalf("CSV: %v, %d rows", err, len(rows))
	}
	total := rows[len(rows)-1]
	if total[2] != "total" || total[12] != number[1] || !strings.Contains(csvRes.header.Get("Content-Disposition"), number[1]) {
		t.Errorf("the CSV's total row %q does not carry %s", total, number[1])
	}
	kept, err := money.ParsePrice(total[11])
	if err != nil || payout.Exact(kept) != exact[1] {
		t.Errorf("the CSV owes %s, the page %s", total[11], exact[1])
	}
	pdf := admin.get("/traffic/statements/" + name + ".pdf?carrier=nebula")
	wantStatus(t, "statement PDF", pdf, http.StatusOK)
	if pdf.header.Get("Content-Type") != "application/pdf" || !strings.HasPrefix(pdf.body, "%PDF-") {
		t.Fatalf("the PDF is %q", pdf.header.Get("Content-Type"))
	}
	for _, want := range []string{"Airside payout statement " + number[1], "Owed to the carrier: " + exact[1]} {
		if !strings.Contains(pdf.body, strings.NewReplacer("(", `\(`, ")", `\)`).Replace(want)) {
			t.Errorf("the PDF does not say %q", want)
		}
	}
	if again := admin.get("/traffic/statements/" + name + ".pdf?carrier=nebula"); again.body != pdf.body {
		t.Error("the issued statement's PDF changed between downloads")
	}
	other := p.client()
	other.login("member@orbit.example")
	wantStatus(t, "another carrier's statement PDF", other.get("/traffic/statements/"+name+".pdf?carrier=nebula"), http.StatusNotFound)
}
