package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/storefront"
)

var _ storefront.Store = (*Store)(nil)

type profileRow struct {
	ID               int64 `gorm:"primaryKey"`
	Slug, Name       string
	Description      string
	Website          string
	SupportContact   string
	StatusURL        string `gorm:"column:status_url"`
	LogoType         string
	Domain           string
	DomainToken      string
	DomainVerifiedAt *time.Time
}

func (profileRow) TableName() string { return "carriers" }

func (r *profileRow) domain() *storefront.Profile {
	return &storefront.Profile{CarrierID: r.ID, Slug: r.Slug, Name: r.Name, Description: r.Description, Website: r.Website,
		SupportContact: r.SupportContact, StatusURL: r.StatusURL, LogoType: r.LogoType, Domain: r.Domain, DomainToken: r.DomainToken,
		DomainVerifiedAt: r.DomainVerifiedAt}
}

const profileColumns = "id, slug, name, description, website, support_contact, status_url, logo_type, domain, domain_token, domain_verified_at"

// FindProfile returns a carrier's approved profile.
func (s *Store) FindProfile(ctx context.Context, carrierID int64) (*storefront.Profile, error) {
	var row profileRow
	if err := s.read(ctx).Select(profileColumns).Where("id = ?", carrierID).Limit(1).Find(&row).Error; err != nil {
		return nil, fmt.Errorf("find profile: %w", err)
	}
	if row.ID == 0 {
		return nil, apperr.Errorf(apperr.ENOTFOUND, "Carrier not found.")
	}
	return row.domain(), nil
}

// FindProfileBySlug returns a carrier's approved profile by its slug.
func (s *Store) FindProfileBySlug(ctx context.Context, slug string) (*storefront.Profile, error) {
	var row profileRow
	if err := s.read(ctx).Select(profileColumns).Where("slug = ?", slug).Limit(1).Find(&row).Error; err != nil {
		return nil, fmt.Errorf("find profile: %w", err)
	}
	if row.ID == 0 {
		return nil, apperr.Errorf(apperr.ENOTFOUND, "Carrier not found.")
	}
	return row.domain(), nil
}

// FindLogo returns a carrier's approved logo and its content type.
func (s *Store) FindLogo(ctx context.Context, slug string) ([]byte, string, error) {
	var row struct {
		LogoType string
		Logo     []byte
	}
	if err := s.read(ctx).Table("carriers").Select("logo_type, logo").Where("slug = ?", slug).Limit(1).Scan(&row).Error; err != nil {
		return nil, "", fmt.Errorf("find logo: %w", err)
	}
	if len(row.Logo) == 0 {
		return nil, "", apperr.Errorf(apperr.ENOTFOUND, "No logo.")
	}
	return row.Logo, row.LogoType, nil
}

type profileChangeRow struct {
	ID             int64 `gorm:"primaryKey"`
	CarrierID      int64
	Description    string
	Website        string
	SupportContact string
	StatusURL      string `gorm:"column:status_url"`
	LogoType       string
	Logo           []byte
	State          string
	AuthorID       int64
	DecidedBy      *int64
	DecisionNote   string
	CreatedAt      time.Time
	DecidedAt      *time.Time
}

func (profileChangeRow) TableName() string { return "profile_changes" }

// SubmitProfileChange files a profile change (replacing a pending one of
// the carrier), audited, and tells the reviewers.
func (s *Store) SubmitProfileChange(ctx context.Context, authorID int64, ch storefront.ProfileChange) (int64, error) {
	var id int64
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		if err := tx.Model(&profileChangeRow{}).Where("carrier_id = ? AND state = ?", ch.CarrierID, storefront.Submitted).
			Updates(map[string]any{"state": "replaced", "decided_at": now}).Error; err != nil {
			return err
		}
		row := profileChangeRow{CarrierID: ch.CarrierID, Description: ch.Description, Website: ch.Website, SupportContact: ch.SupportContact,
			StatusURL: ch.StatusURL, LogoType: ch.LogoType, Logo: ch.Logo, State: storefront.Submitted, AuthorID: authorID, CreatedAt: now}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		id = row.ID
		if err := appendAudit(tx, now, auditEvent{ActorID: &authorID, CarrierID: &ch.CarrierID, Action: "profile.submit", SubjectType: "carrier",
			SubjectID: ch.CarrierID, After: map[string]any{"change": row.ID, "website": ch.Website, "logo": ch.LogoType != ""}}); err != nil {
			return err
		}
		var carrier carrierRow
		if err := tx.First(&carrier, ch.CarrierID).Error; err != nil {
			return err
		}
		return notifyStaff(tx, now, authorID, storefront.NoticeProfileChange(carrier.Name))
	})
	if err != nil {
		return 0, fmt.Errorf("submit profile change: %w", err)
	}
	return id, nil
}

