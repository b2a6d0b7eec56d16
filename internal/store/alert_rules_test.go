package store_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/alerting"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/audit"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/mailer"
	"github.com/airside/airside/internal/mailer/mailertest"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
)

// TestAlertRulesAndMutesAreKeptAndAudited: a carrier's own rule settings
// and mutes are stored, read back, audited, and refused for a listing not
// its own.
func TestAlertRulesAndMutesAreKeptAndAudited(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
		s.Now = func() time.Time { return now }
		fx := newFixture(t, s)
		admin := adminPrincipal(t, s, fx)
		tuning := &alerting.Tuning{Store: s, Now: s.Now}
		form := map[alerting.Kind]alerting.RuleForm{
			alerting.AtCap:         {On: "on", OpenAfter: "0", CloseAfter: "30", Threshold: "5"},
			alerting.RankMoved:     {On: "", OpenAfter: "10", CloseAfter: "15", Threshold: "1"},
			alerting.UptimePenalty: {On: "on", OpenAfter: "5", CloseAfter: "15"}, // the default: no row
		}
		if err := tuning.SetRules(ctx, admin, fx.carrierID, form); err != nil {
			t.Fatal(err)
		}
		rules, err := s.CarrierAlertRules(ctx, fx.carrierID)
		if err != nil {
			t.Fatal(err)
		}
		if got := rules.Of(alerting.AtCap); got != (alerting.Setting{On: true, CloseAfter: 30 * time.Minute, Threshold: 5}) {
			t.Errorf("at_cap read back %+v", got)
		}
		if rules.Of(alerting.RankMoved).On {
			t.Error("the rank rule turned off reads back on")
		}
		if _, kept := rules[alerting.UptimePenalty]; kept {
			t.Error("a rule left at its default was stored")
		}
		all, _ := s.AlertRules(ctx)
		if all[fx.carrierID].Of(alerting.AtCap).Threshold != 5 {
			t.Errorf("the evaluator's read misses the carrier's rule: %+v", all)
		}
		// A bad field changes nothing, and names the field.
		bad := map[alerting.Kind]alerting.RuleForm{alerting.AtCap: {On: "on", OpenAfter: "0", CloseAfter: "30", Threshold: "90"},
			alerting.ShareDown: {On: "on", OpenAfter: "60", CloseAfter: "360", Threshold: "10"}}
		err = tuning.SetRules(ctx, admin, fx.carrierID, bad)
		if apperr.FieldErrors(err)["at_cap-threshold"] == "" {
			t.Errorf("a threshold of 90 minutes in an hour: %v", err)
		}
		if rules, _ := s.CarrierAlertRules(ctx, fx.carrierID); rules.Of(alerting.ShareDown) != alerting.DefaultSetting(alerting.ShareDown) {
			t.Error("a form with a bad field saved its good fields")
		}
		events, _ := s.FindAuditEvents(ctx, audit.Filter{CarrierIDs: []int64{fx.carrierID}, Action: "alert.rules"})
		if len(events) != 1 {
			t.Errorf("%d alert.rules audit events, want 1", len(events))
		}
		// A member may not change them.
		member, err := account.NewService(s).CreateUser(ctx, nil, account.NewUser{Email: "m@nebula.example", Password: "long enough pw",
			CarrierSlug: "nebula", CarrierRole: account.CarrierMember})
		if err != nil {
			t.Fatal(err)
		}
		mp, _ := s.FindPrincipal(ctx, member.ID)
		if err := tuning.SetRules(ctx, mp, fx.carrierID, form); apperr.Code(err) != apperr.EFORBIDDEN {
			t.Errorf("a member changed the rules: %v", err)
		}

		until, err := tuning.Mute(ctx, admin, fx.carrierID, fx.listingID, string(alerting.UptimePenalty), "8h")
		if err != nil || !until.Equal(now.Add(8*time.Hour)) {
			t.Fatalf("mute: %v, %v", until, err)
		}
		if _, err := tuning.Mute(ctx, admin, fx.carrierID, fx.listingID+1000, "", "1h"); apperr.FieldErrors(err)["listing"] == "" {
			t.Errorf("a listing not the carrier's was muted: %v", err)
		}
		if _, err := tuning.Mute(ctx, admin, fx.carrierID, fx.listingID, "", "3h"); apperr.FieldErrors(err)["for"] == "" {
			t.Errorf("a duration not offered was taken: %v", err)
		}
		mutes, _ := s.CarrierMutes(ctx, fx.carrierID, now)
		if len(mutes) != 1 || mutes[0].Listing != "GLM-5" || mutes[0].By != "a@nebula.example" || !mutes[0].Covers(fx.listingID, alerting.UptimePenalty, now) ||
			mutes[0].Covers(fx.listingID, alerting.AtCap, now) {
			t.Fatalf("mutes %+v", mutes)
		}
		if active, _ := s.ActiveMutes(ctx, now.Add(9*time.Hour)); len(active) != 0 {
			t.Errorf("a mute outlived its time: %+v", active)
		}
		if err := tuning.Unmute(ctx, admin, fx.carrierID, mutes[0].ID); err != nil {
			t.Fatal(err)
		}
		if active, _ := s.ActiveMutes(ctx, now); len(active) != 0 {
			t.Errorf("unmuted, still in force: %+v", active)
		}
		for _, action := range []string{"alert.mute", "alert.unmute"} {
			if events, _ := s.FindAuditEvents(ctx, audit.Filter{CarrierIDs: []int64{fx.carrierID}, Action: action}); len(events) != 1 {
				t.Errorf("%d %s audit events, want 1", len(events), action)
			}
		}
	})
}

