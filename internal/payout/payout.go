// Package payout turns a carrier's month into the statement a finance
// team files: numbered, frozen once the month's figures can no longer
// move, corrected only by credit notes (never by editing what was issued),
// written as CSV and PDF.
package payout

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/earnings"
)

// SettleAfter is how long after a month ends its figures can still move:
// gateways may post a minute's metrics up to catalogue.MaxBucketAge late.
// From then on the month's statement is issued and never changes.
const SettleAfter = catalogue.MaxBucketAge

// Issued is a statement as issued: its number and when.
type Issued struct {
	ID       int64
	Number   string
	IssuedAt time.Time
	earnings.Statement
}

// CreditNote corrects an issued statement: the lines of the difference
// between the month as computed now and the statement with the notes
// before it (negative amounts are credited back, positive owed).
type CreditNote struct {
	Number   string
	IssuedAt time.Time
	Reason   string
	Lines    []earnings.Line
	Total    earnings.Line
}

// Document is what a carrier reads for a month: the statement (issued, or
// provisional while the month can still move) and any credit notes.
type Document struct {
	earnings.Statement
	// Number and IssuedAt are empty while the statement is provisional.
	Number   string
	IssuedAt *time.Time
	Notes    []CreditNote
	// Since is the first month the carrier had a listing (statements
	// before it are not linked).
	Since time.Time
}

// Net is what the carrier is owed for the month after the credit notes.
func (d Document) Net() earnings.Line {
	net := d.Total
	for _, n := range d.Notes {
		net = net.Plus(n.Total)
	}
	net.Listing = earnings.Listing{Carrier: d.Carrier, Model: "net", ModelName: "Net after credit notes"}
	return net
}

// Listings is what the service reads of a carrier's listings.
type Listings interface {
	FindListings(ctx context.Context, f catalogue.ListingFilter) ([]catalogue.Listing, error)
}

// Projections are the hourly traffic and fare history statements are
// computed from (projection.Projector, as the traffic pages).
type Projections interface {
	Hourly(ctx context.Context, ids []int64, since, until time.Time) (map[int64][]catalogue.HourlyPoint, error)
	FareHistory(ctx context.Context, ids []int64) (map[int64][]earnings.FareSpan, error)
}

// Store keeps issued statements and credit notes.
type Store interface {
	// IssueStatement stores st as carrier's statement of its month unless
	// one is issued already, and returns the one that stands.
	IssueStatement(ctx context.Context, carrierID int64, st earnings.Statement) (Issued, error)
	IssuedStatement(ctx context.Context, carrierID int64, month time.Time) (*Issued, error)
	CreditNotes(ctx context.Context, statementID int64) ([]CreditNote, error)
	// AddCreditNote stores a note as the statement's seq-th (1 first);
	// false when another process added that one first.
	AddCreditNote(ctx context.Context, statementID int64, seq int, n CreditNote) (bool, error)
	// IssuedCarriers are the carriers with a listing created before until.
	PayoutCarriers(ctx context.Context, until time.Time) ([]account.Carrier, error)
}

// Service builds, issues and corrects statements.
type Service struct {
	Listings    Listings
	Projections Projections
	Store       Store
	Now         func() time.Time
	Log         *slog.Logger
}

// Settled is whether month's figures can no longer move at now.
func Settled(month, now time.Time) bool {
	return !now.Before(earnings.MonthOf(month).AddDate(0, 1, 0).Add(SettleAfter))
}

// Compute builds carrier's statement of month from the hours as they are
// now, and the first month the carrier had a listing.
func (s *Service) Compute(ctx context.Context, carrier account.Carrier, month time.Time) (earnings.Statement, time.Time, error) {
	listings, since, err := s.listings(ctx, carrier)
	if err != nil {
		return earnings.Statement{}, time.Time{}, err
	}
	st, err := s.build(ctx, carrier, earnings.MonthOf(month), listings)
	return st, since, err
}

// listings reads the carrier's listings and the first month it had one.
func (s *Service) listings(ctx context.Context, carrier account.Carrier) ([]catalogue.Listing, time.Time, error) {
	listings, err := s.Listings.FindListings(ctx, catalogue.ListingFilter{CarrierIDs: []int64{carrier.ID}, StoredHealth: true, WithoutFares: true})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("statement of %s: %w", carrier.Slug, err)
	}
	since := earnings.MonthOf(s.Now().UTC())
	for _, l := range listings {
		if first := earnings.MonthOf(l.CreatedAt); first.Before(since) {
			since = first
		}
	}
	return listings, since, nil
}

