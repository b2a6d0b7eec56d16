package workflow

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/textcheck"
)

// A maintenance window is a stop planned ahead: from its start the listing
// is out of routing (paused, a new catalogue revision, as with stop-now),
// and at its end it comes back by itself, through the same gate as any
// return to service (the endpoint's preflight, when the portal requires
// it). A window that finds its listing not in service at its start changes
// nothing, and then brings nothing back.

// Limits of a window.
const (
	MaxMaintenance      = 7 * 24 * time.Hour
	MaintenanceHorizon  = 90 * 24 * time.Hour
	maintenanceLateness = 5 * time.Minute // a start typed for "now" a few minutes ago
)

// MaintenanceWindow is one planned stop of a listing.
type MaintenanceWindow struct {
	ID, ListingID, CarrierID int64
	StartsAt, EndsAt         time.Time
	Reason                   string
	CreatedBy                string // e-mail
	CancelledAt              *time.Time
	StartedAt, EndedAt       *time.Time
	// PausedListing is set when the start took the listing out of routing
	// (it was in service then): only such a window brings it back.
	PausedListing bool
	// Outcome says what the end did ("back in service", or why not).
	Outcome string
}

// MaintenanceState is where a window stands.
type MaintenanceState string

const (
	MaintenanceScheduled MaintenanceState = "scheduled"
	MaintenanceActive    MaintenanceState = "in progress"
	MaintenanceEnded     MaintenanceState = "ended"
	MaintenanceCancelled MaintenanceState = "cancelled"
)

// State is the window's state as recorded (the scheduler moves it at its
// times; between a time and the scheduler's next turn it shows the old one).
func (w MaintenanceWindow) State() MaintenanceState {
	switch {
	case w.CancelledAt != nil:
		return MaintenanceCancelled
	case w.EndedAt != nil:
		return MaintenanceEnded
	case w.StartedAt != nil:
		return MaintenanceActive
	}
	return MaintenanceScheduled
}

// Open reports whether the window is still to come or under way.
func (w MaintenanceWindow) Open() bool {
	s := w.State()
	return s == MaintenanceScheduled || s == MaintenanceActive
}

// MaintenanceForm is a window as typed: times in fare.TimeLayout, UTC.
type MaintenanceForm struct {
	Start, End, Reason string
}

// MaintenanceStore is what maintenance windows need from storage; each
// write is one transaction, audited, and notifies the carrier.
type MaintenanceStore interface {
	FindListingHeader(ctx context.Context, id int64, carrierIDs []int64) (*catalogue.Listing, error)
	FindMaintenanceWindows(ctx context.Context, f MaintenanceFilter) ([]MaintenanceWindow, error)
	// CreateMaintenanceWindow refuses (ECONFLICT) a window overlapping an
	// open one of the listing, checked inside its transaction.
	CreateMaintenanceWindow(ctx context.Context, actorID int64, w MaintenanceWindow) (int64, error)
	CancelMaintenanceWindow(ctx context.Context, actorID, windowID int64) error
	// StartMaintenance pauses the listing when it is in service and records
	// the start; EndMaintenance records the end and, when resume is set and
	// the window paused the listing, puts it back in service.
	StartMaintenance(ctx context.Context, windowID int64) error
	EndMaintenance(ctx context.Context, actorID *int64, windowID int64, resume bool, outcome string) error
}

// MaintenanceFilter narrows a listing of windows.
type MaintenanceFilter struct {
	ListingID  int64
	CarrierIDs []int64 // nil: every carrier (staff)
	// OpenOnly keeps scheduled and in-progress windows.
	OpenOnly bool
	// DueAt, when set, keeps the windows whose start or end has come and
	// is not yet applied.
	DueAt time.Time
}

// Maintenance schedules windows and applies them on time.
type Maintenance struct {
	Store MaintenanceStore
	Now   func() time.Time
	// ReadyForService, when set, gates the return at a window's end like
	// any return to service.
	ReadyForService func(ctx context.Context, l *catalogue.Listing) error
}

// Schedule plans a window for a listing (its carrier's admins only). Bad
// input is named by field: start, end, reason.
func (m *Maintenance) Schedule(ctx context.Context, p *account.Principal, listingID int64, form MaintenanceForm) (int64, error) {
	l, err := m.Store.FindListingHeader(ctx, listingID, Scope(p))
	if err != nil {
		return 0, err
	}
	if !CanManageListings(p, l.CarrierID) {
		return 0, errAdminsManage
	}
	if l.Status != catalogue.StatusInService {
		return 0, apperr.Errorf(apperr.ECONFLICT, "Only a listing in service can have maintenance planned; this one is %s.", l.Status.Label())
	}
	now := m.Now().UTC()
	problems := map[string]string{}
	start, msg := parseWindowTime(form.Start)
	switch {
	case msg != "":
		problems["start"] = msg
	case start.Before(now.Add(-maintenanceLateness)):
		problems["start"] = "The start is in the past. For a stop now, use Pause routing now."
	case start.After(now.Add(MaintenanceHorizon)):
		problems["start"] = fmt.Sprintf("Plan at most %d days ahead.", int(MaintenanceHorizon.Hours()/24))
	}
	end, msg := parseWindowTime(form.End)
	switch {
	case msg != "":
		problems["end"] = msg
	case problems["start"] == "" && !end.After(start):
		problems["end"] = "The end must come after the start."
	case problems["start"] == "" && end.Sub(start) > MaxMaintenance:
		problems["end"] = fmt.Sprintf("A window lasts at most %d days; for longer, pause the listing.", int(MaxMaintenance.Hours()/24))
	}
	reason := strings.TrimSpace(form.Reason)
	if reason == "" {
		problems["reason"] = "Say what the maintenance is (it is shown to staff and kept in the audit log)."
	} else if msg := textcheck.Problem(reason, MaxNote); msg != "" {
		problems["reason"] = msg
	}
	if len(problems) > 0 {
		return 0, apperr.Invalid(problems)
	}
	if start.Before(now) {
		start = now
	}
	return m.Store.CreateMaintenanceWindow(ctx, p.User.ID, MaintenanceWindow{ListingID: l.ID, CarrierID: l.CarrierID,
		StartsAt: start, EndsAt: end, Reason: reason})
}

