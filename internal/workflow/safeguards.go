package workflow

import (
	"context"
	"fmt"
	"time"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/fare"
)

// Defaults of the price safeguards.
const (
	DefaultNotice           = 7 * 24 * time.Hour
	DefaultQuarantineFactor = 3.0
)

// ApprovalStore records the first of the two approvals a quarantined
// filing needs.
type ApprovalStore interface {
	FilingApprovals(ctx context.Context, filingID, lockVersion int64) ([]int64, error)
	RecordApproval(ctx context.Context, reviewerID, filingID, lockVersion int64) error
}

// NoticePeriod is how long ahead an increase must be filed.
func (s *Service) NoticePeriod() time.Duration { return s.notice() }

func (s *Service) notice() time.Duration {
	if s.Notice > 0 {
		return s.Notice
	}
	return DefaultNotice
}

func (s *Service) quarantineFactor() float64 {
	if s.QuarantineFactor > 1 {
		return s.QuarantineFactor
	}
	return DefaultQuarantineFactor
}

// EarliestEffective is when a filing of proposed against base may take
// effect: at once, unless it raises a price or cuts the discount, which
// developers hear of a notice period ahead.
func (s *Service) EarliestEffective(base, proposed *fare.Fare) (time.Time, bool) {
	now := s.Now().UTC()
	if s.Notice < 0 || !fare.RaisesPrices(base, proposed, now) {
		return now, false
	}
	return now.Add(s.notice()), true
}

// checkNotice refuses an increase dated before its notice ends.
func (s *Service) checkNotice(base, proposed *fare.Fare, effectiveAt *time.Time) error {
	earliest, raises := s.EarliestEffective(base, proposed)
	if !raises || effectiveAt != nil && !effectiveAt.Before(earliest) {
		return nil
	}
	return apperr.Invalid(map[string]string{"effective_at": fmt.Sprintf(
		"This fare raises a price, cuts the discount or shortens the context it declared, so developers get %s notice: it can take effect from %s UTC at the earliest. Set that date or a later one (decreases may take effect at once).",
		noticeText(s.notice()), earliest.Format(fare.TimeLayout))})
}

func noticeText(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		days := int(d / (24 * time.Hour))
		if days == 1 {
			return "a day's"
		}
		return fmt.Sprintf("%d days'", days)
	}
	return d.String() + " of"
}

// Quarantined reports whether a filing moves any price by the quarantine
// factor or more (x3 or /3 by default): two different reviewers must
// approve it.
func (s *Service) Quarantined(f *Filing) bool {
	return s.QuarantineFactor >= 0 && f.Fare != nil && fare.ChangeRatio(f.Base, f.Fare, s.Now()) >= s.quarantineFactor()
}

// firstApproval records a reviewer's approval of a quarantined filing when
// it is the first; it reports whether the decision is to go ahead (a second,
// different reviewer).
func (s *Service) firstApproval(ctx context.Context, p *account.Principal, f *Filing) (bool, error) {
	if s.Approvals == nil {
		return true, nil
	}
	approvers, err := s.Approvals.FilingApprovals(ctx, f.ID, f.LockVersion)
	if err != nil {
		return false, err
	}
	for _, id := range approvers {
		if id == p.User.ID {
			return false, apperr.Errorf(apperr.ECONFLICT, "You approved this filing already: a change this large needs a second, different reviewer.")
		}
	}
	if len(approvers) > 0 {
		return true, nil
	}
	return false, s.Approvals.RecordApproval(ctx, p.User.ID, f.ID, f.LockVersion)
}