// notifyStaff tells every reviewer and admin but one.
func notifyStaff(tx *gorm.DB, now time.Time, exceptUserID int64, message string) error {
	var ids []int64
	if err := tx.Table("users").Where("staff_role <> '' AND id <> ?", exceptUserID).Pluck("id", &ids).Error; err != nil {
		return err
	}
	for _, id := range ids {
		if err := tx.Create(&notificationRow{UserID: id, Message: message, CreatedAt: now}).Error; err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) profileChanges(ctx context.Context, where string, args ...any) ([]storefront.ProfileChange, error) {
	var rows []struct {
		Row         profileChangeRow `gorm:"embedded"`
		CarrierName string
		CarrierSlug string
		AuthorEmail string
	}
	err := s.read(ctx).Table("profile_changes").
		Select("profile_changes.*, carriers.name AS carrier_name, carriers.slug AS carrier_slug, users.email AS author_email").
		Joins("JOIN carriers ON carriers.id = profile_changes.carrier_id").Joins("JOIN users ON users.id = profile_changes.author_id").
		Where(where, args...).Order("profile_changes.id").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("find profile changes: %w", err)
	}
	out := make([]storefront.ProfileChange, len(rows))
	for i, r := range rows {
		out[i] = storefront.ProfileChange{ID: r.Row.ID, CarrierID: r.Row.CarrierID, CarrierName: r.CarrierName, CarrierSlug: r.CarrierSlug,
			Description: r.Row.Description, Website: r.Row.Website, SupportContact: r.Row.SupportContact, StatusURL: r.Row.StatusURL,
			LogoType: r.Row.LogoType, Logo: r.Row.Logo, State: r.Row.State, AuthorID: r.Row.AuthorID, AuthorEmail: r.AuthorEmail,
			DecisionNote: r.Row.DecisionNote, CreatedAt: r.Row.CreatedAt}
	}
	return out, nil
}

// PendingProfileChanges lists the profile changes awaiting review.
func (s *Store) PendingProfileChanges(ctx context.Context) ([]storefront.ProfileChange, error) {
	return s.profileChanges(ctx, "profile_changes.state = ?", storefront.Submitted)
}

// LatestProfileChange is a carrier's latest profile change, or nil.
func (s *Store) LatestProfileChange(ctx context.Context, carrierID int64) (*storefront.ProfileChange, error) {
	all, err := s.profileChanges(ctx, "profile_changes.carrier_id = ?", carrierID)
	if err != nil || len(all) == 0 {
		return nil, err
	}
	return &all[len(all)-1], nil
}

// FindProfileChange returns one profile change.
func (s *Store) FindProfileChange(ctx context.Context, id int64) (*storefront.ProfileChange, error) {
	all, err := s.profileChanges(ctx, "profile_changes.id = ?", id)
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, apperr.Errorf(apperr.ENOTFOUND, "Profile change not found.")
	}
	return &all[0], nil
}