// parseWindowTime reads a typed time, or says what is wrong with it.
func parseWindowTime(text string) (time.Time, string) {
	text = strings.TrimSpace(text)
	if text == "" {
		return time.Time{}, "Give a date and time (UTC)."
	}
	t, err := time.Parse(fare.TimeLayout, text)
	if err != nil {
		return time.Time{}, "Write it as 2026-12-24T22:00 (UTC)."
	}
	return t.UTC(), ""
}

// Cancel calls a window off: one still to come is cancelled; one under way
// ends now, bringing the listing back as its end would have.
func (m *Maintenance) Cancel(ctx context.Context, p *account.Principal, listingID, windowID int64) error {
	l, err := m.Store.FindListingHeader(ctx, listingID, Scope(p))
	if err != nil {
		return err
	}
	if !CanManageListings(p, l.CarrierID) {
		return errAdminsManage
	}
	windows, err := m.Store.FindMaintenanceWindows(ctx, MaintenanceFilter{ListingID: l.ID, OpenOnly: true})
	if err != nil {
		return err
	}
	for _, w := range windows {
		if w.ID != windowID {
			continue
		}
		if w.State() == MaintenanceActive {
			return m.end(ctx, &p.User.ID, w, "ended early by the carrier")
		}
		return m.Store.CancelMaintenanceWindow(ctx, p.User.ID, w.ID)
	}
	return apperr.Errorf(apperr.ENOTFOUND, "That maintenance window is not open any more.")
}

// Apply starts and ends the windows whose time has come (the scheduler's
// turn): it returns how many it moved.
func (m *Maintenance) Apply(ctx context.Context) (int, error) {
	due, err := m.Store.FindMaintenanceWindows(ctx, MaintenanceFilter{DueAt: m.Now().UTC()})
	if err != nil {
		return 0, fmt.Errorf("due maintenance: %w", err)
	}
	now := m.Now().UTC()
	n := 0
	for _, w := range due {
		if w.StartedAt == nil {
			if err := m.Store.StartMaintenance(ctx, w.ID); err != nil {
				return n, fmt.Errorf("start maintenance window %d: %w", w.ID, err)
			}
			n++
			if now.Before(w.EndsAt) {
				continue
			}
			// A window whose whole span passed while the portal was down
			// starts and ends in one turn.
			if w, err = m.reread(ctx, w); err != nil {
				return n, err
			}
		}
		if err := m.end(ctx, nil, w, "ended at its planned time"); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func (m *Maintenance) reread(ctx context.Context, w MaintenanceWindow) (MaintenanceWindow, error) {
	windows, err := m.Store.FindMaintenanceWindows(ctx, MaintenanceFilter{ListingID: w.ListingID})
	if err != nil {
		return w, err
	}
	for _, x := range windows {
		if x.ID == w.ID {
			return x, nil
		}
	}
	return w, apperr.Errorf(apperr.ENOTFOUND, "Maintenance window %d is gone.", w.ID)
}

// end closes a window, bringing its listing back when the window took it
// out and the listing is still ready to serve.
func (m *Maintenance) end(ctx context.Context, actorID *int64, w MaintenanceWindow, how string) error {
	resume, outcome := w.PausedListing, how
	if resume && m.ReadyForService != nil {
		l, err := m.Store.FindListingHeader(ctx, w.ListingID, nil)
		if err != nil {
			return err
		}
		if err := m.ReadyForService(ctx, l); err != nil {
			resume, outcome = false, how+"; kept paused: "+apperr.Message(err)+" Then file a resume."
		}
	}
	if err := m.Store.EndMaintenance(ctx, actorID, w.ID, resume, outcome); err != nil {
		return fmt.Errorf("end maintenance window %d: %w", w.ID, err)
	}
	return nil
}

// Windows lists a listing's windows for its page (open ones first).
func (m *Maintenance) Windows(ctx context.Context, p *account.Principal, listingID int64) ([]MaintenanceWindow, error) {
	return m.Store.FindMaintenanceWindows(ctx, MaintenanceFilter{ListingID: listingID, CarrierIDs: Scope(p)})
}

// Upcoming lists every open window staff should know of.
func (m *Maintenance) Upcoming(ctx context.Context, p *account.Principal) ([]MaintenanceWindow, error) {
	return m.Store.FindMaintenanceWindows(ctx, MaintenanceFilter{CarrierIDs: Scope(p), OpenOnly: true})
}

// NoticeMaintenanceStarted tells the carrier a window took its listing out.
func NoticeMaintenanceStarted(model string, listingID int64, reason string) string {
	return fmt.Sprintf("%s (listing #%d) is out of routing for planned maintenance: %s", model, listingID, reason)
}

// NoticeMaintenanceEnded tells the carrier how a window ended.
func NoticeMaintenanceEnded(model string, listingID int64, outcome string, back bool) string {
	if back {
		return fmt.Sprintf("%s (listing #%d) is back in service: its maintenance window %s.", model, listingID, outcome)
	}
	return fmt.Sprintf("The maintenance window of %s (listing #%d) %s.", model, listingID, outcome)
}
