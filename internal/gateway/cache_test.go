package gateway

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/airside/airside/internal/fleet"
	"github.com/airside/airside/internal/fleet/fleettest"
)

// TestTheResponseCacheIsBoundedInBytes: past its bound the oldest answers
// go, the newest stay, and an answer too large for it is not kept.
func TestTheResponseCacheIsBoundedInBytes(t *testing.T) {
	c := &ResponseCache{TTL: time.Hour, MaxBytes: 1600}
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	for i := range 20 {
		c.put("p", fmt.Appendf(nil, "request %d", i), []byte(strings.Repeat("x", 100)), Route{ID: "a/m", ListingID: 1}, now)
	}
	if c.Bytes() > 1600 {
		t.Errorf("%d bytes kept, bound 1600", c.Bytes())
	}
	if _, _, ok := c.get("p", []byte("request 0"), now); ok {
		t.Error("the oldest answer is still kept past the bound")
	}
	if _, _, ok := c.get("p", []byte("request 19"), now); !ok {
		t.Error("the newest answer is gone")
	}
	c.put("p", []byte("big"), []byte(strings.Repeat("x", 200)), Route{}, now) // over a sixteenth of the bound
	if _, _, ok := c.get("p", []byte("big"), now); ok {
		t.Error("an answer over a sixteenth of the bound was kept")
	}
}

// TestTheFleetSharesItsResponseCache: an answer kept by one replica is a
// hit on another (the carrier called once); the fleet's cache keeps its
// byte bound, dropping the oldest answers.
func TestTheFleetSharesItsResponseCache(t *testing.T) {
	client := fleettest.Redis(t)
	h := newHarness(t, threeCarriers()...)
	prefix := fleettest.Prefix(t, client)
	first, second := &fleet.State{Client: client, Prefix: prefix}, &fleet.State{Client: client, Prefix: prefix}
	h.gw.Fleet = first
	h.gw.Cache = &ResponseCache{TTL: time.Hour, Fleet: first}
	other, otherSrv := h.replicaGateway(t, second)
	other.Cache = &ResponseCache{TTL: time.Hour, Fleet: second}
	if res := h.chat(hello); res.status != 200 {
		t.Fatal(res.status)
	}
	req, _ := http.NewRequest(http.MethodPost, otherSrv.URL+"/v1/chat/completions", strings.NewReader(hello))
	req.Header.Set("Authorization", "Bearer "+projectKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.Header.Get(CacheHeader) != "hit" || res.Header.Get(ListingHeader) != "a/m" {
		t.Errorf("the other replica: cache %q, listing %q; want a hit from a/m", res.Header.Get(CacheHeader), res.Header.Get(ListingHeader))
	}
	wantChats(t, h, map[string]int{"a": 1})

	bounded := &ResponseCache{TTL: time.Hour, MaxBytes: 16 * 1024, Fleet: first}
	for i := range 100 {
		bounded.put("bound", fmt.Appendf(nil, "request %d", i), []byte(strings.Repeat("y", 900)), Route{ID: "a/m", ListingID: 1}, h.clock())
	}
	if n, err := first.AnswerBytes(); err != nil || n > 16*1024+int64(len(hello)) || n < 12*1024 {
		t.Errorf("the fleet's cache holds %d bytes (%v), want at most its bound of 16 KiB and near it", n, err)
	}
	if _, _, ok := bounded.get("bound", []byte("request 0"), h.clock()); ok {
		t.Error("the oldest answer is still in the fleet's cache past its bound")
	}
	if _, _, ok := bounded.get("bound", []byte("request 99"), h.clock()); !ok {
		t.Error("the newest answer is not in the fleet's cache")
	}
}