// DecideProfileChange carries out a decision on a submitted profile change
// (storefront.ProfileChange.Decide): its state, the profile it publishes,
// the audit and the carrier's message, in one transaction; a change decided
// meanwhile is a conflict.
func (s *Store) DecideProfileChange(ctx context.Context, reviewerID, id int64, d storefront.ProfileDecision) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var row profileChangeRow
		if err := tx.First(&row, id).Error; err != nil {
			return notFound(err, "Profile change")
		}
		res := tx.Model(&profileChangeRow{}).Where("id = ? AND state = ?", id, storefront.Submitted).
			Updates(map[string]any{"state": d.State, "decided_by": reviewerID, "decided_at": now, "decision_note": d.Note})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return apperr.Errorf(apperr.ECONFLICT, "This profile change was decided meanwhile.")
		}
		if p := d.Publish; p != nil {
			updates := map[string]any{"description": p.Description, "website": p.Website, "support_contact": p.SupportContact,
				"status_url": p.StatusURL}
			if p.LogoType != "" {
				updates["logo_type"], updates["logo"] = p.LogoType, p.Logo
			}
			if err := tx.Table("carriers").Where("id = ?", row.CarrierID).Updates(updates).Error; err != nil {
				return err
			}
		}
		if err := appendAudit(tx, now, auditEvent{ActorID: &reviewerID, CarrierID: &row.CarrierID, Action: "profile." + d.State,
			SubjectType: "carrier", SubjectID: row.CarrierID, After: map[string]any{"change": id, "note": d.Note}}); err != nil {
			return err
		}
		return notifyCarrier(tx, now, row.CarrierID, nil, d.Message)
	})
}

// SetDomain sets the domain a carrier will prove, with a fresh token.
func (s *Store) SetDomain(ctx context.Context, actorID, carrierID int64, domain, token string) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		if err := tx.Table("carriers").Where("id = ?", carrierID).
			Updates(map[string]any{"domain": domain, "domain_token": token, "domain_verified_at": nil}).Error; err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: &actorID, CarrierID: &carrierID, Action: "domain.set", SubjectType: "carrier",
			SubjectID: carrierID, After: map[string]any{"domain": domain}})
	})
}

// MarkDomainVerified records that the carrier proved its domain.
func (s *Store) MarkDomainVerified(ctx context.Context, carrierID int64, method string) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		if err := tx.Table("carriers").Where("id = ?", carrierID).Update("domain_verified_at", now).Error; err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{CarrierID: &carrierID, Action: "domain.verified", SubjectType: "carrier",
			SubjectID: carrierID, After: map[string]any{"method": method}})
	})
}

type applicationRow struct {
	ID           int64 `gorm:"primaryKey"`
	Company      string
	Website      string
	ContactName  string
	ContactEmail string
	Models       string
	Description  string
	TokenHash    string
	State        string
	CarrierID    *int64
	InviteToken  string
	DecidedBy    *int64
	DecisionNote string
	CreatedAt    time.Time
	DecidedAt    *time.Time
}

func (applicationRow) TableName() string { return "applications" }

func (r *applicationRow) domain() *storefront.Application {
	return &storefront.Application{ID: r.ID, Company: r.Company, Website: r.Website, ContactName: r.ContactName, ContactEmail: r.ContactEmail,
		Models: r.Models, Description: r.Description, State: r.State, DecisionNote: r.DecisionNote, InviteSealed: r.InviteToken,
		CarrierID: r.CarrierID, CreatedAt: r.CreatedAt, DecidedAt: r.DecidedAt}
}

type applicationMessageRow struct {
	ID            int64 `gorm:"primaryKey"`
	ApplicationID int64
	AuthorID      *int64
	Body          string
	CreatedAt     time.Time
}

func (applicationMessageRow) TableName() string { return "application_messages" }

// CreateApplication records an application, audited, and tells staff.
func (s *Store) CreateApplication(ctx context.Context, a storefront.Application, tokenHash string) (int64, error) {
	var id int64
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		row := applicationRow{Company: a.Company, Website: a.Website, ContactName: a.ContactName, ContactEmail: a.ContactEmail,
			Models: a.Models, Description: a.Description, TokenHash: tokenHash, State: storefront.Submitted, CreatedAt: now}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		id = row.ID
		if err := appendAudit(tx, now, auditEvent{Action: "application.create", SubjectType: "application", SubjectID: row.ID,
			After: map[string]any{"company": a.Company, "website": a.Website}}); err != nil {
			return err
		}
		return notifyStaff(tx, now, 0, storefront.NoticeApplication(a.Company))
	})
	if err != nil {
		return 0, fmt.Errorf("create application: %w", err)
	}
	return id, nil
}

