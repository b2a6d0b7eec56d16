package web

// HoursProjectedForTest is how many hours this server has projected.
func (s *Server) HoursProjectedForTest() int64 { return s.Projector.HoursProjected() }

// MetricPointsReadForTest is how many rollup points this server has read
// from the store (an hour of a listing, or a total).
func (s *Server) MetricPointsReadForTest() int64 { return s.Projector.PointsRead() }
