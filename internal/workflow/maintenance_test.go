package workflow

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
)

// maintenanceStore is an in-memory MaintenanceStore: listings by id, and
// the windows with what was done to them.
type maintenanceStore struct {
	listings map[int64]*catalogue.Listing
	windows  []MaintenanceWindow
	created  []MaintenanceWindow
	started  []int64
	ended    []endCall
	cancel   []int64
}

type endCall struct {
	window  int64
	resume  bool
	outcome string
	byActor bool
}

func (s *maintenanceStore) FindListingHeader(_ context.Context, id int64, carrierIDs []int64) (*catalogue.Listing, error) {
	l, ok := s.listings[id]
	if !ok || (carrierIDs != nil && !slices.Contains(carrierIDs, l.CarrierID)) {
		return nil, apperr.Errorf(apperr.ENOTFOUND, "Listing not found.")
	}
	c := *l
	return &c, nil
}

func (s *maintenanceStore) FindMaintenanceWindows(_ context.Context, f MaintenanceFilter) ([]MaintenanceWindow, error) {
	var out []MaintenanceWindow
	for _, w := range s.windows {
		switch {
		case f.ListingID != 0 && w.ListingID != f.ListingID,
			f.CarrierIDs != nil && !slices.Contains(f.CarrierIDs, w.CarrierID),
			f.OpenOnly && !w.Open():
			continue
		case !f.DueAt.IsZero():
			due := w.Open() && (w.StartedAt == nil && !w.StartsAt.After(f.DueAt) || w.StartedAt != nil && !w.EndsAt.After(f.DueAt))
			if !due {
				continue
			}
		}
		out = append(out, w)
	}
	return out, nil
}

func (s *maintenanceStore) CreateMaintenanceWindow(_ context.Context, _ int64, w MaintenanceWindow) (int64, error) {
	w.ID = int64(len(s.windows) + 1)
	s.windows = append(s.windows, w)
	s.created = append(s.created, w)
	return w.ID, nil
}

func (s *maintenanceStore) window(id int64) *MaintenanceWindow {
	for i := range s.windows {
		if s.windows[i].ID == id {
			return &s.windows[i]
		}
	}
	return nil
}

func (s *maintenanceStore) CancelMaintenanceWindow(_ context.Context, _, id int64) error {
	now := time.Now()
	s.window(id).CancelledAt = &now
	s.cancel = append(s.cancel, id)
	return nil
}

func (s *maintenanceStore) StartMaintenance(_ context.Context, id int64) error {
	w := s.window(id)
	now := time.Now()
	w.StartedAt = &now
	w.PausedListing = s.listings[w.ListingID].Status == catalogue.StatusInService
	s.started = append(s.started, id)
	return nil
}

func (s *maintenanceStore) EndMaintenance(_ context.Context, actorID *int64, id int64, resume bool, outcome string) error {
	w := s.window(id)
	now := time.Now()
	w.EndedAt, w.Outcome = &now, outcome
	s.ended = append(s.ended, endCall{window: id, resume: resume, outcome: outcome, byActor: actorID != nil})
	return nil
}

var _ MaintenanceStore = (*maintenanceStore)(nil)

var maintenanceNow = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func newMaintenance(status catalogue.ListingStatus) (*Maintenance, *maintenanceStore) {
	st := &maintenanceStore{listings: map[int64]*catalogue.Listing{
		10: {ID: 10, CarrierID: carrierA, Status: status, Model: catalogue.Model{Name: "Kimi K2.5"}},
	}}
	return &Maintenance{Store: st, Now: func() time.Time { return maintenanceNow }}, st
}

