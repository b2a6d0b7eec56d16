package gateway

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestAGatewayHoldsEveryListingsCredentials: the credentials of every
// listing of the table are read as soon as the table names them, so a
// portal that goes away afterwards leaves each listing routable (read on a
// listing's first request, as before, the two never served could not be).
func TestAGatewayHoldsEveryListingsCredentials(t *testing.T) {
	h := newHarness(t, threeCarriers()...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go h.gw.Creds.Keep(ctx, h.gw.Follower, h.gw.Log, time.Second)
	deadline := time.Now().Add(time.Minute)
	for {
		h.gw.Creds.mu.Lock()
		held := len(h.gw.Creds.keys)
		h.gw.Creds.mu.Unlock()
		if held == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 3 listings' credentials held", held)
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.portal.mu.Lock()
	h.portal.down = true
	h.portal.mu.Unlock()
	for _, slug := range []string{"a", "b", "c"} {
		body := `{"model":"` + slug + `/m","messages":[{"role":"user","content":"hello"}]}`
		if res := h.chat(body, "x-no-fallback", "true"); res.status != 200 {
			t.Errorf("%s/m with the portal away: %d %s", slug, res.status, res.body)
		}
	}
	wantChats(t, h, map[string]int{"a": 1, "b": 1, "c": 1})
}

// TestCredentialsSayWhichListingsCannotBeRouted: with the portal away
// before they were read, Missing names every listing.
func TestCredentialsSayWhichListingsCannotBeRouted(t *testing.T) {
	h := newHarness(t, threeCarriers()...)
	h.portal.mu.Lock()
	h.portal.down = true
	h.portal.mu.Unlock()
	if got, _ := h.gw.Creds.hold(context.Background(), h.gw.Follower.Current()); !reflect.DeepEqual(got, []string{"a/m", "b/m", "c/m"}) {
		t.Errorf("missing %v, want every listing", got)
	}
	h.portal.mu.Lock()
	h.portal.down = false
	h.portal.mu.Unlock()
	if got, _ := h.gw.Creds.hold(context.Background(), h.gw.Follower.Current()); len(got) != 0 || len(h.gw.Creds.Missing()) != 0 {
		t.Errorf("missing %v once the portal is back", got)
	}
}

// restarted is a gateway started afresh on the harness's portal and
// carriers (a new follower and credentials), restored from dir's snapshot
// sealed under token, its follower and credentials running.
func (h *harness) restarted(t *testing.T, dir, token string) (*Gateway, *httptest.Server, time.Time, error) {
	t.Helper()
	snap, err := OpenSnapshot(dir, token)
	if err != nil {
		t.Fatal(err)
	}
	api := h.gw.Follower.API
	g := &Gateway{Config: h.gw.Config, Follower: &Follower{API: api, Log: h.gw.Log, Wait: time.Second}, Creds: &Credentials{API: api, Snapshot: snap},
		Recorder: NewRecorder(), HTTP: &http.Client{}, Now: h.clock, Rand: rand.New(rand.NewPCG(1, 2)), Log: h.gw.Log}
	saved, err := snap.Restore(g.Follower, g.Creds)
	ctx, cancel := context.WithCancel(context.Background())
	followed, kept := make(chan struct{}), make(chan struct{})
	// Stopped and waited for before the folder goes: Keep writes the
	// snapshot into it.
	t.Cleanup(func() { cancel(); <-followed; <-kept })
	go func() { g.Follower.Run(ctx); close(followed) }()
	go func() { g.Creds.Keep(ctx, g.Follower, h.gw.Log, time.Second); close(kept) }()
	srv := httptest.NewServer(g.Handler())
	t.Cleanup(srv.Close)
	return g, srv, saved, err
}

func (h *harness) portalDown(down bool) {
	h.portal.mu.Lock()
	h.portal.down = down
	h.portal.mu.Unlock()
}

func chatFor(t *testing.T, base, model string) int {
	t.Helper()
	body := `{"model":"` + model + `","messages":[{"role":"user","content":"hello"}]}`
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+projectKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-No-Fallback", "true")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// TestAGatewayRestartedWhileThePortalIsAwayRoutes: a gateway keeps its
// table and the credentials it holds in a sealed snapshot; restarted with
// the portal away, it routes every listing of that table (before the
// snapshot it answered 503 "no catalogue read yet" to everything). The
// file shows no key in clear, and another token cannot open it.
func TestAGatewayRestartedWhileThePortalIsAwayRoutes(t *testing.T) {
	h := newHarness(t, threeCarriers()...)
	dir := t.TempDir()
	snap, err := OpenSnapshot(dir, "token-1")
	if err != nil {
		t.Fatal(err)
	}
	h.gw.Creds.Snapshot = snap
	ctx, cancel := context.WithCancel(context.Background())
	kept := make(chan struct{})
	go func() { h.gw.Creds.Keep(ctx, h.gw.Follower, h.gw.Log, time.Second); close(kept) }()
	waitUntil(t, "the snapshot to be saved", func() bool { _, err := os.Stat(snap.Path()); return err == nil })
	cancel()
	<-kept // it writes no more into the folder
	raw, _ := os.ReadFile(snap.Path())
	for _, secret := range []string{"key-a", "key-b", "key-c", `"catalogue"`} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("the snapshot shows %q in clear", secret)
		}
	}
	if info, _ := os.Stat(snap.Path()); info.Mode().Perm() != 0o600 {
		t.Errorf("the snapshot's mode is %v, want 0600", info.Mode().Perm())
	}

	h.portalDown(true)
	g, srv, saved, err := h.restarted(t, dir, "token-1")
	if err != nil || saved.IsZero() {
		t.Fatalf("restore: %v (saved %v)", err, saved)
	}
	if !g.Follower.Restored() || g.Follower.Current().Revision != h.gw.Follower.Current().Revision {
		t.Fatalf("restored %v, revision %d", g.Follower.Restored(), g.Follower.Current().Revision)
	}
	for _, model := range []string{"a/m", "b/m", "c/m"} {
		if status := chatFor(t, srv.URL, model); status != http.StatusOK {
			t.Errorf("%s routed by the restarted gateway with the portal away: %d", model, status)
		}
	}
	wantChats(t, h, map[string]int{"a": 1, "b": 1, "c": 1})
	res, err := http.Get(srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), "saved snapshot") {
		t.Errorf("healthz %d %q: want 200 saying the table is the saved snapshot's", res.StatusCode, body)
	}

	// Another token (rotated, or another gateway's) opens nothing: the
	// gateway starts as before, waiting for the portal.
	other, _, _, err := h.restarted(t, dir, "token-2")
	if err == nil || other.Follower.Current() != nil {
		t.Errorf("a snapshot opened under another token: err %v", err)
	}
	// The portal back: the restored gateway reads it and says so.
	h.portalDown(false)
	waitUntil(t, "the restored gateway to read the portal", func() bool { return !g.Follower.Restored() })
}

