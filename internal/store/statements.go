package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/earnings"
	"github.com/airside/airside/internal/payout"
)

type statementRow struct {
	ID               int64 `gorm:"primaryKey"`
	CarrierID        int64
	Month            string
	IssuedAt         time.Time
	Body             string
	KeptMicros       int64
	LandingFeeMicros int64
}

func (statementRow) TableName() string { return "statements" }

type creditNoteRow struct {
	ID          int64 `gorm:"primaryKey"`
	StatementID int64
	Seq         int64
	IssuedAt    time.Time
	Reason      string
	Body        string
	KeptMicros  int64
}

func (creditNoteRow) TableName() string { return "credit_notes" }

// noteBody is what a credit note row keeps of the note.
type noteBody struct {
	Lines []earnings.Line
	Total earnings.Line
}

func (r statementRow) issued() (payout.Issued, error) {
	var st earnings.Statement
	if err := json.Unmarshal([]byte(r.Body), &st); err != nil {
		return payout.Issued{}, fmt.Errorf("statement %d: %w", r.ID, err)
	}
	return payout.Issued{ID: r.ID, Number: fmt.Sprintf("ST-%06d", r.ID), IssuedAt: r.IssuedAt.UTC(), Statement: st}, nil
}

// IssueStatement stores st as the carrier's statement of its month, unless
// one stands already (another process, an earlier pass): the one that
// stands is returned either way, and never changes.
func (s *Store) IssueStatement(ctx context.Context, carrierID int64, st earnings.Statement) (payout.Issued, error) {
	body, err := json.Marshal(st)
	if err != nil {
		return payout.Issued{}, fmt.Errorf("issue statement: %w", err)
	}
	month := st.Month.Format("2006-01")
	var row statementRow
	err = s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		fresh := statementRow{CarrierID: carrierID, Month: month, IssuedAt: now, Body: string(body), KeptMicros: int64(st.Total.Kept),
			LandingFeeMicros: int64(st.Total.LandingFee)}
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&fresh).Error; err != nil {
			return err
		}
		return tx.Where("carrier_id = ? AND month = ?", carrierID, month).Take(&row).Error
	})
	if err != nil {
		return payout.Issued{}, fmt.Errorf("issue the statement of carrier %d for %s: %w", carrierID, month, err)
	}
	return row.issued()
}

// IssuedStatement is the carrier's statement of month, or nil before it
// is issued.
func (s *Store) IssuedStatement(ctx context.Context, carrierID int64, month time.Time) (*payout.Issued, error) {
	var row statementRow
	err := s.read(ctx).Where("carrier_id = ? AND month = ?", carrierID, month.UTC().Format("2006-01")).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("statement of carrier %d for %s: %w", carrierID, month.Format("2006-01"), err)
	}
	issued, err := row.issued()
	if err != nil {
		return nil, err
	}
	return &issued, nil
}

// CreditNotes are a statement's notes, oldest first.
func (s *Store) CreditNotes(ctx context.Context, statementID int64) ([]payout.CreditNote, error) {
	var rows []creditNoteRow
	if err := s.read(ctx).Where("statement_id = ?", statementID).Order("seq").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("credit notes of statement %d: %w", statementID, err)
	}
	out := make([]payout.CreditNote, len(rows))
	for i, r := range rows {
		var body noteBody
		if err := json.Unmarshal([]byte(r.Body), &body); err != nil {
			return nil, fmt.Errorf("credit note %d: %w", r.ID, err)
		}
		out[i] = payout.CreditNote{Number: fmt.Sprintf("CN-%06d", r.ID), IssuedAt: r.IssuedAt.UTC(), Reason: r.Reason, Lines: body.Lines, Total: body.Total}
	}
	return out, nil
}

// AddCreditNote stores a note as the statement's seq-th; false when that
// one exists (another process corrected it first).
func (s *Store) AddCreditNote(ctx context.Context, statementID int64, seq int, n payout.CreditNote) (bool, error) {
	body, err := json.Marshal(noteBody{Lines: n.Lines, Total: n.Total})
	if err != nil {
		return false, fmt.Errorf("credit note: %w", err)
	}
	added := false
	err = s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&creditNoteRow{StatementID: statementID, Seq: int64(seq), IssuedAt: now,
			Reason: n.Reason, Body: string(body), KeptMicros: int64(n.Total.Kept)})
		added = res.RowsAffected == 1
		return res.Error
	})
	if err != nil {
		return false, fmt.Errorf("add credit note %d to statement %d: %w", seq, statementID, err)
	}
	return added, nil
}

// PayoutCarriers are the carriers with a listing created before until.
func (s *Store) PayoutCarriers(ctx context.Context, until time.Time) ([]account.Carrier, error) {
	var out []account.Carrier
	err := s.read(ctx).Table("carriers").Select("carriers.id, carriers.slug, carriers.name").
		Where("EXISTS (SELECT 1 FROM listings WHERE listings.carrier_id = carriers.id AND listings.created_at < ?)", until.UTC()).
		Order("carriers.id").Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("payout carriers: %w", err)
	}
	return out, nil
}