func TestScheduleNamesEachBadField(t *testing.T) {
	at := func(d time.Duration) string { return maintenanceNow.Add(d).Format("2006-01-02T15:04") }
	for _, test := range []struct {
		name string
		form MaintenanceForm
		want map[string]string // field -> a word of its message
	}{
		{"nothing typed", MaintenanceForm{}, map[string]string{"start": "date and time", "end": "date and time", "reason": "Say what"}},
		{"not a time", MaintenanceForm{Start: "tomorrow", End: "24/12/2026 22:00", Reason: "x"}, map[string]string{"start": "Write it as", "end": "Write it as"}},
		{"in the past", MaintenanceForm{Start: at(-time.Hour), End: at(time.Hour), Reason: "x"}, map[string]string{"start": "in the past"}},
		{"too far ahead", MaintenanceForm{Start: at(MaintenanceHorizon + time.Hour), End: at(MaintenanceHorizon + 2*time.Hour), Reason: "x"}, map[string]string{"start": "at most 90 days"}},
		{"ends before it starts", MaintenanceForm{Start: at(2 * time.Hour), End: at(time.Hour), Reason: "x"}, map[string]string{"end": "after the start"}},
		{"too long", MaintenanceForm{Start: at(time.Hour), End: at(time.Hour + MaxMaintenance + time.Minute), Reason: "x"}, map[string]string{"end": "at most 7 days"}},
		{"a reason of spaces", MaintenanceForm{Start: at(time.Hour), End: at(2 * time.Hour), Reason: "   "}, map[string]string{"reason": "Say what"}},
		{"a reason too long", MaintenanceForm{Start: at(time.Hour), End: at(2 * time.Hour), Reason: strings.Repeat("x", MaxNote+1)}, map[string]string{"reason": ""}},
	} {
		t.Run(test.name, func(t *testing.T) {
			m, st := newMaintenance(catalogue.StatusInService)
			_, err := m.Schedule(context.Background(), adminA, 10, test.form)
			var e *apperr.Error
			if !errors.As(err, &e) || e.Code != apperr.EINVALID {
				t.Fatalf("got %v, want the fields named", err)
			}
			if len(e.Fields) != len(test.want) {
				t.Errorf("fields %v, want %v", e.Fields, test.want)
			}
			for field, word := range test.want {
				if msg, ok := e.Fields[field]; !ok || !strings.Contains(msg, word) {
					t.Errorf("%s: %q, want it to say %q", field, msg, word)
				}
			}
			if len(st.created) != 0 {
				t.Error("a refused window was created")
			}
		})
	}
}

func TestScheduleWhoAndWhen(t *testing.T) {
	form := MaintenanceForm{Start: maintenanceNow.Add(-3 * time.Minute).Format("2006-01-02T15:04"),
		End: maintenanceNow.Add(2 * time.Hour).Format("2006-01-02T15:04"), Reason: "  kernel upgrade  "}
	m, st := newMaintenance(catalogue.StatusInService)
	if _, err := m.Schedule(context.Background(), memberA, 10, form); apperr.Code(err) != apperr.EFORBIDDEN {
		t.Errorf("a member plans maintenance: %v", err)
	}
	if _, err := m.Schedule(context.Background(), memberB, 10, form); apperr.Code(err) != apperr.ENOTFOUND {
		t.Errorf("another carrier sees the listing: %v", err)
	}
	id, err := m.Schedule(context.Background(), adminA, 10, form)
	if err != nil || id == 0 || len(st.created) != 1 {
		t.Fatalf("an admin's window: %d, %v", id, err)
	}
	// A start typed for a few minutes ago starts now; the reason is kept
	// trimmed.
	if w := st.created[0]; !w.StartsAt.Equal(maintenanceNow) || w.Reason != "kernel upgrade" || w.CarrierID != carrierA {
		t.Errorf("created %+v", w)
	}
	paused, _ := newMaintenance(catalogue.StatusPaused)
	if _, err := paused.Schedule(context.Background(), adminA, 10, form); apperr.Code(err) != apperr.ECONFLICT {
		t.Errorf("maintenance for a paused listing: %v", err)
	}
}

