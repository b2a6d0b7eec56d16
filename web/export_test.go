package web

import (
	"github.com/airside/airside/internal/alerting"
	"github.com/airside/airside/internal/preflight"
	"github.com/airside/airside/internal/routing"
	"github.com/airside/airside/internal/storefront"
	"github.com/airside/airside/internal/workflow"
)

// HoursProjectedForTest is how many hours this server has projected.
func (s *Server) HoursProjectedForTest() int64 { return s.Projector.HoursProjected() }

// MetricPointsReadForTest is how many rollup points this server has read
// from the store (an hour of a listing, or a total).
func (s *Server) MetricPointsReadForTest() int64 { return s.Projector.PointsRead() }

// The concrete services behind the handlers' interfaces, for tests that
// set them up (notice periods, clocks, draining a worker).
func (s *Server) KeeperForTest() *routing.Keeper      { return s.Routing.(*routing.Keeper) }
func (s *Server) FilingsForTest() *workflow.Service   { return s.Filings.(*workflow.Service) }
func (s *Server) PreflightForTest() *preflight.Worker { return s.Preflight.(*preflight.Worker) }
func (s *Server) MaintenanceForTest() *workflow.Maintenance {
	return s.Maintenance.(*workflow.Maintenance)
}
func (s *Server) HooksForTest() *alerting.Hooks          { return s.Hooks.(*alerting.Hooks) }
func (s *Server) StorefrontForTest() *storefront.Service { return s.Storefront.(*storefront.Service) }
func (s *Server) AlertsForTest() *alerting.Evaluator     { return s.Alerts.(*alerting.Evaluator) }
