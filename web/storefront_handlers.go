package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/storefront"
	"github.com/airside/airside/internal/workflow"
	"github.com/airside/airside/templates"
)

// StorefrontReads is what the storefront pages read.
type StorefrontReads interface {
	FindProfile(ctx context.Context, carrierID int64) (*storefront.Profile, error)
	FindProfileBySlug(ctx context.Context, slug string) (*storefront.Profile, error)
	FindLogo(ctx context.Context, slug string) ([]byte, string, error)
	PendingProfileChanges(ctx context.Context) ([]storefront.ProfileChange, error)
	LatestProfileChange(ctx context.Context, carrierID int64) (*storefront.ProfileChange, error)
	FindProfileChange(ctx context.Context, id int64) (*storefront.ProfileChange, error)
	FindApplications(ctx context.Context) ([]storefront.Application, error)
	FindApplication(ctx context.Context, id int64) (*storefront.Application, []storefront.Message, error)
	FindProposals(ctx context.Context, carrierIDs []int64) ([]storefront.Proposal, error)
}

func (s *Server) handleApplyForm(c echo.Context) error {
	return render(c, http.StatusOK, templates.ApplyPage(templates.ApplyView{Page: s.page(c, "Apply to carry", "apply")}))
}

func (s *Server) handleApply(c echo.Context) error {
	f := storefront.ApplicationForm{Company: c.FormValue("company"), Website: c.FormValue("website"), ContactName: c.FormValue("contact_name"),
		ContactEmail: c.FormValue("contact_email"), Models: c.FormValue("models"), Description: c.FormValue("description")}
	token, err := s.Storefront.Apply(c.Request().Context(), c.RealIP(), f)
	if apperr.Code(err) == apperr.EINVALID {
		v := templates.ApplyView{Page: s.page(c, "Apply to carry", ""), Company: f.Company, Website: f.Website, ContactName: f.ContactName,
			ContactEmail: f.ContactEmail, Models: f.Models, Description: f.Description, Errors: apperr.FieldErrors(err)}
		return render(c, http.StatusUnprocessableEntity, templates.ApplyPage(v))
	}
	if err != nil {
		return err
	}
	a, thread, err := s.Storefront.ByToken(c.Request().Context(), token)
	if err != nil {
		return err
	}
	v := s.applicationView(c, a, thread, "")
	v.StatusURL = s.absolute(c, "/apply/status/"+token)
	v.ReplyAction = "/apply/status/" + token
	return render(c, http.StatusCreated, templates.ApplicationPage(v))
}

// absolute makes a link to hand out: on the configured base URL only.
func (s *Server) absolute(c echo.Context, path string) string {
	return strings.TrimSuffix(s.BaseURL, "/") + path
}