func TestApplyStartsAndEndsOnTime(t *testing.T) {
	m, st := newMaintenance(catalogue.StatusInService)
	ready := errors.New("unset")
	m.ReadyForService = func(context.Context, *catalogue.Listing) error { return ready }
	ready = nil
	st.windows = []MaintenanceWindow{
		{ID: 1, ListingID: 10, CarrierID: carrierA, StartsAt: maintenanceNow.Add(-time.Minute), EndsAt: maintenanceNow.Add(time.Hour)},
		{ID: 2, ListingID: 10, CarrierID: carrierA, StartsAt: maintenanceNow.Add(2 * time.Hour), EndsAt: maintenanceNow.Add(3 * time.Hour)},
	}
	n, err := m.Apply(context.Background())
	if err != nil || n != 1 || !slices.Equal(st.started, []int64{1}) || len(st.ended) != 0 {
		t.Fatalf("first turn: %d moved (%v), started %v, ended %v", n, err, st.started, st.ended)
	}
	if st.windows[0].State() != MaintenanceActive || !st.windows[0].Open() || st.windows[1].State() != MaintenanceScheduled {
		t.Errorf("states after the start: %s, %s", st.windows[0].State(), st.windows[1].State())
	}
	maintenanceNow = maintenanceNow.Add(time.Hour)
	defer func() { maintenanceNow = maintenanceNow.Add(-time.Hour) }()
	if n, err := m.Apply(context.Background()); err != nil || n != 1 || len(st.ended) != 1 || !st.ended[0].resume || st.ended[0].byActor ||
		st.ended[0].outcome != "ended at its planned time" {
		t.Fatalf("at its end: %d moved (%v), %+v", n, err, st.ended)
	}
	if st.windows[0].State() != MaintenanceEnded || st.windows[0].Open() {
		t.Errorf("state after the end: %s", st.windows[0].State())
	}
}

func TestAWindowThatPassedWhileDownStartsAndEndsInOneTurn(t *testing.T) {
	m, st := newMaintenance(catalogue.StatusInService)
	m.ReadyForService = func(context.Context, *catalogue.Listing) error {
		return apperr.Errorf(apperr.ECONFLICT, "The endpoint has not passed preflight.")
	}
	st.windows = []MaintenanceWindow{{ID: 1, ListingID: 10, CarrierID: carrierA, StartsAt: maintenanceNow.Add(-3 * time.Hour), EndsAt: maintenanceNow.Add(-time.Hour)}}
	n, err := m.Apply(context.Background())
	if err != nil || n != 2 || len(st.ended) != 1 {
		t.Fatalf("%d moved (%v), ended %+v", n, err, st.ended)
	}
	// It took the listing out, but the listing is not ready: kept paused,
	// and the outcome says why and what to do.
	if e := st.ended[0]; e.resume || !strings.Contains(e.outcome, "kept paused: The endpoint has not passed preflight.") || !strings.Contains(e.outcome, "file a resume") {
		t.Errorf("end of a window whose listing is not ready: %+v", e)
	}
}

func TestCancelAWindow(t *testing.T) {
	m, st := newMaintenance(catalogue.StatusInService)
	started := maintenanceNow.Add(-time.Minute)
	st.windows = []MaintenanceWindow{
		{ID: 1, ListingID: 10, CarrierID: carrierA, StartsAt: maintenanceNow.Add(time.Hour), EndsAt: maintenanceNow.Add(2 * time.Hour)},
		{ID: 2, ListingID: 10, CarrierID: carrierA, StartsAt: started, EndsAt: maintenanceNow.Add(time.Hour), StartedAt: &started, PausedListing: true},
	}
	ctx := context.Background()
	if err := m.Cancel(ctx, memberA, 10, 1); apperr.Code(err) != apperr.EFORBIDDEN {
		t.Errorf("a member cancels: %v", err)
	}
	if err := m.Cancel(ctx, adminA, 10, 1); err != nil || !slices.Equal(st.cancel, []int64{1}) || st.windows[0].State() != MaintenanceCancelled {
		t.Errorf("cancelling a window to come: %v, cancelled %v", err, st.cancel)
	}
	// One under way ends now and brings the listing back, by the carrier.
	if err := m.Cancel(ctx, adminA, 10, 2); err != nil || len(st.ended) != 1 || !st.ended[0].resume || !st.ended[0].byActor ||
		st.ended[0].outcome != "ended early by the carrier" {
		t.Errorf("cancelling a window under way: %v, ended %+v", err, st.ended)
	}
	if err := m.Cancel(ctx, adminA, 10, 2); apperr.Code(err) != apperr.ENOTFOUND {
		t.Errorf("cancelling a closed window: %v", err)
	}
}

