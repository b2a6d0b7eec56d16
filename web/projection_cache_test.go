package web_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"github.com/airside/airside/cmd/airside/wire"
	"github.com/airside/airside/internal/demo"
	"github.com/airside/airside/internal/store"
)

// TestTheProjectionCacheChangesNothing: the hours a traffic page projects
// that can no longer change are kept per model and revision; a page read
// with them kept, and later carried on from where they ended, shows the
// same projection, hour by hour, as one worked out from nothing on another
// portal over the same database.
func TestTheProjectionCacheChangesNothing(t *testing.T) {
	p := newPortal(t, store.SQLite)
	if err := demo.SeedHistory(context.Background(), p.store, 4); err != nil {
		t.Fatal(err)
	}
	listing := listingOf(t, p.store, "nebula", "kimi-k2.5")
	path := fmt.Sprintf("/traffic/listings/%d?period=day", listing.ID)
	table := func(c *client) string {
		t.Helper()
		res := c.get(path)
		wantStatus(t, "listing traffic", res, http.StatusOK)
		tab := regexp.MustCompile(`(?s)data-testid="share-chart-table".*?</table>`).FindString(res.body)
		if !regexp.MustCompile(`<td>[0-9.]+ %</td><td>[0-9.]+ %</td>`).MatchString(tab) {
			t.Fatalf("no day with a served and a projected share:\n%s", tab)
		}
		return tab
	}
	c := p.client()
	c.login("admin@nebula.example")
	now := time.Now().UTC()
	p.store.Now = func() time.Time { return now }
	cold := table(c)
	if warm := table(c); warm != cold {
		t.Errorf("read again with the old hours kept:\n%s\nfirst:\n%s", warm, cold)
	}
	// Three hours on, the kept hours are carried on from where they ended
	// (three more freeze); a portal with none works the window out whole.
	now = now.Add(3 * time.Hour)
	cold = table(c)
	other := wire.Portal(p.store, wire.Config{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	srv := httptest.NewServer(other.Handler())
	defer srv.Close()
	fresh := (&testPortal{t: t, srv: srv, store: p.store, server: other}).client()
	fresh.login("admin@nebula.example")
	if got := table(fresh); got != cold {
		t.Errorf("worked out from nothing on another portal:\n%s\nwith the hours kept:\n%s", got, cold)
	}
}