func (s *Store) application(ctx context.Context, where string, arg any) (*storefront.Application, []storefront.Message, error) {
	var row applicationRow
	if err := s.read(ctx).Where(where, arg).Limit(1).Find(&row).Error; err != nil {
		return nil, nil, fmt.Errorf("find application: %w", err)
	}
	if row.ID == 0 {
		return nil, nil, apperr.Errorf(apperr.ENOTFOUND, "Application not found.")
	}
	var msgs []struct {
		Row   applicationMessageRow `gorm:"embedded"`
		Email *string
	}
	if err := s.read(ctx).Table("application_messages").Select("application_messages.*, users.email AS email").
		Joins("LEFT JOIN users ON users.id = application_messages.author_id").
		Where("application_messages.application_id = ?", row.ID).Order("application_messages.id").Scan(&msgs).Error; err != nil {
		return nil, nil, fmt.Errorf("find application messages: %w", err)
	}
	out := make([]storefront.Message, len(msgs))
	for i, m := range msgs {
		out[i] = storefront.Message{FromStaff: m.Row.AuthorID != nil, Author: valueOf(m.Email), Body: m.Row.Body, At: m.Row.CreatedAt}
		if m.Row.AuthorID == nil {
			out[i].Author = row.ContactName
		}
	}
	return row.domain(), out, nil
}

// FindApplication returns an application with its thread.
func (s *Store) FindApplication(ctx context.Context, id int64) (*storefront.Application, []storefront.Message, error) {
	return s.application(ctx, "id = ?", id)
}

// FindApplicationByToken returns the application of a status page secret.
func (s *Store) FindApplicationByToken(ctx context.Context, tokenHash string) (*storefront.Application, []storefront.Message, error) {
	return s.application(ctx, "token_hash = ?", tokenHash)
}

// FindApplications lists applications, undecided first.
func (s *Store) FindApplications(ctx context.Context) ([]storefront.Application, error) {
	var rows []applicationRow
	if err := s.read(ctx).Order("CASE WHEN state = 'submitted' THEN 0 ELSE 1 END, id DESC").Limit(200).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("find applications: %w", err)
	}
	out := make([]storefront.Application, len(rows))
	for i := range rows {
		out[i] = *rows[i].domain()
	}
	return out, nil
}

// AddApplicationMessage adds to an application's thread (authorID nil:
// the applicant), audited.
func (s *Store) AddApplicationMessage(ctx context.Context, appID int64, authorID *int64, body string) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var row applicationRow
		if err := tx.First(&row, appID).Error; err != nil {
			return notFound(err, "Application")
		}
		if err := tx.Create(&applicationMessageRow{ApplicationID: appID, AuthorID: authorID, Body: body, CreatedAt: now}).Error; err != nil {
			return err
		}
		if authorID == nil {
			if err := notifyStaff(tx, now, 0, storefront.NoticeApplicantAnswered(row.Company)); err != nil {
				return err
			}
		}
		return appendAudit(tx, now, auditEvent{ActorID: authorID, Action: "application.message", SubjectType: "application", SubjectID: appID})
	})
}

// ApproveApplication creates the carrier and its first admin's invite,
// keeps the sealed link for the applicant's status page, audited.
func (s *Store) ApproveApplication(ctx context.Context, reviewerID, appID int64, slug, name string, invite account.InviteRecord, inviteSealed, note string) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var row applicationRow
		if err := tx.First(&row, appID).Error; err != nil {
			return notFound(err, "Application")
		}
		if row.State != storefront.Submitted {
			return apperr.Errorf(apperr.ECONFLICT, "This application is already %s.", row.State)
		}
		c, err := createCarrier(tx, now, &reviewerID, slug, name)
		if err != nil {
			return err
		}
		if err := tx.Table("carriers").Where("id = ?", c.ID).Update("website", row.Website).Error; err != nil {
			return err
		}
		inv := inviteRow{TokenHash: invite.TokenHash, CarrierID: c.ID, Email: invite.Email, Role: string(account.CarrierAdmin),
			CreatedBy: &reviewerID, CreatedAt: now, ExpiresAt: invite.ExpiresAt.UTC()}
		if err := tx.Create(&inv).Error; err != nil {
			return err
		}
		if err := tx.Model(&applicationRow{}).Where("id = ?", appID).Updates(map[string]any{"state": storefront.Approved, "carrier_id": c.ID,
			"invite_token": inviteSealed, "decided_by": reviewerID, "decided_at": now, "decision_note": note}).Error; err != nil {
			return err
		}
		return appendAudit(tx, now, auditEvent{ActorID: &reviewerID, CarrierID: &c.ID, Action: "application.approve", SubjectType: "application",
			SubjectID: appID, After: map[string]any{"carrier": slug, "email": invite.Email}})
	})
}

