package store_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/alerting"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/audit"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/mailer"
	"github.com/airside/airside/internal/mailer/mailertest"
	"github.com/airside/airside/internal/netguard"
	"github.com/airside/airside/internal/secret"
	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func minutes(listingID int64, from time.Time, n int, requests, errors, capped int64) []catalogue.Bucket {
	var out []catalogue.Bucket
	for i := range n {
		out = append(out, catalogue.Bucket{ListingID: listingID, Minute: from.Add(time.Duration(i) * time.Minute), Counts: catalogue.Counts{Requests: requests,
			Errors: errors, Capped: capped}})
	}
	return out
}

// TestAlertsOpenOnceAndRecover plants an outage and a cap, runs the
// evaluator of two processes at once, then lets the listing recover.
func TestAlertsOpenOnceAndRecover(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			url := storetest.URL(t, d)
			a, b := storetest.OpenURL(t, url), storetest.OpenURL(t, url)
			now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
			for _, s := range []*store.Store{a, b} {
				s.Now = func() time.Time { return now }
			}
			fx := newFixture(t, a)
			// 10 minutes at 80 % uptime, at the cap in 20 minutes of the hour.
			if err := a.RecordBuckets(ctx, minutes(fx.listingID, now.Add(-30*time.Minute), 20, 100, 0, 5)); err != nil {
				t.Fatal(err)
			}
			if err := a.RecordBuckets(ctx, minutes(fx.listingID, now.Add(-9*time.Minute), 10, 100, 20, 0)); err != nil {
				t.Fatal(err)
			}
			// Alerts are e-mailed through a local relay: to the carrier's
			// admin (the fixture's author), who chose each alert, once per
			// alert although two processes judge at once.
			relay := mailertest.Start(t)
			mail, err := mailer.FromURL("smtp://" + relay.Addr + "?from=portal@airside.example")
			if err != nil {
				t.Fatal(err)
			}
			recipients := (&account.AlertEmails{Store: a}).Recipients
			evaluators := []*alerting.Evaluator{{Store: a, Now: a.Now, Log: quiet, Mail: mail, Recipients: recipients},
				{Store: b, Now: b.Now, Log: quiet, Mail: mail, Recipients: recipients}}
			author, _ := a.FindPrincipal(ctx, fx.authorID)
			if err := (&account.AlertEmails{Store: a}).Set(ctx, author, account.AlertEmailEach); err != nil {
				t.Fatal(err)
			}
			// The first pass sees the conditions start; the alerts open once
			// they have held for their rules' time.
			for _, e := range evaluators {
				if err := e.Once(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if alerts, _ := a.FindAlerts(ctx, fx.carrierID, 10); len(alerts) != 0 {
				t.Fatalf("alerts opened at first sight: %+v", alerts)
			}
			now = now.Add(alerting.DefaultSetting(alerting.UptimePenalty).OpenAfter)
			var wg sync.WaitGroup
			for _, e := range evaluators {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := e.Once(ctx); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			alerts, _ := a.FindAlerts(ctx, fx.carrierID, 10)
			kinds := map[alerting.Kind]int{}
			for _, al := range alerts {
				kinds[al.Kind]++
			}
			if kinds[alerting.UptimePenalty] != 1 || kinds[alerting.UptimeSwitch] != 1 || kinds[alerting.AtCap] != 1 || len(alerts) != 3 {
				t.Fatalf("alerts %v, want one each of uptime 95, uptime 85 and cap", kinds)
			}
			inbox, _ := a.FindNotifications(ctx, fx.authorID, 20)
			if len(inbox) != 3 || !strings.Contains(inbox[0].Message+inbox[1].Message+inbox[2].Message, "uptime 80.0 %") {
				t.Errorf("inbox %+v, want three alert messages naming the uptime", inbox)
			}
			mails := relay.Messages()
			if len(mails) != 3 {
				t.Fatalf("%d alert e-mails, want one per alert (3) from two processes", len(mails))
			}
			for _, m := range mails {
				if !strings.Contains(m.To, author.User.Email) || !strings.Contains(m.Data, "Subject: Airside alert: ") || !strings.Contains(m.Data, "Account page") {
					t.Errorf("alert e-mail to %s:\n%s", m.To, m.Data)
				}
			}
			// Opting out stops them: the recovery goes to the inbox only.
			if err := (&account.AlertEmails{Store: a}).Set(ctx, author, account.AlertEmailOff); err != nil {
				t.Fatal(err)
			}
			// Recovery: an hour later the listing is healthy.
			now = now.Add(70 * time.Minute)
			if err := a.RecordBuckets(ctx, minutes(fx.listingID, now.Add(-10*time.Minute), 11, 100, 0, 0)); err != nil {
				t.Fatal(err)
			}
			if err := evaluators[0].Once(ctx); err != nil {
				t.Fatal(err)
			}
			if open, _ := a.OpenAlerts(ctx); len(open) != 3 {
				t.Errorf("alerts resolved the moment their conditions cleared: %d open, want 3", len(open))
			}
			now = now.Add(alerting.DefaultSetting(alerting.AtCap).CloseAfter)
			if err := a.RecordBuckets(ctx, minutes(fx.listingID, now.Add(-14*time.Minute), 15, 100, 0, 0)); err != nil {
				t.Fatal(err)
			}
			if err := evaluators[0].Once(ctx); err != nil {
				t.Fatal(err)
			}
			open, _ := a.OpenAlerts(ctx)
			if len(open) != 0 {
				t.Errorf("alerts still open after recovery: %+v", open)
			}
			if n := len(relay.Messages()); n != 3 {
				t.Errorf("%d e-mails after the admin opted out and the alerts recovered, want still 3", n)
			}
			inbox, _ = a.FindNotifications(ctx, fx.authorID, 20)
			if len(inbox) != 6 || !strings.HasPrefix(inbox[0].Message, "Recovered:") {
				t.Errorf("after recovery the inbox has %d messages, the newest %q", len(inbox), inbox[0].Message)
			}
		})
	}
}

