package web

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/internal/catalogue"
	"github.com/airside/airside/internal/fare"
	"github.com/airside/airside/internal/preflight"
	"github.com/airside/airside/internal/workflow"
	"github.com/airside/airside/templates"
)

func (s *Server) handleVerifyCapability(c echo.Context) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	capability, state := c.FormValue("capability"), c.FormValue("state")
	seen, _ := strconv.ParseInt(c.FormValue("seen_revision"), 10, 64)
	if err := s.Filings.VerifyCapability(c.Request().Context(), principal(c), id, capability, state, c.FormValue("note"), seen); err != nil {
		msg := strings.Join(mapValues(apperr.FieldErrors(err)), " ")
		switch apperr.Code(err) {
		case apperr.ECONFLICT:
			msg = apperr.Message(err)
		case apperr.EINVALID:
		default:
			return err
		}
		if ferr := s.setFlash(c, "%s", msg); ferr != nil {
			return ferr
		}
		return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/listings/%d", id))
	}
	if err := s.setFlash(c, "Capability %s marked %s.", capability, state); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/listings/%d", id))
}

// verifyRows lists the capabilities declared in a listing's published fare or
// its filing in flight, with their verification state.
func verifyRows(l *catalogue.Listing, inFlight *workflow.Filing, checks map[string]string, overrides map[string]workflow.Override,
	probes map[string]preflight.Result) []templates.VerifyRow {
	seen := map[string]bool{}
	var rows []templates.VerifyRow
	for _, f := range []*fare.Fare{l.Published, filingFare(inFlight)} {
		if f == nil {
			continue
		}
		for _, flag := range f.Capabilities {
			name := flag.String()
			if seen[name] {
				continue
			}
			seen[name] = true
			state := checks[name]
			if state == "" {
				state = "not verified yet"
			}
			row := templates.VerifyRow{Capability: name, Label: strings.ReplaceAll(name, "_", " "), State: state, Probe: "not probed yet"}
			var probed preflight.Result
			if probe, ok := preflight.ForCapability(name); ok {
				if r, ok := probes[probe.Name]; ok {
					probed = r
					row.Probe = string(r.State) + ", " + ago(r.At, l.CreatedAt) + ": " + firstOf(r.Error, r.Excerpt)
				}
			}
			if o, ok := overrides[name]; ok {
				contradicted := o.State == workflow.CapabilityVerified && !o.Expired && probed.State == preflight.Failed && probed.At.After(o.At)
				row.Override = overrideText(o, contradicted)
			}
			rows = append(rows, row)
		}
	}
	return rows
}

func filingFare(f *workflow.Filing) *fare.Fare {
	if f == nil {
		return nil
	}
	return f.Fare
}

// overrideText says who overrode a verdict, when, why, until when it counts
// (or that it no longer does), and whether a later probe contradicts it.
func overrideText(o workflow.Override, contradicted bool) string {
	by := o.By
	if by == "" {
		by = "a reviewer"
	}
	text := fmt.Sprintf("%s by %s on %s", o.State, by, o.At.UTC().Format("2006-01-02"))
	if o.Note != "" {
		text += " (" + o.Note + ")"
	}
	if o.Expired {
		return text + "; expired on " + o.Until.UTC().Format("2006-01-02") + ": the probes decide again"
	}
	text += "; counts until " + o.Until.UTC().Format("2006-01-02")
	if contradicted {
		text += ". Contradicted: the probe failed after this override; check the endpoint"
	}
	return text
}
