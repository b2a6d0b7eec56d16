package web

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/feed"
	"github.com/airside/airside/templates"
)

// FeedService reads carriers' provider feeds (feed.Syncer).
type FeedService interface {
	Feed(ctx context.Context, p *account.Principal, carrierID int64) (*feed.Config, error)
	Register(ctx context.Context, p *account.Principal, carrierID int64, rawURL string, submit bool) error
	Remove(ctx context.Context, p *account.Principal, carrierID int64) error
	SyncNow(ctx context.Context, p *account.Principal, carrierID int64) (*feed.Config, error)
	Map(ctx context.Context, p *account.Principal, carrierID int64, choice map[string]int64) error
	Run(ctx context.Context, log func(error))
}

const feedPath = "/carrier/feed"

func (s *Server) feedView(c echo.Context) (templates.FeedView, error) {
	carrier, choices, err := s.trafficCarrier(c, principal(c), feedPath)
	if err != nil {
		return templates.FeedView{}, err
	}
	v := templates.FeedView{Page: s.page(c, "Provider feed", "members"), Carrier: carrier.Name, Slug: carrier.Slug, Carriers: choices}
	cfg, err := s.Feeds.Feed(c.Request().Context(), principal(c), carrier.ID)
	if err != nil {
		return templates.FeedView{}, err
	}
	if cfg != nil {
		v.Set, v.URL, v.Submit, v.Failing = true, cfg.URL, cfg.Submit, cfg.Failing
		v.Checked = stamp(cfg.CheckedAt)
		if cfg.Outcome != "" {
			v.Lines = strings.Split(cfg.Outcome, "\n")
		}
		if err := s.feedMappingView(c, &v, carrier.ID, cfg, nil); err != nil {
			return templates.FeedView{}, err
		}
	}
	return v, nil
}

// feedMappingView fills the mapping form: the feed's models, each with its
// choice (typed, when given, or saved), and the carrier's listings.
func (s *Server) feedMappingView(c echo.Context, v *templates.FeedView, carrierID int64, cfg *feed.Config, typed map[string]string) error {
	if len(cfg.Models) == 0 {
		return nil
	}
	ls, err := s.ListingReads.FindListings(c.Request().Context(), catalogue.ListingFilter{CarrierIDs: []int64{carrierID}, WithoutFares: true})
	if err != nil {
		return err
	}
	bySlug := map[string]string{}
	for _, l := range ls {
		label := fmt.Sprintf("%s (listing #%d)", l.Model.Name, l.ID)
		v.Listings = append(v.Listings, templates.Option{Value: strconv.FormatInt(l.ID, 10), Label: label})
		bySlug[l.Model.Slug] = label
	}
	for _, id := range cfg.Models {
		row := templates.FeedModelRow{ID: id, Field: feed.MappingField(id), BySlug: bySlug[(&feed.Model{ID: id}).Slug()]}
		if chosen, ok := cfg.Mapping[id]; ok {
			row.Chosen = "none"
			if chosen != feed.NotImported {
				row.Chosen = strconv.FormatInt(chosen, 10)
			}
		}
		if t, ok := typed[row.Field]; ok {
			row.Chosen = t
		}
		v.Models = append(v.Models, row)
	}
	return nil
}

// handleMapFeed saves which listing each feed model files to, then reads
// the feed so the new mapping files what it changes.
func (s *Server) handleMapFeed(c echo.Context) error {
	carrier, _, err := s.trafficCarrier(c, principal(c), feedPath)
	if err != nil {
		return err
	}
	ctx, p := c.Request().Context(), principal(c)
	cfg, err := s.Feeds.Feed(ctx, p, carrier.ID)
	if err != nil {
		return err
	}
	if cfg == nil {
		return apperr.Errorf(apperr.ENOTFOUND, "No feed is set.")
	}
	choice, typed, problems := map[string]int64{}, map[string]string{}, map[string]string{}
	for _, id := range cfg.Models {
		field := feed.MappingField(id)
		raw := strings.TrimSpace(c.FormValue(field))
		typed[field] = raw
		switch raw {
		case "":
		case "none":
			choice[id] = feed.NotImported
		default:
			l, err := strconv.ParseInt(raw, 10, 64)
			if err != nil || l < 1 {
				problems[field] = "Choose one of your listings, or \"not imported\"."
				continue
			}
			choice[id] = l
		}
	}
	if len(problems) > 0 {
		err = apperr.Invalid(problems)
	} else {
		err = s.Feeds.Map(ctx, p, carrier.ID, choice)
	}
	if apperr.Code(err) == apperr.EINVALID {
		v, verr := s.feedView(c)
		if verr != nil {
			return verr
		}
		v.Models, v.Listings, v.MapErrors = nil, nil, apperr.FieldErrors(err)
		if verr := s.feedMappingView(c, &v, carrier.ID, cfg, typed); verr != nil {
			return verr
		}
		return render(c, http.StatusUnprocessableEntity, templates.Feed(v))
	}
	if err != nil {
		return err
	}
	if _, err := s.Feeds.SyncNow(ctx, p, carrier.ID); err != nil {
		return err
	}
	if err := s.setFlash(c, "Saved, and the feed read again: see what it filed below."); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, feedPath+"?carrier="+carrier.Slug)
}

func (s *Server) handleFeed(c echo.Context) error {
	v, err := s.feedView(c)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, templates.Feed(v))
}

func (s *Server) handleSetFeed(c echo.Context) error {
	carrier, _, err := s.trafficCarrier(c, principal(c), feedPath)
	if err != nil {
		return err
	}
	url, submit := c.FormValue("url"), c.FormValue("mode") == "submit"
	err = s.Feeds.Register(c.Request().Context(), principal(c), carrier.ID, url, submit)
	if apperr.Code(err) == apperr.EINVALID {
		v, verr := s.feedView(c)
		if verr != nil {
			return verr
		}
		v.URL, v.Submit, v.Errors = url, submit, apperr.FieldErrors(err) // what was typed stays
		return render(c, http.StatusUnprocessableEntity, templates.Feed(v))
	}
	if err != nil {
		return err
	}
	if err := s.setFlash(c, "Feed saved: it is read every 15 minutes, or now with \"Read it now\"."); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, feedPath+"?carrier="+carrier.Slug)
}

func (s *Server) handleReadFeed(c echo.Context) error {
	carrier, _, err := s.trafficCarrier(c, principal(c), feedPath)
	if err != nil {
		return err
	}
	cfg, err := s.Feeds.SyncNow(c.Request().Context(), principal(c), carrier.ID)
	if err != nil {
		return err
	}
	msg := "Feed read: see what it did below."
	if cfg.Failing {
		msg = "The feed could not be read: see why below."
	}
	if err := s.setFlash(c, "%s", msg); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, feedPath+"?carrier="+carrier.Slug)
}

func (s *Server) handleRemoveFeed(c echo.Context) error {
	carrier, _, err := s.trafficCarrier(c, principal(c), feedPath)
	if err != nil {
		return err
	}
	if err := s.Feeds.Remove(c.Request().Context(), principal(c), carrier.ID); err != nil {
		return err
	}
	if err := s.setFlash(c, "The feed is no longer read."); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, feedPath+"?carrier="+carrier.Slug)
}
