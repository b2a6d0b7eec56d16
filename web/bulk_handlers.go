package web

import (
	"bytes"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/templates"
)

func (s *Server) bulkView(c echo.Context) (templates.BulkView, error) {
	p := principal(c)
	if len(p.Memberships) == 0 {
		return templates.BulkView{}, apperr.Errorf(apperr.EFORBIDDEN, "Gateway staff review filings; carriers file them.")
	}
	names := make([]string, len(p.Memberships))
	for i, m := range p.Memberships {
		names[i] = m.Carrier.Name
	}
	return templates.BulkView{Page: s.page(c, "Bulk filing", "listings"), Header: strings.Join(fare.CSVHeader, ","),
		CarrierName: strings.Join(names, ", ")}, nil
}

func (s *Server) handleBulkForm(c echo.Context) error {
	v, err := s.bulkView(c)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, templates.Bulk(v))
}

func (s *Server) handleBulkUpload(c echo.Context) error {
	v, err := s.bulkView(c)
	if err != nil {
		return err
	}
	header, err := c.FormFile("file")
	if err != nil {
		v.RowErrors = []templates.BulkError{{Row: 0, Column: "file", Msg: "Choose a CSV file to upload."}}
		return render(c, http.StatusUnprocessableEntity, templates.Bulk(v))
	}
	file, err := header.Open()
	if err != nil {
		return err
	}
	defer file.Close()
	rows, problems := fare.ReadCSV(file)
	// Every problem of the file in one pass: the rows are checked even when
	// reading it found some.
	res, err := s.Filings.FileBulkChecked(c.Request().Context(), principal(c), rows, problems)
	if err != nil {
		return err
	}
	problems = res.Problems
	if len(problems) > 0 {
		sort.SliceStable(problems, func(i, j int) bool {
			if problems[i].Row != problems[j].Row {
				return problems[i].Row < problems[j].Row
			}
			return problems[i].Column < problems[j].Column
		})
		seen := map[[2]string]bool{}
		for _, p := range problems {
			key := [2]string{strconv.Itoa(p.Row), p.Column}
			if seen[key] { // one message per cell: the first found is the most specific
				continue
			}
			seen[key] = true
			v.RowErrors = append(v.RowErrors, templates.BulkError{Row: p.Row, Column: p.Column, Msg: p.Msg})
		}
		return render(c, http.StatusUnprocessableEntity, templates.Bulk(v))
	}
	skipped := ""
	if res.Unchanged > 0 {
		skipped = fmt.Sprintf(" (%s unchanged from the published fare skipped)", templates.CountOf(res.Unchanged, "row", "rows"))
	}
	if err := s.setFlash(c, "Created %s from the file%s. Check them below and submit them together, or each from its page.",
		templates.CountOf(len(res.Created), "draft filing", "draft filings"), skipped); err != nil {
		return err
	}
	ids := make([]string, len(res.Created))
	for i, id := range res.Created {
		ids[i] = strconv.FormatInt(id, 10)
	}
	return c.Redirect(http.StatusSeeOther, "/filings?state=draft&batch="+strings.Join(ids, ","))
}

func (s *Server) handleBulkTemplate(c echo.Context) error {
	if _, err := s.bulkView(c); err != nil {
		return err
	}
	rows, err := s.Filings.BulkTemplate(c.Request().Context(), principal(c))
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := fare.WriteCSV(&buf, rows); err != nil {
		return err
	}
	c.Response().Header().Set("Content-Disposition", `attachment; filename="airside-fares.csv"`)
	return c.Blob(http.StatusOK, "text/csv; charset=utf-8", buf.Bytes())
}