func TestWebhookDeliveriesAreSignedRetriedAndAddressChecked(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
		s.Now = func() time.Time { return now }
		fx := newFixture(t, s)
		key, _ := secret.ParseKey(secret.NewKey())
		box, _ := secret.New(key)
		var calls atomic.Int32
		var verified atomic.Int32
		var secretText string
		var ids sync.Map // webhook-id of each attempt: one message, retried
		receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if alerting.Verify(secretText, r.Header.Get("Airside-Signature"), body, now, 5*time.Minute) == nil && r.Header.Get("Airside-Event") == "test" &&
				standardWebhookValid(secretText, r.Header, body) {
				verified.Add(1)
			}
			ids.Store(r.Header.Get("webhook-id"), true)
			if calls.Add(1) == 1 {
				w.WriteHeader(http.StatusServiceUnavailable) // the first attempt fails
				return
			}
			w.WriteHeader(http.StatusNoContent)
		}))
		defer receiver.Close()

		hooks := &alerting.Hooks{Store: s, Secrets: box, Outbound: netguard.New(false)}
		admin := adminPrincipal(t, s, fx)
		if _, err := hooks.Set(ctx, admin, fx.carrierID, receiver.URL+"/hook"); err == nil {
			t.Fatal("a loopback webhook was accepted with the address rule on")
		}
		hooks.Outbound = netguard.New(true)
		var err error
		if secretText, err = hooks.Set(ctx, admin, fx.carrierID, receiver.URL+"/hook"); err != nil || !strings.HasPrefix(secretText, "whsec_") {
			t.Fatalf("set webhook: %q, %v", secretText, err)
		}
		if err := hooks.Test(ctx, admin, fx.carrierID); err != nil {
			t.Fatal(err)
		}
		sender := &alerting.Sender{Store: s, HTTP: netguard.New(true).Client(5 * time.Second), OpenSecret: hooks.OpenSecret, Now: s.Now, Log: quiet}
		if n, err := sender.Once(context.Background()); err != nil || n != 1 {
			t.Fatalf("first attempt: %d, %v", n, err)
		}
		d, _ := s.FindDeliveries(ctx, fx.carrierID, 5)
		if d[0].State != alerting.Pending || d[0].Attempts != 1 || d[0].LastStatus != 503 || !d[0].NextAttemptAt.Equal(now.Add(time.Minute)) {
			t.Fatalf("after a 503: %+v, want pending, retried in a minute", d[0])
		}
		if n, _ := sender.Once(context.Background()); n != 0 {
			t.Errorf("a delivery was retried before its time")
		}
		now = now.Add(61 * time.Second)
		if n, err := sender.Once(context.Background()); err != nil || n != 1 {
			t.Fatalf("retry: %d, %v", n, err)
		}
		d, _ = s.FindDeliveries(ctx, fx.carrierID, 5)
		if d[0].State != alerting.Delivered || d[0].Attempts != 2 || verified.Load() != 2 {
			t.Errorf("after the retry: %+v, %d signatures verified", d[0], verified.Load())
		}
		if st := sender.Stats(); st != (alerting.SenderStats{Delivered: 1, Retried: 1}) {
			t.Errorf("the sender counted %+v, want one retried and one delivered attempt", st)
		}
		n := 0
		ids.Range(func(any, any) bool { n++; return true })
		if n != 1 {
			t.Errorf("the two attempts of one delivery carried %d webhook-ids, want the same one", n)
		}
		// A receiver that moved to a private address is refused by the sender's client.
		guarded := &alerting.Sender{Store: s, HTTP: netguard.New(false).Client(5 * time.Second), OpenSecret: hooks.OpenSecret, Now: s.Now, Log: quiet}
		if err := hooks.Test(ctx, admin, fx.carrierID); err != nil {
			t.Fatal(err)
		}
		if _, err := guarded.Once(context.Background()); err != nil {
			t.Fatal(err)
		}
		d, _ = s.FindDeliveries(ctx, fx.carrierID, 5)
		if d[0].State != alerting.Pending || !strings.Contains(d[0].LastError, "private or reserved") {
			t.Errorf("a delivery to loopback with the rule on: %+v", d[0])
		}
		// Resend: the waiting delivery is due now, once more; another
		// carrier's id and a delivered one are not found.
		waiting, delivered := d[0].ID, d[1].ID
		if err := s.ResendDelivery(ctx, admin.User.ID, fx.carrierID+1000, waiting); apperr.Code(err) != apperr.ENOTFOUND {
			t.Errorf("resent another carrier's delivery: %v", err)
		}
		if err := s.ResendDelivery(ctx, admin.User.ID, fx.carrierID, delivered); apperr.Code(err) != apperr.ENOTFOUND {
			t.Errorf("resent a delivered one: %v", err)
		}
		if err := s.ResendDelivery(ctx, admin.User.ID, fx.carrierID, waiting); err != nil {
			t.Fatal(err)
		}
		if n, err := sender.Once(context.Background()); err != nil || n != 1 {
			t.Errorf("after a resend the delivery was not due at once: %d, %v", n, err)
		}
	})
}

