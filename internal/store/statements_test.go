package store_test

import (
	"sync"
	"testing"
	"time"

	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/earnings"
	"github.com/airside/airside/internal/money"
	"github.com/airside/airside/internal/payout"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
)

// TestAStatementIsIssuedOnceAndNeverChanges: two processes issue the same
// month at once and get one numbered statement; issuing again with other
// figures returns the first; credit notes are numbered and taken once per
// place.
func TestAStatementIsIssuedOnceAndNeverChanges(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			url := storetest.URL(t, d)
			a, b := storetest.OpenURL(t, url), storetest.OpenURL(t, url)
			now := time.Date(2026, 12, 2, 2, 0, 0, 0, time.UTC)
			for _, s := range []*store.Store{a, b} {
				s.Now = func() time.Time { return now }
			}
			fx := newFixture(t, a)
			month := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
			st := func(kept money.Micros) earnings.Statement {
				l := earnings.Line{Listing: earnings.Listing{ID: fx.listingID, Carrier: "nebula", Model: "glm-5", ModelName: "GLM-5"},
					Traffic: earnings.Traffic{Requests: 10}, Money: earnings.Money{Kept: kept}}
				return earnings.Statement{Carrier: "nebula", Month: month, Closed: true, Lines: []earnings.Line{l}, Total: l}
			}
			var wg sync.WaitGroup
			numbers := make([]string, 2)
			for i, s := range []*store.Store{a, b} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					is, err := s.IssueStatement(ctx, fx.carrierID, st(money.Micros(504000)))
					if err != nil {
						t.Error(err)
					}
					numbers[i] = is.Number
				}()
			}
			wg.Wait()
			if numbers[0] == "" || numbers[0] != numbers[1] {
				t.Fatalf("two processes issued %q", numbers)
			}
			again, err := a.IssueStatement(ctx, fx.carrierID, st(money.Micros(999999)))
			if err != nil || again.Number != numbers[0] || again.Total.Kept != 504000 || !again.Month.Equal(month) {
				t.Fatalf("issuing again: %+v, %v; want the first, unchanged", again, err)
			}
			got, err := b.IssuedStatement(ctx, fx.carrierID, month)
			if err != nil || got == nil || got.Number != numbers[0] || got.Lines[0].ModelName != "GLM-5" {
				t.Fatalf("read back: %+v, %v", got, err)
			}
			if none, _ := b.IssuedStatement(ctx, fx.carrierID, month.AddDate(0, -1, 0)); none != nil {
				t.Errorf("a month never issued reads %+v", none)
			}
			note := payout.CreditNote{Reason: "late minutes", Lines: []earnings.Line{{Traffic: earnings.Traffic{Requests: 5}}}}
			note.Total = note.Lines[0]
			if ok, err := a.AddCreditNote(ctx, got.ID, 1, note); err != nil || !ok {
				t.Fatalf("first note: %v %v", ok, err)
			}
			if ok, _ := b.AddCreditNote(ctx, got.ID, 1, note); ok {
				t.Error("a second process added the same note")
			}
			notes, err := b.CreditNotes(ctx, got.ID)
			if err != nil || len(notes) != 1 || notes[0].Number == "" || notes[0].Total.Requests != 5 || notes[0].Reason != "late minutes" {
				t.Errorf("notes %+v, %v", notes, err)
			}
			carriers, err := a.PayoutCarriers(ctx, now.Add(time.Minute))
			if err != nil || len(carriers) != 1 || carriers[0].Slug != "nebula" {
				t.Errorf("payout carriers %+v, %v", carriers, err)
			}
		})
	}
}

// TestOrganisationsMinutesAddUpByHour: reported organisations' minutes are
// kept once per key (a retry, even with other figures, changes nothing)
// and summed by hour for the pages.
func TestOrganisationsMinutesAddUpByHour(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		now := time.Date(2026, 12, 4, 10, 30, 0, 0, time.UTC)
		s.Now = func() time.Time { return now }
		fx := newFixture(t, s)
		row := func(minute int, org string, requests int64) catalogue.OrgUsage {
			return catalogue.OrgUsage{ListingID: fx.listingID, Minute: now.Truncate(time.Hour).Add(time.Duration(minute) * time.Minute), Source: "gw-1",
				Organisation: org, Requests: requests, InputTokens: requests * 1000, OutputTokens: requests * 10}
		}
		n, err := s.RecordOrgUsage(ctx, []catalogue.OrgUsage{row(1, "org-a", 10), row(2, "org-a", 5), row(2, "org-b", 7), row(-30, "org-a", 1)})
		if err != nil || n != 4 {
			t.Fatalf("recorded %d, %v", n, err)
		}
		if n, _ := s.RecordOrgUsage(ctx, []catalogue.OrgUsage{row(1, "org-a", 999)}); n != 0 {
			t.Errorf("a replayed minute was stored again")
		}
		hours, err := s.OrgHours(ctx, []int64{fx.listingID}, now.Add(-2*time.Hour), now.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		a := hours[fx.listingID]["org-a"]
		if len(a) != 2 || a[0].Requests != 1 || a[1].Requests != 15 || a[1].InputTokens != 15000 || hours[fx.listingID]["org-b"][0].Requests != 7 {
			t.Errorf("hours %+v", hours)
		}
	})
}