// TestAFlappingAlertReopensOnceAcrossProcesses: two processes fold a
// condition that came back into the alert that resolved; one of them
// reopens it, the carrier is told once, and the webhook says flapping.
func TestAFlappingAlertReopensOnceAcrossProcesses(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			url := storetest.URL(t, d)
			a, b := storetest.OpenURL(t, url), storetest.OpenURL(t, url)
			now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
			for _, s := range []*store.Store{a, b} {
				s.Now = func() time.Time { return now }
			}
			fx := newFixture(t, a)
			al := alerting.Alert{CarrierID: fx.carrierID, ListingID: fx.listingID, Listing: "nebula/glm-5", Kind: alerting.AtCap, Detail: "first"}
			if opened, err := a.OpenAlert(ctx, al, "Alert: opened"); err != nil || !opened {
				t.Fatal(opened, err)
			}
			open, _ := a.OpenAlerts(ctx)
			now = now.Add(20 * time.Minute)
			if _, err := a.ResolveAlert(ctx, open[0], "Recovered", ""); err != nil {
				t.Fatal(err)
			}
			now = now.Add(10 * time.Minute)
			resolved, err := b.ResolvedSince(ctx, now.Add(-alerting.FoldWindow))
			if err != nil || len(resolved) != 1 {
				t.Fatalf("resolved since: %+v, %v", resolved, err)
			}
			var wg sync.WaitGroup
			var reopened sync.Map
			for i, s := range []*store.Store{a, b} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ok, err := s.ReopenAlert(ctx, resolved[0], "again", "Flapping: told once")
					if err != nil {
						t.Error(err)
					}
					reopened.Store(i, ok)
				}()
			}
			wg.Wait()
			n := 0
			reopened.Range(func(_, v any) bool {
				if v.(bool) {
					n++
				}
				return true
			})
			if n != 1 {
				t.Errorf("%d processes reopened the alert, want 1", n)
			}
			alerts, _ := a.FindAlerts(ctx, fx.carrierID, 10)
			if len(alerts) != 1 || alerts[0].ResolvedAt != nil || alerts[0].Flaps != 1 || alerts[0].Detail != "again" || alerts[0].ReopenedAt == nil {
				t.Fatalf("after the fold: %+v", alerts)
			}
			inbox, _ := a.FindNotifications(ctx, fx.authorID, 10)
			flapping := 0
			for _, m := range inbox {
				if strings.HasPrefix(m.Message, "Flapping:") {
					flapping++
				}
			}
			if flapping != 1 {
				t.Errorf("the carrier was told of the flapping %d times", flapping)
			}
		})
	}
}

