package gateway

import (
	"sort"
	"time"

	"github.com/airside/airside/internal/traffic"
)

// projectMinuteKey is one API project's minute on one listing.
type projectMinuteKey struct {
	project string
	listing int64
	minute  time.Time
}

// ProjectMinute is a closed minute of an API project (by its name: the
// reporter names it to the portal under its pseudonym) on a listing: the
// answers and tokens routing learned the project's rates from, and the
// answers the gateway gave from its own cache.
type ProjectMinute struct {
	Project   string
	ListingID int64
	Minute    time.Time
	traffic.Hour
}

// projectMinute is the project's minute on route's listing (mu held).
func (r *Recorder) projectMinute(project string, route Route, at time.Time) *traffic.Hour {
	k := projectMinuteKey{project, route.ListingID, at.UTC().Truncate(time.Minute)}
	if r.projects == nil {
		r.projects = map[projectMinuteKey]*traffic.Hour{}
	}
	h := r.projects[k]
	if h == nil {
		h = &traffic.Hour{Start: k.minute, Candidate: route.ID}
		r.projects[k] = h
	}
	return h
}

// TakeClosedProjects removes and returns the projects' minutes that ended
// before until, in time order (then project and listing).
func (r *Recorder) TakeClosedProjects(until time.Time) []ProjectMinute {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []ProjectMinute
	for k, h := range takeClosed(r.projects, func(k projectMinuteKey) time.Time { return k.minute }, until) {
		out = append(out, ProjectMinute{Project: k.project, ListingID: k.listing, Minute: k.minute, Hour: h})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		switch {
		case !a.Minute.Equal(b.Minute):
			return a.Minute.Before(b.Minute)
		case a.Project != b.Project:
			return a.Project < b.Project
		}
		return a.ListingID < b.ListingID
	})
	return out
}
