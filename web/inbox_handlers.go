package web

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/workflow"

	"github.com/airside/airside/templates"
)

// inboxLimit is how many of the latest messages the inbox shows.
const inboxLimit = 200

// inboxFilters are the inbox's views.
var inboxFilters = []struct{ key, label string }{{"", "all"}, {"unread", "new"}, {"filings", "filings"}, {"alerts", "alerts"}}

func (s *Server) handleInbox(c echo.Context) error {
	ctx, p := c.Request().Context(), principal(c)
	notes, err := s.Filings.Inbox(ctx, p, inboxLimit)
	if err != nil {
		return err
	}
	// Each message about a filing says where the filing is now, so an old
	// "awaits review" does not mislead.
	var ids []int64
	for _, n := range notes {
		if n.FilingID != nil {
			ids = append(ids, *n.FilingID)
		}
	}
	now := map[int64]string{}
	if len(ids) > 0 {
		filings, err := s.FilingReads.FindFilings(ctx, workflow.FilingFilter{IDs: ids, CarrierIDs: workflow.Scope(p)})
		if err != nil {
			return err
		}
		for _, f := range filings {
			now[f.ID] = f.State.Label()
		}
	}
	show := c.QueryParam("show")
	v := templates.InboxView{Page: s.page(c, "Inbox", "inbox")}
	for _, f := range inboxFilters {
		v.Filters = append(v.Filters, templates.Choice{Label: f.label, URL: "/inbox?show=" + f.key, Active: f.key == show})
	}
	for _, n := range notes {
		alert := strings.HasPrefix(n.Message, "Alert:") || strings.HasPrefix(n.Message, "Recovered:")
		switch {
		case show == "unread" && n.Read, show == "filings" && n.FilingID == nil, show == "alerts" && !alert:
			continue
		}
		row := templates.InboxRow{Message: n.Message, At: stamp(&n.At), Unread: !n.Read}
		if n.FilingID != nil {
			row.URL = fmt.Sprintf("/filings/%d", *n.FilingID)
			row.Now = now[*n.FilingID]
		}
		v.Rows = append(v.Rows, row)
	}
	return render(c, http.StatusOK, templates.Inbox(v))
}