// DeclineApplication declines an application, audited.
func (s *Store) DeclineApplication(ctx context.Context, reviewerID, appID int64, note string) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var row applicationRow
		if err := tx.First(&row, appID).Error; err != nil {
			return notFound(err, "Application")
		}
		res := tx.Model(&applicationRow{}).Where("id = ? AND state = ?", appID, storefront.Submitted).
			Updates(map[string]any{"state": storefront.Declined, "decided_by": reviewerID, "decided_at": now, "decision_note": note})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return apperr.Errorf(apperr.ECONFLICT, "This application is already decided.")
		}
		return appendAudit(tx, now, auditEvent{ActorID: &reviewerID, Action: "application.decline", SubjectType: "application",
			SubjectID: appID, After: map[string]any{"note": note}})
	})
}

type proposalRow struct {
	ID               int64 `gorm:"primaryKey"`
	CarrierID        int64
	Name, Slug       string
	Family           string
	ContextTokens    int64
	MaxOutputTokens  int64
	InputModalities  string
	OutputModalities string
	Note, State      string
	AuthorID         int64
	DecidedBy        *int64
	DecisionNote     string
	ModelID          *int64
	CreatedAt        time.Time
	DecidedAt        *time.Time
}

func (proposalRow) TableName() string { return "model_proposals" }

// CreateProposal records a model proposal, audited, and tells staff.
func (s *Store) CreateProposal(ctx context.Context, authorID int64, pr storefront.Proposal) (int64, error) {
	var id int64
	err := s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		row := proposalRow{CarrierID: pr.CarrierID, Name: pr.Name, Slug: pr.Slug, Family: pr.Family, ContextTokens: pr.ContextTokens,
			MaxOutputTokens: pr.MaxOutputTokens, InputModalities: pr.InputModalities, OutputModalities: pr.OutputModalities, Note: pr.Note,
			State: storefront.Submitted, AuthorID: authorID, CreatedAt: now}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		id = row.ID
		if err := appendAudit(tx, now, auditEvent{ActorID: &authorID, CarrierID: &pr.CarrierID, Action: "model.propose", SubjectType: "proposal",
			SubjectID: row.ID, After: map[string]any{"slug": pr.Slug, "name": pr.Name}}); err != nil {
			return err
		}
		return notifyStaff(tx, now, authorID, storefront.NoticeModelProposal(pr.Name))
	})
	if err != nil {
		return 0, fmt.Errorf("create proposal: %w", err)
	}
	return id, nil
}

// FindProposals lists proposals (of carriers, or all with nil), undecided
// first.
func (s *Store) FindProposals(ctx context.Context, carrierIDs []int64) ([]storefront.Proposal, error) {
	var rows []struct {
		Row         proposalRow `gorm:"embedded"`
		CarrierName string
		AuthorEmail string
	}
	q := s.read(ctx).Table("model_proposals").Select("model_proposals.*, carriers.name AS carrier_name, users.email AS author_email").
		Joins("JOIN carriers ON carriers.id = model_proposals.carrier_id").Joins("JOIN users ON users.id = model_proposals.author_id").
		Order("CASE WHEN model_proposals.state = 'submitted' THEN 0 ELSE 1 END, model_proposals.id DESC").Limit(200)
	if carrierIDs != nil {
		q = q.Where("model_proposals.carrier_id IN ?", append(carrierIDs, -1))
	}
	if err := q.Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("find proposals: %w", err)
	}
	out := make([]storefront.Proposal, len(rows))
	for i, r := range rows {
		out[i] = proposalOf(&r.Row)
		out[i].CarrierName, out[i].AuthorEmail = r.CarrierName, r.AuthorEmail
	}
	return out, nil
}