// adminPrincipal is the fixture's author, an admin of its carrier.
func adminPrincipal(t *testing.T, s *store.Store, fx fixture) *account.Principal {
	t.Helper()
	p, err := s.FindPrincipal(ctx, fx.authorID)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAlertSignalsAgainstPeers: the breaker's and backoff's signals (a
// listing's failures and 429s beside its model's other listings over the
// window) and the first-token time against the hour before, on both
// databases; the evaluator opens the breaker alert.
func TestAlertSignalsAgainstPeers(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
		s.Now = func() time.Time { return now }
		fx := newFixture(t, s)
		peer, _ := peerListing(t, s)
		var buckets []catalogue.Bucket
		for i := range 10 { // the window: fx fails 30 %, answers 429 to 20 more; the peer fails 2 %
			m := now.Add(-time.Duration(i) * time.Minute)
			buckets = append(buckets,
				catalogue.Bucket{ListingID: fx.listingID, Minute: m, Counts: catalogue.Counts{Requests: 10, Errors: 3, TTFTMsSum: 7 * 900, GatewayCounts: catalogue.GatewayCounts{RateLimited: 2}}},
				catalogue.Bucket{ListingID: peer, Minute: m, Counts: catalogue.Counts{Requests: 50, Errors: 1, TTFTMsSum: 49 * 300}})
		}
		for i := 15; i < 60; i++ { // the hour before: first token 400 ms
			buckets = append(buckets, catalogue.Bucket{ListingID: fx.listingID, Minute: now.Add(-time.Duration(i) * time.Minute), Counts: catalogue.Counts{Requests: 10, TTFTMsSum: 10 * 400}})
		}
		if err := s.RecordBuckets(ctx, buckets); err != nil {
			t.Fatal(err)
		}
		_, signals, err := s.AlertSignals(ctx, now, 10*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		sig := signals[fx.listingID]
		if sig.Requests != 100 || sig.Failures != 30 || sig.RateLimited != 20 || sig.PeerRequests != 500 || sig.PeerFailures != 10 ||
			sig.Successes != 70 || sig.TTFTMsSum != 70*900 || sig.PrevSuccesses == 0 || sig.PrevTTFTMsSum != sig.PrevSuccesses*400 {
			t.Errorf("signals %+v", sig)
		}
		v := alerting.Judge(alerting.Rules{}, nil, sig)
		for _, k := range []alerting.Kind{alerting.FailureBreaker, alerting.RateLimitBackoff, alerting.TTFTJump} {
			if !v[k].Holds {
				t.Errorf("%s does not hold: %s", k, v[k].Detail)
			}
		}
		if peerV := alerting.Judge(alerting.Rules{}, nil, signals[peer]); peerV[alerting.FailureBreaker].Holds {
			t.Error("the healthy peer trips the breaker")
		}
	})
}

// TestPeerTrafficSumsTheModelsOtherListings: the figures a listing's traffic
// page reads beside its own are its model's other listings', summed.
func TestPeerTrafficSumsTheModelsOtherListings(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
		s.Now = func() time.Time { return now }
		fx := newFixture(t, s)
		peer, modelID := peerListing(t, s)
		if err := s.RecordBuckets(ctx, []catalogue.Bucket{
			{ListingID: fx.listingID, Minute: now.Add(-time.Minute), Counts: catalogue.Counts{Requests: 10, Errors: 5}},
			{ListingID: peer, Minute: now.Add(-time.Minute), Counts: catalogue.Counts{Requests: 40, Errors: 1, TTFTMsSum: 39 * 300, GatewayCounts: catalogue.GatewayCounts{RateLimited: 2}}},
			{ListingID: peer, Minute: now.Add(-2 * time.Minute), Counts: catalogue.Counts{Requests: 60, GatewayCounts: catalogue.GatewayCounts{Routed: 60}}},
		}); err != nil {
			t.Fatal(err)
		}
		got, err := s.PeerTraffic(ctx, modelID, fx.listingID, now.Add(-time.Hour), now.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if got.Requests != 100 || got.Errors != 1 || got.RateLimited != 2 || got.Routed != 60 || got.TTFTMsSum != 39*300 {
			t.Errorf("peers %+v, want orbit's two minutes only", got)
		}
	})
}

