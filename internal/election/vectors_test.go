package election_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/airside/airside/internal/election"
)

// vectorDirs are where worked examples live: the copy committed with the
// package, and the shared folder the spec is maintained in (when it is beside
// the repository), so a vector added there is run without copying it here.
var vectorDirs = []string{"testdata/vectors", "../../../shared/docs/vectors/election"}

type vector struct {
	Input    json.RawMessage `json:"input"`
	Expected json.RawMessage `json:"expected"`
}

func loadVectors(t *testing.T) map[string]vector {
	t.Helper()
	return loadVectorsFrom(t, vectorDirs, "*.json")
}

// loadVectorsFrom reads the vectors matching pattern in dirs, by file name
// (a name in two dirs is one vector).
func loadVectorsFrom(t *testing.T, dirs []string, pattern string) map[string]vector {
	t.Helper()
	vectors := map[string]vector{}
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var v vector
			if err := json.Unmarshal(data, &v); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			vectors[filepath.Base(file)] = v
		}
	}
	if len(vectors) == 0 {
		t.Fatal("no election vectors found")
	}
	return vectors
}

func TestVectors(t *testing.T) {
	vectors := loadVectors(t)
	names := make([]string, 0, len(vectors))
	for name := range vectors {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		v := vectors[name]
		t.Run(name, func(t *testing.T) {
			ballot, res := electVector(t, v)
			checkWinnerOnlyPaths(t, v, ballot, &res)
		})
	}
}

// checkWinnerOnlyPaths holds the gateway's winner-only paths to the
// vector: the same winner, and the compiled path the explaining path's
// score.
func checkWinnerOnlyPaths(t *testing.T, v vector, ballot *election.Ballot, res *election.Result) {
	t.Helper()
	var quick election.Result
	election.ElectWinnerInto(ballot, &quick)
	var want struct{ Winner *string }
	if err := json.Unmarshal(v.Expected, &want); err != nil {
		t.Fatal(err)
	}
	if w := quick.WinnerID(); want.Winner != nil && w != *want.Winner || want.Winner == nil && w != "" {
		t.Errorf("winner-only path elected %q, want %v", w, want.Winner)
	}
	usage := make([]election.Usage, len(ballot.Candidates))
	for i := range ballot.Candidates {
		usage[i] = ballot.Candidates[i].Usage
	}
	winner, score := election.Compile(ballot).Winner(&ballot.Request, usage)
	switch {
	case winner != res.Winner:
		t.Errorf("compiled path elected %d, the explaining path %d", winner, res.Winner)
	case winner >= 0 && score != res.Candidates[winner].Score:
		t.Errorf("compiled path scored the winner %v, the explaining path %v", score, res.Candidates[winner].Score)
	}
}

// compareJSON compares two JSON documents, numbers to 1e-9 relative, and
// returns a line per difference.
func compareJSON(t *testing.T, want, got []byte) []string {
	t.Helper()
	var w, g any
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	var diffs []string
	compareValue("$", w, g, &diffs)
	return diffs
}

func compareValue(path string, want, got any, diffs *[]string) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			*diffs = append(*diffs, fmt.Sprintf("%s: want object, got %v", path, got))
			return
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				*diffs = append(*diffs, fmt.Sprintf("%s.%s: missing", path, k))
				continue
			}
			compareValue(path+"."+k, wv, gv, diffs)
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			*diffs = append(*diffs, fmt.Sprintf("%s: want %v, got %v", path, want, got))
			return
		}
		for i := range w {
			compareValue(fmt.Sprintf("%s[%d]", path, i), w[i], g[i], diffs)
		}
	case float64:
		g, ok := got.(float64)
		if !ok || !closeEnough(w, g) {
			*diffs = append(*diffs, fmt.Sprintf("%s: want %v, got %v", path, want, got))
		}
	default:
		if want != got {
			*diffs = append(*diffs, fmt.Sprintf("%s: want %v, got %v", path, want, got))
		}
	}
}

func closeEnough(want, got float64) bool {
	diff := math.Abs(want - got)
	return diff <= 1e-9*math.Max(math.Abs(want), math.Abs(got)) || diff < 1e-12
}

// nextVectorDirs hold the worked examples of election.md's sections 7 and 8:
// share routing and the limits (share-*), and the market's attributes and
// the provider object (market-*).
var nextVectorDirs = []string{"testdata/vectors-next", "../../../shared/docs/vectors/election-next"}

func TestNextVectors(t *testing.T) {
	for name, v := range loadVectorsFrom(t, nextVectorDirs, "share-*.json") {
		t.Run(name, func(t *testing.T) { electVector(t, v) })
	}
	market := loadVectorsFrom(t, nextVectorDirs, "market-*.json")
	if len(market) == 0 {
		t.Fatal("no market-* vectors found")
	}
	for name, v := range market {
		t.Run(name, func(t *testing.T) {
			ballot, res := electVector(t, v)
			// The gateway elects market requests on its winner-only paths.
			checkWinnerOnlyPaths(t, v, ballot, &res)
		})
	}
}

// electVector elects a vector's input and reports every difference of its
// answer from the expected one.
func electVector(t *testing.T, v vector) (*election.Ballot, election.Result) {
	t.Helper()
	ballot, err := election.DecodeBallot(bytes.NewReader(v.Input))
	if err != nil {
		t.Fatalf("decode input: %v", err)
	}
	res := election.Elect(ballot)
	got, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if diffs := compareJSON(t, v.Expected, got); len(diffs) > 0 {
		for _, d := range diffs {
			t.Error(d)
		}
		t.Logf("got: %s", got)
	}
	return ballot, res
}