func TestWindowsAreListedInScope(t *testing.T) {
	m, st := newMaintenance(catalogue.StatusInService)
	st.windows = []MaintenanceWindow{
		{ID: 1, ListingID: 10, CarrierID: carrierA, StartsAt: maintenanceNow.Add(time.Hour), EndsAt: maintenanceNow.Add(2 * time.Hour)},
		{ID: 2, ListingID: 11, CarrierID: carrierB, StartsAt: maintenanceNow.Add(time.Hour), EndsAt: maintenanceNow.Add(2 * time.Hour)},
	}
	ctx := context.Background()
	mine, err := m.Upcoming(ctx, memberA)
	if err != nil || len(mine) != 1 || mine[0].ID != 1 {
		t.Errorf("a carrier's upcoming windows: %+v (%v)", mine, err)
	}
	all, err := m.Upcoming(ctx, reviewer)
	if err != nil || len(all) != 2 {
		t.Errorf("staff's upcoming windows: %+v (%v)", all, err)
	}
	if ws, err := m.Windows(ctx, memberB, 10); err != nil || len(ws) != 0 {
		t.Errorf("another carrier lists this listing's windows: %+v (%v)", ws, err)
	}
}

func TestMaintenanceNotices(t *testing.T) {
	if got := NoticeMaintenanceStarted("Kimi K2.5", 10, "kernel upgrade"); got != "Kimi K2.5 (listing #10) is out of routing for planned maintenance: kernel upgrade" {
		t.Errorf("started: %q", got)
	}
	if got := NoticeMaintenanceEnded("Kimi K2.5", 10, "ended at its planned time", true); got != "Kimi K2.5 (listing #10) is back in service: its maintenance window ended at its planned time." {
		t.Errorf("ended, back: %q", got)
	}
	if got := NoticeMaintenanceEnded("Kimi K2.5", 10, "ended early; kept paused", false); !strings.HasPrefix(got, "The maintenance window of Kimi K2.5 (listing #10) ended early") {
		t.Errorf("ended, kept out: %q", got)
	}
}

func TestCarriersInScope(t *testing.T) {
	every := []account.Carrier{{ID: carrierB, Name: "Orbit"}, {ID: carrierA, Name: "Nebula"}, {ID: 9, Name: "Aurora"}}
	calls := 0
	all := func() ([]account.Carrier, error) { calls++; return every, nil }
	names := func(cs []account.Carrier) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Name)
		}
		return out
	}
	both := &account.Principal{User: account.User{ID: 8}, Memberships: []account.Membership{
		{CarrierID: carrierB, Role: account.CarrierMember, Carrier: account.Carrier{ID: carrierB, Name: "Orbit"}},
		{CarrierID: carrierA, Role: account.CarrierAdmin, Carrier: account.Carrier{ID: carrierA, Name: "Nebula"}}}}
	for _, test := range []struct {
		name  string
		p     *account.Principal
		want  []string
		reads int
	}{
		{"staff see every carrier", reviewer, []string{"Aurora", "Nebula", "Orbit"}, 1},
		{"a member sees theirs", memberB, []string{""}, 0},
		{"a person of two carriers sees both", both, []string{"Nebula", "Orbit"}, 0},
	} {
		calls = 0
		got, err := CarriersInScope(test.p, all)
		if err != nil || !slices.Equal(names(got), test.want) || calls != test.reads {
			t.Errorf("%s: %v (%v, %d reads of every carrier), want %v", test.name, names(got), err, calls, test.want)
		}
	}
	if !slices.Equal(names(every), []string{"Orbit", "Nebula", "Aurora"}) {
		t.Error("CarriersInScope sorted the caller's slice in place")
	}
}
