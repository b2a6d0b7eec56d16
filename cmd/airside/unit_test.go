package main

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// TestTheSystemdUnitIsHardened: systemd-analyze rates the units we ship at
// "OK" or better (an exposure under 5, 10 the worst) and verifies it. With
// CI=true a missing systemd-analyze fails (.ci/run installs it).
func TestTheSystemdUnitIsHardened(t *testing.T) {
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("systemd-analyze is not installed (apt-get install systemd)")
		}
		t.Skip("systemd-analyze is not installed")
	}
	for _, unit := range []string{"airside", "airside-gateway"} {
		out, err := exec.Command("systemd-analyze", "security", "--offline=true", "../../docs/deploy/"+unit+".service").CombinedOutput()
		if err != nil {
			t.Fatalf("systemd-analyze security %s: %v\n%s", unit, err, out)
		}
		m := regexp.MustCompile(`Overall exposure level for ` + regexp.QuoteMeta(unit) + `\.service: ([\d.]+) (\w+)`).FindSubmatch(out)
		if m == nil {
			t.Fatalf("no overall rating for %s in:\n%s", unit, out)
		}
		level, _ := strconv.ParseFloat(string(m[1]), 64)
		if level >= 2 || string(m[2]) != "OK" && string(m[2]) != "SAFE" && string(m[2]) != "PERFECT" {
			t.Errorf("%s is rated %s %s, want OK or better (under 2 as shipped)", unit, m[1], m[2])
		}
	}
}