// TestTheDailyDigestGoesOnceADay: two processes send the digest to the
// admins who keep the default (the digest), once, after the hour; not
// before it, and not to someone who chose each alert.
func TestTheDailyDigestGoesOnceADay(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			url := storetest.URL(t, d)
			a, b := storetest.OpenURL(t, url), storetest.OpenURL(t, url)
			now := time.Date(2026, 12, 4, 6, 30, 0, 0, time.UTC)
			for _, s := range []*store.Store{a, b} {
				s.Now = func() time.Time { return now }
			}
			fx := newFixture(t, a)
			al := alerting.Alert{CarrierID: fx.carrierID, ListingID: fx.listingID, Listing: "nebula/glm-5", Kind: alerting.UptimePenalty,
				Detail: "uptime 90.0 % over the last 10 minutes"}
			if _, err := a.OpenAlert(ctx, al, "Alert: x"); err != nil {
				t.Fatal(err)
			}
			other, err := account.NewService(a).CreateUser(ctx, nil, account.NewUser{Email: "each@nebula.example", Password: "long enough pw",
				CarrierSlug: "nebula", CarrierRole: account.CarrierAdmin})
			if err != nil {
				t.Fatal(err)
			}
			each, _ := a.FindPrincipal(ctx, other.ID)
			if err := (&account.AlertEmails{Store: a}).Set(ctx, each, account.AlertEmailEach); err != nil {
				t.Fatal(err)
			}
			relay := mailertest.Start(t)
			mail, err := mailer.FromURL("smtp://" + relay.Addr + "?from=portal@airside.example")
			if err != nil {
				t.Fatal(err)
			}
			digests := []*alerting.Digest{
				{Store: a, Mail: mail, Recipients: (&account.AlertEmails{Store: a}).DigestRecipients, Now: a.Now, Log: quiet},
				{Store: b, Mail: mail, Recipients: (&account.AlertEmails{Store: b}).DigestRecipients, Now: b.Now, Log: quiet},
			}
			if n, err := digests[0].Once(ctx); err != nil || n != 0 {
				t.Fatalf("before 07:00 UTC: %d digests, %v", n, err)
			}
			now = now.Add(time.Hour)
			var wg sync.WaitGroup
			for _, dg := range digests {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := dg.Once(ctx); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			mails := relay.Messages()
			if len(mails) != 1 || !strings.Contains(mails[0].To, "a@nebula.example") ||
				!strings.Contains(mails[0].Data, "Subject: Airside daily digest: 1 open, 0 resolved") || !strings.Contains(mails[0].Data, "nebula/glm-5 is uptime under 95") {
				t.Fatalf("digests sent: %+v", mails)
			}
			now = now.Add(5 * time.Hour)
			if n, _ := digests[1].Once(ctx); n != 0 {
				t.Errorf("a second digest the same day")
			}
			// A process started later that day finds it claimed.
			fresh := &alerting.Digest{Store: b, Mail: mail, Recipients: (&account.AlertEmails{Store: b}).DigestRecipients, Now: b.Now, Log: quiet}
			if n, err := fresh.Once(ctx); err != nil || n != 0 || len(relay.Messages()) != 1 {
				t.Errorf("a new process sent %d digests (%v), %d e-mails in all", n, err, len(relay.Messages()))
			}
		})
	}
}

// TestOnCallFiguresReadOneCarrier: the on-call view's read sums the last
// window per listing and lists the minutes the gateways' limits acted,
// for one carrier's listings only.
func TestOnCallFiguresReadOneCarrier(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
		s.Now = func() time.Time { return now }
		fx := newFixture(t, s)
		l, err := s.FindListing(ctx, fx.listingID, nil)
		if err != nil {
			t.Fatal(err)
		}
		other, err := s.CreateCarrier(ctx, nil, "orbit", "Orbit")
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := s.CreateListing(ctx, nil, other.ID, l.Model.ID)
		if err != nil {
			t.Fatal(err)
		}
		buckets := minutes(fx.listingID, now.Add(-20*time.Minute), 20, 10, 1, 0) // 10 of them in the window
		buckets[15].BreakerOpenings, buckets[17].Backoffs = 1, 2
		buckets = append(buckets, minutes(theirs, now.Add(-5*time.Minute), 5, 7, 0, 0)...)
		buckets[len(buckets)-1].BreakerOpenings = 1
		if err := s.RecordBuckets(ctx, buckets); err != nil {
			t.Fatal(err)
		}
		got, err := s.OnCallFigures(ctx, fx.carrierID, now.Add(-10*time.Minute), now.Add(-24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		mine := got[fx.listingID]
		if len(got) != 1 || mine.Window.Requests != 90 || mine.Window.Errors != 9 {
			t.Errorf("figures %+v, want only the carrier's listing with 90 requests and 9 errors over the window", got)
		}
		spells := catalogue.LimitSpells(mine.LimitMinutes)
		if len(mine.LimitMinutes) != 2 || len(spells) != 2 || spells[0].Limit != "breaker" || spells[1].Limit != "backoff" || spells[1].Backoffs != 2 {
			t.Errorf("limit minutes %+v, spells %+v", mine.LimitMinutes, spells)
		}
	})
}
