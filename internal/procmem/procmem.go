// Package procmem reads a process's memory as Linux reports it, and holds
// the bound serve's memory keeps under a Go memory limit: the load tool
// reports against it and a test in cmd/airside holds it.
package procmem

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// HeadroomMB is serve's memory outside the Go runtime's GOMEMLIMIT that
// the bound allows for: the binary, stacks, what the runtime cannot give
// back at once. It was about 80 MB at 500 listings (docs/benchmarks.md,
// "Memory after an ingest burst").
const HeadroomMB = 128

// BoundMB is the resident memory serve stays under with limitMB as its
// GOMEMLIMIT.
func BoundMB(limitMB float64) float64 { return limitMB + HeadroomMB }

// Resident is process pid's resident memory now and at its peak (VmRSS and
// VmHWM), in MB of 2^20 bytes.
func Resident(pid int) (rss, peak float64, err error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("process memory: %w", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		name, value, found := strings.Cut(line, ":")
		if !found {
			continue
		}
		var kb float64
		if _, err := fmt.Sscanf(strings.TrimSpace(value), "%f kB", &kb); err != nil {
			continue
		}
		switch name {
		case "VmRSS":
			rss = kb / 1024
		case "VmHWM":
			peak = kb / 1024
		}
	}
	if rss == 0 {
		return 0, 0, fmt.Errorf("process memory: no VmRSS for process %d", pid)
	}
	return rss, peak, nil
}

// ParseLimit reads a GOMEMLIMIT given in MiB or GiB ("512MiB", "1GiB") as
// MB of 2^20 bytes.
func ParseLimit(limit string) (float64, error) {
	for suffix, scale := range map[string]float64{"MiB": 1, "GiB": 1024} {
		if n, ok := strings.CutSuffix(limit, suffix); ok {
			v, err := strconv.ParseFloat(n, 64)
			return v * scale, err
		}
	}
	return 0, fmt.Errorf("a limit in MiB or GiB: %q", limit)
}