// TestARestoredGatewaySaysWhichListingsItCannotRoute: a snapshot saved
// before c's credentials were read restores a and b only; with the portal
// away, c is named as missing (log, /healthz) and not routed, a and b are.
func TestARestoredGatewaySaysWhichListingsItCannotRoute(t *testing.T) {
	h := newHarness(t, threeCarriers()...)
	dir := t.TempDir()
	snap, err := OpenSnapshot(dir, "token-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, fetched := h.gw.Creds.hold(context.Background(), h.gw.Follower.Current()); fetched != 3 {
		t.Fatalf("read %d credentials, want 3", fetched)
	}
	var partial []savedCredential
	for _, c := range h.gw.Creds.held() {
		if c.ListingID != 3 {
			partial = append(partial, c)
		}
	}
	if err := snap.save(h.gw.Follower.Current(), partial, time.Now()); err != nil {
		t.Fatal(err)
	}
	h.portalDown(true)
	g, srv, _, err := h.restarted(t, dir, "token-1")
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the missing credentials to be named", func() bool { return len(g.Creds.Missing()) > 0 })
	if got := g.Creds.Missing(); !reflect.DeepEqual(got, []string{"c/m"}) {
		t.Errorf("missing %v, want [c/m]", got)
	}
	for model, want := range map[string]int{"a/m": 200, "b/m": 200} {
		if status := chatFor(t, srv.URL, model); status != want {
			t.Errorf("%s: %d, want %d", model, status, want)
		}
	}
	if status := chatFor(t, srv.URL, "c/m"); status == http.StatusOK {
		t.Error("c/m was routed without its credentials")
	}
	res, err := http.Get(srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), "without credentials: c/m") {
		t.Errorf("healthz %q does not name c/m", body)
	}
}
