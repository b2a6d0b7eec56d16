package catalogue

import (
	"context"
	"fmt"
	"regexp"
	"time"
)

// ProjectMinute is one API project's minute on one listing, as a gateway
// reports it for the projection's replay of the rates routing learned: the
// gateway learns cache-hit rates and the output ratio per project (seed
// 001; traffic.Learn), so two projects of one model, one resending long
// prompts and one never, are elected on different rates and may go to
// different listings. Project is a pseudonym the gateway keys itself
// ("prj-" and 12 hex digits), the same for every listing so the portal can
// join a project's minutes across carriers; no page shows it, and it never
// equals an organisation's pseudonym (those are keyed per carrier).
type ProjectMinute struct {
	Project   string    `json:"project"`
	ListingID int64     `json:"listingId"`
	Minute    time.Time `json:"minute"`
	Source    string    `json:"source,omitempty"`
	// Answers counts the project's requests the listing answered in full,
	// the token counts are theirs (cached input counted within input, a
	// read of the explicit cache as cached), and ResponseCacheHits the
	// requests the gateway answered from its own cache with the listing's
	// answer: an hour holding any teaches nothing (traffic.Learn).
	Answers           int64 `json:"answers"`
	InputTokens       int64 `json:"inputTokens"`
	CachedInputTokens int64 `json:"cachedInputTokens"`
	OutputTokens      int64 `json:"outputTokens"`
	ResponseCacheHits int64 `json:"responseCacheHits,omitempty"`
	// CacheHitRate and CacheOutputRatio are the project's declared rates
	// (seed 001's Enterprise overrides, in the gateway's configuration),
	// which its elections take before anything learned; nil, none declared.
	CacheHitRate     *float64 `json:"cacheHitRate,omitempty"`
	CacheOutputRatio *float64 `json:"cacheOutputRatio,omitempty"`
	// Model is the listing's model, filled by the ingest (not posted).
	Model string `json:"-"`
}

// ProjectHour is an API project's hour on one listing, every source's
// minutes summed (the store keeps them as minutes are reported): what the
// projection learns the project's rates from.
type ProjectHour struct {
	Project                                                                  string
	ListingID                                                                int64
	Model                                                                    string
	Hour                                                                     time.Time
	Answers, InputTokens, CachedInputTokens, OutputTokens, ResponseCacheHits int64
	// CacheHitRate and CacheOutputRatio are the rates the project declared
	// in the hour's last reported minute (ProjectMinute): nil, none.
	CacheHitRate, CacheOutputRatio *float64
}

// MaxProjectMinutes bounds one report of projects' minutes.
const MaxProjectMinutes = 10000

// MaxDeclaredOutputRatio bounds a declared cache output ratio (output
// tokens per uncached input token) a report may carry: past it no election
// moves, and a larger figure is a gateway's mistake.
const MaxDeclaredOutputRatio = 1000

var projectLabel = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)

// ValidProjectLabel reports a project pseudonym as reports carry it: 1 to
// 64 lower-case letters, digits and "-", starting with a letter or digit.
func ValidProjectLabel(s string) bool { return projectLabel.MatchString(s) }

// Check names the first problem of a reported row, as field and message;
// now bounds its minute as for buckets.
func (p *ProjectMinute) Check(now time.Time) (field, problem string) {
	switch {
	case !ValidProjectLabel(p.Project):
		return "project", "1 to 64 lower-case letters, digits and - (a pseudonym, starting with a letter or digit)"
	case p.ListingID <= 0:
		return "listingId", "a listing id"
	case p.Minute.IsZero() || !p.Minute.Equal(p.Minute.Truncate(time.Minute)):
		return "minute", "the start of a minute (RFC 3339, no seconds)"
	case p.Minute.After(now.Add(MaxBucketAhead)):
		return "minute", "not in the future"
	case p.Minute.Before(now.Add(-MaxBucketAge)):
		return "minute", fmt.Sprintf("within the last %s", MaxBucketAge)
	case len(p.Source) > 200:
		return "source", "at most 200 characters"
	case p.Answers < 0 || p.InputTokens < 0 || p.CachedInputTokens < 0 || p.OutputTokens < 0 || p.ResponseCacheHits < 0:
		return "answers", "counts of 0 or more"
	case p.Answers > MaxBucketValue || p.InputTokens > MaxBucketValue || p.OutputTokens > MaxBucketValue || p.ResponseCacheHits > MaxBucketValue:
		return "answers", fmt.Sprintf("counts of at most %d", MaxBucketValue)
	case p.CachedInputTokens > p.InputTokens:
		return "cachedInputTokens", "at most the input tokens (they are counted within them)"
	case p.CacheHitRate != nil && !(*p.CacheHitRate >= 0 && *p.CacheHitRate <= 1):
		return "cacheHitRate", "a rate from 0 to 1"
	case p.CacheOutputRatio != nil && !(*p.CacheOutputRatio >= 0 && *p.CacheOutputRatio <= MaxDeclaredOutputRatio):
		return "cacheOutputRatio", fmt.Sprintf("a ratio from 0 to %d", MaxDeclaredOutputRatio)
	}
	return "", ""
}

// ProjectStore keeps reported projects' minutes (the store's
// RecordProjectMinutes).
type ProjectStore interface {
	RecordProjectMinutes(ctx context.Context, rows []ProjectMinute) (int, error)
}

// RecordProjectMinutes checks a gateway's report of projects' minutes whole
// (each row a listing the catalogue knows, a minute the portal takes, a
// project once per listing, minute and source), naming problems by row and
// field, fills each row's model, and stores it with the store given: the
// first report of a key stands (a retry adds nothing). It returns how many
// rows were new.
func (in *Ingest) RecordProjectMinutes(ctx context.Context, st ProjectStore, rows []ProjectMinute) (int, error) {
	type key struct {
		listing         int64
		minute          int64
		source, project string
	}
	index, err := checkReport(ctx, in, "projects", MaxProjectMinutes, rows, func(p *ProjectMinute) (int64, key) {
		return p.ListingID, key{p.ListingID, p.Minute.Unix(), p.Source, p.Project}
	}, (*ProjectMinute).Check, "project", "a project's minute on a listing once per source in a report")
	if err != nil {
		return 0, err
	}
	for i := range rows {
		rows[i].Model, _ = index.modelOf(rows[i].ListingID)
	}
	n, err := st.RecordProjectMinutes(ctx, rows)
	if err != nil {
		return 0, fmt.Errorf("record projects' minutes: %w", err)
	}
	return n, nil
}
