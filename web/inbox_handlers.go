package web

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/templates"
)

// inboxLimit is how many of the latest messages the inbox shows.
const inboxLimit = 200

func (s *Server) handleInbox(c echo.Context) error {
	notes, err := s.Filings.Inbox(c.Request().Context(), principal(c), inboxLimit)
	if err != nil {
		return err
	}
	v := templates.InboxView{Page: s.page(c, "Inbox", "inbox")}
	for _, n := range notes {
		row := templates.InboxRow{Message: n.Message, At: stamp(&n.At), Unread: !n.Read}
		if n.FilingID != nil {
			row.URL = fmt.Sprintf("/filings/%d", *n.FilingID)
		}
		v.Rows = append(v.Rows, row)
	}
	return render(c, http.StatusOK, templates.Inbox(v))
}
