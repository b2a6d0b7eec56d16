package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestEachGatewayProcessReportsUnderItsOwnIdentity: two processes of one
// gateway name (a restart) report under different sources with the name
// in common, so the portal adds their parts of a minute.
func TestEachGatewayProcessReportsUnderItsOwnIdentity(t *testing.T) {
	a, b := reportSource("gw-eu-1", ":8081"), reportSource("gw-eu-1", ":8081")
	shape := regexp.MustCompile(`^gw-eu-1/[0-9a-f]{8}$`)
	if !shape.MatchString(a) || !shape.MatchString(b) || a == b {
		t.Errorf("sources %q and %q: want gw-eu-1/ and an instance id of each its own", a, b)
	}
	if d := reportSource("", "127.0.0.1:8081"); !strings.Contains(d, ":8081/") {
		t.Errorf("the default source %q does not name the port", d)
	}
}
