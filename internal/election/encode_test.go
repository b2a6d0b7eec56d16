package election_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/airside/airside/internal/election"
)

// reflectJSON is the result through encoding/json and the Report types: the
// reference the hand-written encoder must match byte for byte.
func reflectJSON(r election.Result) ([]byte, error) {
	rep := election.Report{CacheRelevant: r.CacheRelevant, FellOpen: r.FellOpen, Weights: election.ReportWeights(r.Weights),
		Candidates: make([]json.RawMessage, len(r.Candidates))}
	if r.Winner >= 0 {
		id := r.Candidates[r.Winner].ID
		rep.Winner = &id
	}
	for i := range r.Candidates {
		o := &r.Candidates[i]
		var v any = election.ReportExcluded{ID: o.ID, Excluded: o.Excluded.Reasons()}
		if o.Eligible {
			rc := election.ReportCandidate{ID: o.ID, Eligible: true, Excluded: []string{}, HitRate: o.HitRate, OutputRatio: o.OutputRatio,
				InputPrice: o.Prices.Input, OutputPrice: o.Prices.Output, TokenPrice: o.TokenPrice, FareFactor: o.FareFactor,
				RoutingPrice: o.RoutingPrice, Factors: election.ReportWeights(o.Factors), UptimePenalty: o.UptimePenalty,
				PriorityPenalty: o.PriorityPenalty, Score: o.Score, Rank: o.Rank}
			if o.Prices.HasCachedInput {
				cached := o.Prices.CachedInput
				rc.CachedInputPrice = &cached
			}
			v = rc
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		rep.Candidates[i] = raw
	}
	return json.Marshal(rep)
}

func TestEncoderMatchesEncodingJSON(t *testing.T) {
	for _, size := range []uint8{0, 1, 5, 40, 200} {
		for seed := range uint64(20) {
			b := randomBallot(seed, size)
			for i := range b.Candidates {
				if i%4 == 0 {
					b.Candidates[i].ID = fmt.Sprintf("odd <&> \"id\"\\ \u2028 \x01 é %d", i)
				}
			}
			res := election.Elect(&b)
			got, err1 := json.Marshal(res)
			want, err2 := reflectJSON(res)
			if (err1 == nil) != (err2 == nil) {
				t.Fatalf("errors differ: %v / %v", err1, err2)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("size %d seed %d:\n got %s\nwant %s", size, seed, got, want)
			}
		}
	}
}

func BenchmarkEncodeResult(b *testing.B) {
	ballot := benchBallot(10)
	res := election.Elect(&ballot)
	b.Run("hand-written", func(b *testing.B) {
		buf := make([]byte, 0, 8192)
		b.ReportAllocs()
		for b.Loop() {
			buf, _ = res.AppendJSON(buf[:0])
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = reflectJSON(res)
		}
	})
}

// TestWinnerJSONMatchesEncodingJSON: the winner-only answer is written as
// encoding/json writes it (numbers like ES6, strings HTML-safe), byte for byte.
func TestWinnerJSONMatchesEncodingJSON(t *testing.T) {
	for _, test := range []struct {
		id    string
		score float64
	}{{"", 0}, {"nebula/kimi-k2.5", 0.4123456789}, {"a/b", 1e-7}, {"a/b", 123456789}, {"ö<&>\u2028/x", 0}} {
		got, err := election.AppendWinnerJSON(nil, test.id, test.score)
		if err != nil {
			t.Fatal(err)
		}
		var ref struct {
			Winner *string  `json:"winner"`
			Score  *float64 `json:"score"`
		}
		if test.id != "" {
			ref.Winner, ref.Score = &test.id, &test.score
		}
		want, _ := json.Marshal(ref)
		if !bytes.Equal(got, want) {
			t.Errorf("%q %v: wrote %s, encoding/json %s", test.id, test.score, got, want)
		}
	}
}
