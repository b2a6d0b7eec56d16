package preflight

import "time"

// RunState is where a preflight run is.
type RunState string

// The run states.
const (
	RunQueued  RunState = "queued"
	RunRunning RunState = "running"
	RunDone    RunState = "done"
)

// Job is a claimed run: what the worker needs to probe.
type Job struct {
	RunID      int64
	ListingID  int64
	CarrierID  int64
	EndpointID int64
	BaseURL    string
	Model      string
	KeySealed  string
}

// Run is one preflight of one endpoint, with its probes' results.
type Run struct {
	ID         int64
	ListingID  int64
	EndpointID int64
	Reason     string
	State      RunState
	CreatedAt  time.Time
	FinishedAt *time.Time
	Results    map[string]Result
}

// Passed reports whether a run's probe passed.
func (r *Run) Passed(probe string) bool { return r != nil && r.Results[probe].State == Passed }

// Busy reports whether the run is still queued or running.
func (r *Run) Busy() bool { return r != nil && r.State != RunDone }
