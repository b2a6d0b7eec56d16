package web

import (
	"context"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/account"
	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/feed"
	"github.com/airside/airside/templates"
)

// FeedService reads carriers' provider feeds (feed.Syncer).
type FeedService interface {
	Feed(ctx context.Context, p *account.Principal, carrierID int64) (*feed.Config, error)
	Register(ctx context.Context, p *account.Principal, carrierID int64, rawURL string, submit bool) error
	Remove(ctx context.Context, p *account.Principal, carrierID int64) error
	SyncNow(ctx context.Context, p *account.Principal, carrierID int64) (*feed.Config, error)
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
	}
	return v, nil
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