func (s *Server) handleApplicationStatus(c echo.Context) error {
	token := c.Param("token")
	a, thread, err := s.Storefront.ByToken(c.Request().Context(), token)
	if err != nil {
		return err
	}
	v := s.applicationView(c, a, thread, "")
	if a.State == storefront.Submitted {
		v.ReplyAction = "/apply/status/" + token
	}
	if link := s.Storefront.InviteLink(a); link != "" {
		v.SignupURL = s.absolute(c, "/signup/"+link)
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return render(c, http.StatusOK, templates.ApplicationPage(v))
}

func (s *Server) handleApplicationReply(c echo.Context) error {
	token := c.Param("token")
	err := s.Storefront.Reply(c.Request().Context(), token, c.FormValue("body"))
	if apperr.Code(err) == apperr.EINVALID {
		a, thread, ferr := s.Storefront.ByToken(c.Request().Context(), token)
		if ferr != nil {
			return ferr
		}
		v := s.applicationView(c, a, thread, "")
		v.ReplyAction, v.Errors = "/apply/status/"+token, apperr.FieldErrors(err)
		return render(c, http.StatusUnprocessableEntity, templates.ApplicationPage(v))
	}
	if err != nil {
		return err
	}
	if err := s.setFlash(c, "Sent; staff see it in the application."); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/apply/status/"+token)
}

var notSlug = regexp.MustCompile(`[^a-z0-9]+`)

func (s *Server) applicationView(c echo.Context, a *storefront.Application, thread []storefront.Message, active string) templates.ApplicationView {
	v := templates.ApplicationView{Page: s.page(c, "Application · "+a.Company, active), ID: a.ID, Company: a.Company, Website: a.Website,
		ContactName: a.ContactName, ContactEmail: a.ContactEmail, Models: a.Models, Description: a.Description, State: a.State,
		Submitted: stamp(&a.CreatedAt), DecisionNote: a.DecisionNote}
	for _, m := range thread {
		v.Thread = append(v.Thread, templates.ThreadItem{Author: m.Author, Body: m.Body, At: stamp(&m.At), FromStaff: m.FromStaff})
	}
	slug := strings.Trim(notSlug.ReplaceAllString(strings.ToLower(a.Company), "-"), "-")
	v.SuggestedSlug = slug[:min(len(slug), 40)]
	return v
}

func (s *Server) handleApplications(c echo.Context) error {
	apps, err := s.StorefrontReads.FindApplications(c.Request().Context())
	if err != nil {
		return err
	}
	v := templates.ApplicationsView{Page: s.page(c, "Applications", "applications")}
	for _, a := range apps {
		v.Rows = append(v.Rows, templates.ApplicationRow{URL: fmt.Sprintf("/applications/%d", a.ID), Company: a.Company, Website: a.Website,
			State: a.State, Submitted: stamp(&a.CreatedAt)})
	}
	return render(c, http.StatusOK, templates.Applications(v))
}

func (s *Server) renderApplication(c echo.Context, id int64, status int, errs map[string]string) error {
	a, thread, err := s.StorefrontReads.FindApplication(c.Request().Context(), id)
	if err != nil {
		return err
	}
	v := s.applicationView(c, a, thread, "applications")
	p := principal(c)
	if a.State == storefront.Submitted {
		v.ReplyAction = fmt.Sprintf("/applications/%d/ask", a.ID)
		v.CanApprove = storefront.CanApproveCarriers(p)
	}
	v.Errors = errs
	if slug := c.FormValue("slug"); slug != "" {
		v.SuggestedSlug = slug
	}
	return render(c, status, templates.ApplicationPage(v))
}

func (s *Server) handleApplication(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	return s.renderApplication(c, id, http.StatusOK, nil)
}

// applicationAction runs a staff action on an application; a refused value
// is shown on its page.
func (s *Server) applicationAction(c echo.Context, act func(id int64) error, done string) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	switch err := act(id); apperr.Code(err) {
	case "":
	case apperr.EINVALID:
		return s.renderApplication(c, id, http.StatusUnprocessableEntity, apperr.FieldErrors(err))
	default:
		return err
	}
	if err := s.setFlash(c, "%s", done); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/applications/%d", id))
}

func (s *Server) handleApplicationAsk(c echo.Context) error {
	return s.applicationAction(c, func(id int64) error {
		return s.Storefront.Ask(c.Request().Context(), principal(c), id, c.FormValue("body"))
	}, "Question sent; the applicant reads it on its status page.")
}

func (s *Server) handleApplicationApprove(c echo.Context) error {
	return s.applicationAction(c, func(id int64) error {
		return s.Storefront.Approve(c.Request().Context(), principal(c), id, c.FormValue("slug"), c.FormValue("note"))
	}, "Approved: the carrier exists, and the applicant's status page holds its sign-up link.")
}

func (s *Server) handleApplicationDecline(c echo.Context) error {
	return s.applicationAction(c, func(id int64) error {
		return s.Storefront.Decline(c.Request().Context(), principal(c), id, c.FormValue("note"))
	}, "Declined; the applicant reads why on its status page.")
}

