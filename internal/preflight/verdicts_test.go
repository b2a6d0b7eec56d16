package preflight

import (
	"maps"
	"testing"
	"time"
)

func TestTheVerdictRule(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	const freshness, overrideFor = 7 * 24 * time.Hour, 30 * 24 * time.Hour
	var tools, vision string
	for _, p := range Probes {
		switch p.Capability {
		case "tools":
			tools = p.Name
		case "vision":
			vision = p.Name
		}
	}
	if tools == "" || vision == "" {
		t.Fatal("no tools or vision probe in the table")
	}
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	for _, test := range []struct {
		name      string
		probes    []ProbeOutcome
		overrides []Override
		want      map[string]string // listing 1's verdicts
	}{
		{"no probe: no verdict", nil, nil, map[string]string{}},
		{"a pass verifies", []ProbeOutcome{{1, tools, Passed, ago(time.Hour)}}, nil, map[string]string{"tools": VerdictVerified}},
		{"the latest probe wins, in any order", []ProbeOutcome{{1, tools, Failed, ago(time.Hour)}, {1, tools, Passed, ago(2 * time.Hour)}}, nil,
			map[string]string{"tools": VerdictFailed}},
		{"a stale probe counts for nothing", []ProbeOutcome{{1, tools, Passed, ago(freshness + time.Minute)}}, nil, map[string]string{}},
		{"an unfinished probe counts for nothing", []ProbeOutcome{{1, tools, Running, ago(time.Minute)}}, nil, map[string]string{}},
		{"a probe of no capability counts for nothing", []ProbeOutcome{{1, "no-such-probe", Passed, ago(time.Minute)}}, nil, map[string]string{}},
		{"a live override beats the probe", []ProbeOutcome{{1, vision, Failed, ago(time.Minute)}},
			[]Override{{1, "vision", VerdictVerified, ago(24 * time.Hour)}}, map[string]string{"vision": VerdictVerified}},
		{"an expired override leaves the probe", []ProbeOutcome{{1, vision, Failed, ago(time.Minute)}},
			[]Override{{1, "vision", VerdictVerified, ago(overrideFor + time.Hour)}}, map[string]string{"vision": VerdictFailed}},
		{"another listing's probe is its own", []ProbeOutcome{{2, tools, Passed, ago(time.Minute)}}, nil, map[string]string{}},
	} {
		got := Verdicts(test.probes, test.overrides, now, freshness, overrideFor)[1]
		if got == nil {
			got = map[string]string{}
		}
		if !maps.Equal(got, test.want) {
			t.Errorf("%s: %v, want %v", test.name, got, test.want)
		}
	}
}
