package web

// HoursProjectedForTest is how many hours this server has projected.
func (s *Server) HoursProjectedForTest() int64 { return s.hoursProjected.Load() }