func (s *Server) renderProfile(c echo.Context, status int, typed *storefront.ProfileForm, errs map[string]string) error {
	ctx, p := c.Request().Context(), principal(c)
	carrier, carriers, err := s.trafficCarrier(c, p, "/carrier/profile")
	if err != nil {
		return err
	}
	prof, err := s.StorefrontReads.FindProfile(ctx, carrier.ID)
	if err != nil {
		return err
	}
	pending, err := s.StorefrontReads.LatestProfileChange(ctx, carrier.ID)
	if err != nil {
		return err
	}
	v := profileView(s.page(c, "Profile", "profile"), prof, carriers, pending, workflow.CanManageListings(p, carrier.ID))
	v.Errors = errs
	if typed != nil {
		v.Description, v.Website, v.SupportContact, v.StatusURL = typed.Description, typed.Website, typed.SupportContact, typed.StatusURL
	}
	if d := c.FormValue("domain"); d != "" && errs["domain"] != "" {
		v.Domain = d
	}
	return render(c, status, templates.ProfilePage(v))
}

func (s *Server) handleProfile(c echo.Context) error {
	return s.renderProfile(c, http.StatusOK, nil, nil)
}

func (s *Server) handleSubmitProfile(c echo.Context) error {
	carrier, _, err := s.trafficCarrier(c, principal(c), "/carrier/profile")
	if err != nil {
		return err
	}
	f := storefront.ProfileForm{Description: c.FormValue("description"), Website: c.FormValue("website"),
		SupportContact: c.FormValue("support_contact"), StatusURL: c.FormValue("status_url")}
	if fh, err := c.FormFile("logo"); err == nil && fh.Size > 0 {
		if fh.Size > storefront.MaxLogoBytes {
			return s.renderProfile(c, http.StatusUnprocessableEntity, &f, map[string]string{"logo": fmt.Sprintf("The logo is %d KB; keep it under %d KB.", fh.Size>>10, storefront.MaxLogoBytes>>10)})
		}
		file, err := fh.Open()
		if err != nil {
			return err
		}
		f.Logo, err = io.ReadAll(io.LimitReader(file, storefront.MaxLogoBytes+1))
		file.Close()
		if err != nil {
			return err
		}
	}
	_, err = s.Storefront.SubmitProfile(c.Request().Context(), principal(c), carrier.ID, f)
	if apperr.Code(err) == apperr.EINVALID {
		return s.renderProfile(c, http.StatusUnprocessableEntity, &f, apperr.FieldErrors(err))
	}
	if err != nil {
		return err
	}
	if err := s.setFlash(c, "Profile change filed; it shows once a reviewer approves it."); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/carrier/profile?carrier="+carrier.Slug)
}

func (s *Server) handleSetDomain(c echo.Context) error {
	carrier, _, err := s.trafficCarrier(c, principal(c), "/carrier/profile")
	if err != nil {
		return err
	}
	err = s.Storefront.SetDomain(c.Request().Context(), principal(c), carrier.ID, c.FormValue("domain"))
	if apperr.Code(err) == apperr.EINVALID {
		return s.renderProfile(c, http.StatusUnprocessableEntity, nil, apperr.FieldErrors(err))
	}
	if err != nil {
		return err
	}
	if err := s.setFlash(c, "Publish the token, then check."); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/carrier/profile?carrier="+carrier.Slug)
}

func (s *Server) handleCheckDomain(c echo.Context) error {
	carrier, _, err := s.trafficCarrier(c, principal(c), "/carrier/profile")
	if err != nil {
		return err
	}
	msg := "Domain verified: the badge shows on your public page."
	switch err := s.Storefront.CheckDomain(c.Request().Context(), principal(c), carrier.ID); apperr.Code(err) {
	case "":
	case apperr.ECONFLICT:
		msg = apperr.Message(err)
	default:
		return err
	}
	if err := s.setFlash(c, "%s", msg); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/carrier/profile?carrier="+carrier.Slug)
}

func (s *Server) handleProfileDecision(approve bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := pathID(c, "id")
		if err != nil {
			return err
		}
		msg := "Profile change approved; it is public."
		if !approve {
			msg = "Profile change declined; the carrier is told why."
		}
		switch err := s.Storefront.DecideProfile(c.Request().Context(), principal(c), id, approve, c.FormValue("note")); apperr.Code(err) {
		case "":
		case apperr.EINVALID, apperr.ECONFLICT:
			msg = strings.Join(append(mapValues(apperr.FieldErrors(err)), apperr.Message(err)), " ")
		default:
			return err
		}
		if err := s.setFlash(c, "%s", strings.TrimSpace(msg)); err != nil {
			return err
		}
		return c.Redirect(http.StatusSeeOther, "/review")
	}
}

