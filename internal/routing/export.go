package routing

import (
	"fmt"

	"github.com/airside/airside/internal/export"
	"github.com/airside/airside/internal/workflow"
)

// The export formats (internal/export).
const (
	ExportOpenRouter = "openrouter"
	ExportLiteLLM    = "litellm"
)

// Export is the published catalogue in another tool's shape, encoded once
// per revision (it carries fares and verified capabilities, no health): the
// same snapshot the catalogue is served from.
func (s *Snapshot) Export(format string) (Body, error) {
	if format != ExportOpenRouter && format != ExportLiteLLM {
		return Body{}, fmt.Errorf("export: no format %q", format)
	}
	// The fares cache is keyed by model slug; a colon is in no slug.
	return s.base.fares.get("export:"+format, func() (Body, error) {
		listings := make([]export.Listing, 0, len(s.order))
		for _, l := range s.order {
			e := export.Listing{Listing: l}
			for _, flag := range l.Published.Capabilities {
				if s.base.checks[l.ID][flag.String()] == workflow.CapabilityVerified {
					e.Verified = append(e.Verified, flag)
				}
			}
			listings = append(listings, e)
		}
		if format == ExportOpenRouter {
			return encode(export.OpenRouter(listings))
		}
		return encode(export.LiteLLM(listings))
	})
}
