package main

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestSoakShort is the soak's short mode: 20 seconds of the mix, then the
// invariants. AIRSIDE_SOAK_DURATION changes the length.
func TestSoakShort(t *testing.T) {
	d := 20 * time.Second
	if v, err := time.ParseDuration(os.Getenv("AIRSIDE_SOAK_DURATION")); err == nil {
		d = v
	}
	report, err := Run(context.Background(), Config{Duration: d, Concurrency: 8})
	t.Log("\n" + report)
	if err != nil {
		t.Fatal(err)
	}
}