// peerListing gives the fixture's model a second listing, Orbit's, in
// service: a peer. It returns the listing and the model.
func peerListing(t *testing.T, s *store.Store) (int64, int64) {
	t.Helper()
	orbit, err := s.CreateCarrier(ctx, nil, "orbit", "Orbit")
	if err != nil {
		t.Fatal(err)
	}
	models, _ := s.FindModels(ctx)
	peer, err := s.CreateListing(ctx, nil, orbit.ID, models[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PublishSeedFare(ctx, &fare.Fare{ListingID: peer, Input: mustPrice(t, "0.40"), Output: mustPrice(t, "2.00"), LandingFee: 2000, CapScope: fare.ScopeGlobal}); err != nil {
		t.Fatal(err)
	}
	return peer, models[0].ID
}

// standardWebhookValid verifies a delivery as the Standard Webhooks
// reference verifiers do, written here from the specification rather than
// with the code under test: the key is the secret's base64 after whsec_,
// the MAC covers "{webhook-id}.{webhook-timestamp}.{body}", and one of the
// space-separated "v1,<base64>" signatures must match.
func standardWebhookValid(secret string, h http.Header, body []byte) bool {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || h.Get("webhook-id") == "" || h.Get("webhook-timestamp") == "" {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(h.Get("webhook-id") + "." + h.Get("webhook-timestamp") + "."))
	mac.Write(body)
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, sig := range strings.Fields(h.Get("webhook-signature")) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return true
		}
	}
	return false
}