func (s *Server) renderProposals(c echo.Context, status int, typed *storefront.ProposalForm, errs map[string]string) error {
	ctx, p := c.Request().Context(), principal(c)
	v := templates.ProposalsView{Page: s.page(c, "Model proposals", "proposals"), Errors: errs}
	if !p.IsStaff() {
		carrier, _, err := s.trafficCarrier(c, p, "/proposals")
		if err != nil {
			return err
		}
		v.Carrier, v.Slug, v.CanPropose = carrier.Name, carrier.Slug, workflow.CanManageListings(p, carrier.ID)
	}
	rows, err := s.StorefrontReads.FindProposals(ctx, workflow.Scope(p))
	if err != nil {
		return err
	}
	v.Rows = proposalRows(rows, p.IsStaff())
	form := storefront.ProposalForm{InputModalities: []string{"text"}, OutputModalities: []string{"text"}}
	if typed != nil {
		form = *typed
		v.Form = templates.ProposalRow{Name: typed.Name, Slug: typed.Slug, Family: typed.Family, Context: typed.ContextTokens,
			MaxOutput: typed.MaxOutputTokens, Note: typed.Note}
	}
	v.Inputs, v.Outputs = modalityOptions(form.InputModalities), modalityOptions(form.OutputModalities)
	return render(c, status, templates.Proposals(v))
}

func (s *Server) handleProposals(c echo.Context) error {
	return s.renderProposals(c, http.StatusOK, nil, nil)
}

func proposalForm(c echo.Context) storefront.ProposalForm {
	form, _ := c.FormParams()
	f := storefront.ProposalForm{Name: c.FormValue("name"), Slug: c.FormValue("slug"), Family: c.FormValue("family"),
		ContextTokens: c.FormValue("context_tokens"), MaxOutputTokens: c.FormValue("max_output_tokens"), Note: c.FormValue("note"),
		InputModalities: form["input_modalities"], OutputModalities: form["output_modalities"]}
	if v := c.FormValue("input_modalities_csv"); v != "" {
		f.InputModalities = strings.Split(v, ",")
	}
	if v := c.FormValue("output_modalities_csv"); v != "" {
		f.OutputModalities = strings.Split(v, ",")
	}
	return f
}

func (s *Server) handlePropose(c echo.Context) error {
	carrier, _, err := s.trafficCarrier(c, principal(c), "/proposals")
	if err != nil {
		return err
	}
	f := proposalForm(c)
	_, err = s.Storefront.Propose(c.Request().Context(), principal(c), carrier.ID, f)
	if apperr.Code(err) == apperr.EINVALID {
		return s.renderProposals(c, http.StatusUnprocessableEntity, &f, apperr.FieldErrors(err))
	}
	if err != nil {
		return err
	}
	if err := s.setFlash(c, "Model proposed; gateway staff review it."); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/proposals?carrier="+carrier.Slug)
}

func (s *Server) handleProposalDecision(accept bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := pathID(c, "id")
		if err != nil {
			return err
		}
		msg := "Model added to the catalogue; any carrier may list it."
		if !accept {
			msg = "Proposal declined; the carrier is told why."
		}
		switch err := s.Storefront.DecideProposal(c.Request().Context(), principal(c), id, accept, proposalForm(c), c.FormValue("note")); apperr.Code(err) {
		case "":
		case apperr.EINVALID, apperr.ECONFLICT:
			msg = strings.TrimSpace(strings.Join(append(mapValues(apperr.FieldErrors(err)), apperr.Message(err)), " "))
		default:
			return err
		}
		if err := s.setFlash(c, "%s", msg); err != nil {
			return err
		}
		return c.Redirect(http.StatusSeeOther, "/proposals")
	}
}
