package catalogue

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/airside/airside/internal/apperr"
)

// OrgUsage is one customer organisation's minute on one listing, as a
// gateway reports it: what the carrier's per-organisation caps count and
// what it plans by. Organisation is the label the gateway's policy allows:
// by default a pseudonym stable for one carrier ("org-3f9a2c1b"), never the
// same for two carriers, so carriers cannot pool what they see; a gateway
// may report names instead.
type OrgUsage struct {
	ListingID    int64     `json:"listingId"`
	Minute       time.Time `json:"minute"`
	Source       string    `json:"source,omitempty"`
	Organisation string    `json:"organisation"`
	// Requests answered (a caller's own errors left out), of them Errors
	// failed for the listing's reasons, and the tokens of those served.
	Requests          int64 `json:"requests"`
	Errors            int64 `json:"errors"`
	InputTokens       int64 `json:"inputTokens"`
	CachedInputTokens int64 `json:"cachedInputTokens"`
	OutputTokens      int64 `json:"outputTokens"`
}

// MaxOrgUsage bounds one report of organisations' minutes.
const MaxOrgUsage = 10000

var orgLabel = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9 ._:-]{0,63}$`)

// Check names the first problem of a reported row, as field and message;
// now bounds its minute as for buckets.
func (u *OrgUsage) Check(now time.Time) (field, problem string) {
	switch {
	case u.ListingID <= 0:
		return "listingId", "a listing id"
	case u.Minute.IsZero() || !u.Minute.Equal(u.Minute.Truncate(time.Minute)):
		return "minute", "the start of a minute (RFC 3339, no seconds)"
	case u.Minute.After(now.Add(MaxBucketAhead)):
		return "minute", "not in the future"
	case u.Minute.Before(now.Add(-MaxBucketAge)):
		return "minute", fmt.Sprintf("within the last %s", MaxBucketAge)
	case len(u.Source) > 200:
		return "source", "at most 200 characters"
	case !orgLabel.MatchString(u.Organisation):
		return "organisation", "1 to 64 letters, digits, spaces and . _ : - (starting with a letter or digit)"
	case u.Requests < 0 || u.Errors < 0 || u.InputTokens < 0 || u.CachedInputTokens < 0 || u.OutputTokens < 0:
		return "requests", "counts of 0 or more"
	case u.Errors > u.Requests:
		return "errors", "at most the requests"
	case u.CachedInputTokens > u.InputTokens:
		return "cachedInputTokens", "at most the input tokens (they are counted within them)"
	}
	return "", ""
}

// OrgStore keeps reported organisations' minutes (the store's
// RecordOrgUsage).
type OrgStore interface {
	RecordOrgUsage(ctx context.Context, rows []OrgUsage) (int, error)
}

// RecordOrgUsage checks a gateway's report of organisations' minutes whole
// (each row a listing the catalogue knows, a minute the portal takes, an
// organisation once per listing, minute and source), naming problems by
// row and field, and stores it with the store given: the first report of
// a key stands (a retry adds nothing). It returns how many rows were new.
func (in *Ingest) RecordOrgUsage(ctx context.Context, st OrgStore, rows []OrgUsage) (int, error) {
	type key struct {
		listing      int64
		minute       int64
		source, name string
	}
	_, err := checkReport(ctx, in, "organisations", MaxOrgUsage, rows, func(u *OrgUsage) (int64, key) {
		return u.ListingID, key{u.ListingID, u.Minute.Unix(), u.Source, u.Organisation}
	}, (*OrgUsage).Check, "organisation", "an organisation's minute on a listing once per source in a report")
	if err != nil {
		return 0, err
	}
	n, err := st.RecordOrgUsage(ctx, rows)
	if err != nil {
		return 0, fmt.Errorf("record organisations' usage: %w", err)
	}
	return n, nil
}

// checkReport checks a gateway's per-minute report of rows on listings
// whole: 1 to most rows, each passing check, on a listing the catalogue
// knows, its key (of ident) once in the report, naming the first problem
// as name[i].field. It returns the index of the listings read.
func checkReport[T any, K comparable](ctx context.Context, in *Ingest, name string, most int, rows []T, ident func(*T) (int64, K),
	check func(*T, time.Time) (string, string), dupField, dupProblem string) (*ListingIndex, error) {
	if len(rows) == 0 || len(rows) > most {
		return nil, apperr.Invalid(map[string]string{name: fmt.Sprintf("send 1 to %d rows", most)})
	}
	ids := make([]PostedBucket, len(rows))
	for i := range rows {
		ids[i].ListingID, _ = ident(&rows[i])
	}
	index, err := in.index(ctx, ids)
	if err != nil {
		return nil, err
	}
	now := in.Now()
	seen := make(map[K]bool, len(rows))
	for i := range rows {
		listing, k := ident(&rows[i])
		field, problem := check(&rows[i], now)
		if _, ok := index.modelOf(listing); field == "" && !ok {
			field, problem = "listingId", "no listing has this id"
		}
		if field == "" && seen[k] {
			field, problem = dupField, dupProblem
		}
		if field != "" {
			return nil, apperr.Invalid(map[string]string{fmt.Sprintf("%s[%d].%s", name, i, field): problem})
		}
		seen[k] = true
	}
	return index, nil
}