func (s *Service) build(ctx context.Context, carrier account.Carrier, month time.Time, listings []catalogue.Listing) (earnings.Statement, error) {
	var names []earnings.Listing
	var ids []int64
	for _, l := range listings {
		if !l.CreatedAt.Before(month.AddDate(0, 1, 0)) {
			continue // added after the month: it has no line in it
		}
		names = append(names, earnings.Listing{ID: l.ID, Carrier: l.CarrierSlug, Model: l.Model.Slug, ModelName: l.Model.Name})
		ids = append(ids, l.ID)
	}
	hours, err := s.Projections.Hourly(ctx, ids, month, month.AddDate(0, 1, 0))
	if err != nil {
		return earnings.Statement{}, fmt.Errorf("statement of %s: %w", carrier.Slug, err)
	}
	history, err := s.Projections.FareHistory(ctx, ids)
	if err != nil {
		return earnings.Statement{}, fmt.Errorf("statement of %s: %w", carrier.Slug, err)
	}
	return earnings.BuildStatement(carrier.Slug, month, s.Now().UTC(), names, hours, history), nil
}

// Document is carrier's month as it stands: provisional while the month
// can move, else the issued statement (issued now if no process did yet:
// the figures are settled, so whoever issues it issues the same) with its
// credit notes.
func (s *Service) Document(ctx context.Context, carrier account.Carrier, month time.Time) (Document, error) {
	month = earnings.MonthOf(month)
	listings, since, err := s.listings(ctx, carrier)
	if err != nil {
		return Document{}, err
	}
	settled := Settled(month, s.Now().UTC())
	var issued *Issued
	if settled {
		if issued, err = s.Store.IssuedStatement(ctx, carrier.ID, month); err != nil {
			return Document{}, err
		}
	}
	if issued == nil {
		st, err := s.build(ctx, carrier, month, listings)
		if err != nil {
			return Document{}, err
		}
		if !settled {
			return Document{Statement: st, Since: since}, nil
		}
		stands, err := s.Store.IssueStatement(ctx, carrier.ID, st)
		if err != nil {
			return Document{}, err
		}
		issued = &stands
	}
	notes, err := s.Store.CreditNotes(ctx, issued.ID)
	if err != nil {
		return Document{}, err
	}
	at := issued.IssuedAt
	return Document{Statement: issued.Statement, Number: issued.Number, IssuedAt: &at, Notes: notes, Since: since}, nil
}

// Correction is the credit note that brings an issued statement and its
// notes to the month as computed now, or false when they agree.
func Correction(issued earnings.Statement, notes []CreditNote, now earnings.Statement) (CreditNote, bool) {
	stands := map[int64]earnings.Line{}
	names := map[int64]earnings.Listing{}
	for _, l := range issued.Lines {
		stands[l.ID], names[l.ID] = l, l.Listing
	}
	for _, n := range notes {
		for _, l := range n.Lines {
			stands[l.ID], names[l.ID] = stands[l.ID].Plus(l), l.Listing
		}
	}
	var note CreditNote
	seen := map[int64]bool{}
	add := func(id int64, delta earnings.Line) {
		if delta.IsZero() {
			return
		}
		delta.Listing = names[id]
		note.Lines = append(note.Lines, delta)
		note.Total = note.Total.Plus(delta)
	}
	for _, l := range now.Lines {
		seen[l.ID], names[l.ID] = true, l.Listing
		add(l.ID, l.Minus(stands[l.ID]))
	}
	for _, l := range issued.Lines {
		if !seen[l.ID] {
			add(l.ID, earnings.Line{}.Minus(stands[l.ID]))
		}
	}
	note.Total.Listing = earnings.Listing{Carrier: issued.Carrier, Model: "total", ModelName: "Total"}
	return note, len(note.Lines) > 0
}

// Settle issues the statements of the settled months in the last two for
// every carrier, and a credit note where the month as computed now no
// longer matches what was issued; it reports how many of each.
func (s *Service) Settle(ctx context.Context) (issued, notes int, err error) {
	now := s.Now().UTC()
	carriers, err := s.Store.PayoutCarriers(ctx, earnings.MonthOf(now))
	if err != nil {
		return 0, 0, err
	}
	for _, c := range carriers {
		for back := 1; back <= 2; back++ {
			month := earnings.MonthOf(now).AddDate(0, -back, 0)
			if !Settled(month, now) {
				continue
			}
			st, _, err := s.Compute(ctx, c, month)
			if err != nil {
				return issued, notes, err
			}
			before, err := s.Store.IssuedStatement(ctx, c.ID, month)
			if err != nil {
				return issued, notes, err
			}
			stands, err := s.Store.IssueStatement(ctx, c.ID, st)
			if err != nil {
				return issued, notes, err
			}
			if before == nil {
				issued++
			}
			existing, err := s.Store.CreditNotes(ctx, stands.ID)
			if err != nil {
				return issued, notes, err
			}
			note, needed := Correction(stands.Statement, existing, st)
			if !needed {
				continue
			}
			note.Reason = "The month's traffic as recorded changed after the statement was issued."
			added, err := s.Store.AddCreditNote(ctx, stands.ID, len(existing)+1, note)
			if err != nil {
				return issued, notes, err
			}
			if added {
				notes++
			}
		}
	}
	return issued, notes, nil
}

// Run settles every interval until ctx ends.
func (s *Service) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if issued, notes, err := s.Settle(ctx); err != nil && ctx.Err() == nil {
			s.Log.Warn("payout: settle", "err", err)
		} else if issued+notes > 0 {
			s.Log.Info("payout: settled", "statements", issued, "credit_notes", notes)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