func proposalOf(r *proposalRow) storefront.Proposal {
	return storefront.Proposal{ID: r.ID, CarrierID: r.CarrierID, Name: r.Name, Slug: r.Slug, Family: r.Family, ContextTokens: r.ContextTokens,
		MaxOutputTokens: r.MaxOutputTokens, InputModalities: r.InputModalities, OutputModalities: r.OutputModalities, Note: r.Note,
		State: r.State, AuthorID: r.AuthorID, DecisionNote: r.DecisionNote, CreatedAt: r.CreatedAt}
}

// FindProposal returns one proposal.
func (s *Store) FindProposal(ctx context.Context, id int64) (*storefront.Proposal, error) {
	var row proposalRow
	if err := s.read(ctx).Where("id = ?", id).Limit(1).Find(&row).Error; err != nil {
		return nil, fmt.Errorf("find proposal: %w", err)
	}
	if row.ID == 0 {
		return nil, apperr.Errorf(apperr.ENOTFOUND, "Proposal not found.")
	}
	pr := proposalOf(&row)
	return &pr, nil
}

// AcceptProposal adds the (edited) model to the catalogue and closes the
// proposal, in one transaction, and tells the carrier.
func (s *Store) AcceptProposal(ctx context.Context, reviewerID, id int64, m catalogue.Model, note string) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var row proposalRow
		if err := tx.First(&row, id).Error; err != nil {
			return notFound(err, "Proposal")
		}
		model, err := createModel(tx, now, &reviewerID, m)
		if err != nil {
			return err
		}
		res := tx.Model(&proposalRow{}).Where("id = ? AND state = ?", id, storefront.Submitted).Updates(map[string]any{
			"state": storefront.Approved, "decided_by": reviewerID, "decided_at": now, "decision_note": note, "model_id": model.ID})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return apperr.Errorf(apperr.ECONFLICT, "This proposal was decided meanwhile.")
		}
		return notifyCarrier(tx, now, row.CarrierID, nil, storefront.ProposalAccepted(model.Name))
	})
}

// DeclineProposal declines a proposal with a reason, and tells the carrier.
func (s *Store) DeclineProposal(ctx context.Context, reviewerID, id int64, note string) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		var row proposalRow
		if err := tx.First(&row, id).Error; err != nil {
			return notFound(err, "Proposal")
		}
		res := tx.Model(&proposalRow{}).Where("id = ? AND state = ?", id, storefront.Submitted).Updates(map[string]any{
			"state": storefront.Declined, "decided_by": reviewerID, "decided_at": now, "decision_note": note})
		if res.Error != nil || res.RowsAffected != 1 {
			if res.Error != nil {
				return res.Error
			}
			return apperr.Errorf(apperr.ECONFLICT, "This proposal was decided meanwhile.")
		}
		if err := appendAudit(tx, now, auditEvent{ActorID: &reviewerID, CarrierID: &row.CarrierID, Action: "model.proposal.decline",
			SubjectType: "proposal", SubjectID: id, After: map[string]any{"note": note}}); err != nil {
			return err
		}
		return notifyCarrier(tx, now, row.CarrierID, nil, storefront.ProposalDeclined(row.Name, note))
	})
}

// SeedProfile writes a carrier's public profile directly (the demo's seed
// only; carriers' own changes go through review).
func (s *Store) SeedProfile(ctx context.Context, slug string, prof storefront.Profile, logoType string, logo []byte, verifiedDomain string) error {
	return s.tx(ctx, func(tx *gorm.DB, now time.Time) error {
		updates := map[string]any{"description": prof.Description, "website": prof.Website, "support_contact": prof.SupportContact,
			"status_url": prof.StatusURL, "logo_type": logoType, "logo": logo}
		if verifiedDomain != "" {
			updates["domain"], updates["domain_verified_at"] = verifiedDomain, now
		}
		return tx.Table("carriers").Where("slug = ?", slug).Updates(updates).Error
	})
}