// TestWebhookSecretRotation: a rotation signs every delivery with the new
// secret and the old one until the overlap ends, then with the new one
// only; each signature verifies with the independent verifier. Rotating
// without a webhook is refused; a first address has no previous secret.
func TestWebhookSecretRotation(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
		s.Now = func() time.Time { return now }
		fx := newFixture(t, s)
		key, _ := secret.ParseKey(secret.NewKey())
		box, _ := secret.New(key)
		var mu sync.Mutex
		var last struct {
			header http.Header
			body   []byte
		}
		receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			mu.Lock()
			last.header, last.body = r.Header.Clone(), body
			mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
		}))
		defer receiver.Close()
		hooks := &alerting.Hooks{Store: s, Secrets: box, Outbound: netguard.New(true)}
		admin := adminPrincipal(t, s, fx)
		if _, err := hooks.Rotate(ctx, admin, fx.carrierID); apperr.Code(err) != apperr.ECONFLICT {
			t.Fatalf("rotating with no webhook: %v", err)
		}
		first, err := hooks.Set(ctx, admin, fx.carrierID, receiver.URL+"/hook")
		if err != nil {
			t.Fatal(err)
		}
		if hook, _ := s.FindWebhook(ctx, fx.carrierID); hook.PreviousSecretUntil != nil {
			t.Errorf("a first webhook has a previous secret until %v", hook.PreviousSecretUntil)
		}
		sender := &alerting.Sender{Store: s, HTTP: netguard.New(true).Client(5 * time.Second), OpenSecret: hooks.OpenSecret, Now: s.Now, Log: quiet}
		deliver := func() (http.Header, []byte) {
			t.Helper()
			if err := hooks.Test(ctx, admin, fx.carrierID); err != nil {
				t.Fatal(err)
			}
			if n, err := sender.Once(context.Background()); err != nil || n != 1 {
				t.Fatalf("send: %d, %v", n, err)
			}
			mu.Lock()
			defer mu.Unlock()
			return last.header, last.body
		}
		if h, body := deliver(); !standardWebhookValid(first, h, body) || len(strings.Fields(h.Get("webhook-signature"))) != 1 {
			t.Fatalf("before a rotation: %q", h.Get("webhook-signature"))
		}

		second, err := hooks.Rotate(ctx, admin, fx.carrierID)
		if err != nil || second == first {
			t.Fatalf("rotate: %q, %v", second, err)
		}
		hook, _ := s.FindWebhook(ctx, fx.carrierID)
		if hook.PreviousSecretUntil == nil || !hook.PreviousSecretUntil.Equal(now.Add(alerting.RotationOverlap)) || hook.URL != receiver.URL+"/hook" {
			t.Fatalf("after a rotation: %+v", hook)
		}
		h, body := deliver()
		if len(strings.Fields(h.Get("webhook-signature"))) != 2 || !standardWebhookValid(first, h, body) || !standardWebhookValid(second, h, body) {
			t.Errorf("during the overlap a receiver with either secret must accept: %q", h.Get("webhook-signature"))
		}

		now = now.Add(alerting.RotationOverlap + time.Second)
		h, body = deliver()
		if standardWebhookValid(first, h, body) || !standardWebhookValid(second, h, body) {
			t.Errorf("after the overlap only the new secret signs: %q", h.Get("webhook-signature"))
		}
		if hook, _ := s.FindWebhook(ctx, fx.carrierID); hook.PreviousSecretUntil != nil {
			t.Errorf("the page still shows a previous secret until %v", hook.PreviousSecretUntil)
		}
		events, err := s.FindAuditEvents(ctx, audit.Filter{CarrierIDs: []int64{fx.carrierID}, Action: "webhook.rotate"})
		if err != nil {
			t.Fatal(err)
		}
		rotations := 0
		for _, e := range events {
			if e.Action == "webhook.rotate" {
				rotations++
			}
		}
		if rotations != 1 {
			t.Errorf("%d webhook.rotate audit entries, want 1", rotations)
		}
	})
}

// TestThePausedAlertFollowsTheGatewaysBreaker: the signals carry the last
// breaker opening and closing a gateway reported in the last day, on both
// databases; the kind holds from the opening until a closing after it.
func TestThePausedAlertFollowsTheGatewaysBreaker(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
		s.Now = func() time.Time { return now }
		fx := newFixture(t, s)
		record := func(ago time.Duration, g catalogue.GatewayCounts) {
			t.Helper()
			if err := s.RecordBuckets(ctx, []catalogue.Bucket{{ListingID: fx.listingID, Minute: now.Add(-ago), Source: ago.String(),
				Counts: catalogue.Counts{Requests: 5, GatewayCounts: g}}}); err != nil {
				t.Fatal(err)
			}
		}
		judge := func() alerting.Finding {
			t.Helper()
			_, signals, err := s.AlertSignals(ctx, now, 10*time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			return alerting.Judge(alerting.Rules{}, nil, signals[fx.listingID])[alerting.BreakerPaused]
		}
		if f := judge(); f.Holds {
			t.Errorf("no breaker reported: %+v", f)
		}
		record(25*time.Hour, catalogue.GatewayCounts{BreakerOpenings: 1}) // older than a day: not read
		if f := judge(); f.Holds {
			t.Errorf("an opening more than a day ago: %+v", f)
		}
		record(20*time.Minute, catalogue.GatewayCounts{BreakerOpenings: 1})
		if f := judge(); !f.Holds || !strings.Contains(f.Detail, "09:40 UTC") {
			t.Errorf("opened at 09:40: %+v", f)
		}
		record(5*time.Minute, catalogue.GatewayCounts{BreakerClosings: 1})
		if f := judge(); f.Holds || !strings.Contains(f.Detail, "closed at 09:55") {
			t.Errorf("closed at 09:55: %+v", f)
		}
		record(2*time.Minute, catalogue.GatewayCounts{BreakerOpenings: 1})
		if f := judge(); !f.Holds {
			t.Errorf("reopened at 09:58: %+v", f)
		}
	})
}
