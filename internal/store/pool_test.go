package store_test

import (
	"database/sql"
	"testing"

	"github.com/airside/airside/internal/store"
	"github.com/airside/airside/internal/store/storetest"
)

// TestPoolsKeepTheirConnectionsOpen: every connection a pool opened in a
// burst (all it may open, held at once) is kept idle when handed back,
// not closed for the next request to open again: on PostgreSQL a new
// connection forks a backend, which was the pages' p99 under a live fleet.
func TestPoolsKeepTheirConnectionsOpen(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, s *store.Store) {
		for role, db := range s.Pools() {
			before := db.Stats()
			n := before.MaxOpenConnections
			if n <= 0 {
				t.Fatalf("%s pool: no bound on open connections", role)
			}
			conns := make([]*sql.Conn, n)
			for i := range conns {
				c, err := db.Conn(ctx)
				if err != nil {
					t.Fatalf("%s pool: connection %d of %d: %v", role, i+1, n, err)
				}
				conns[i] = c
			}
			for _, c := range conns {
				if err := c.Close(); err != nil {
					t.Fatal(err)
				}
			}
			after := db.Stats()
			if closed := after.MaxIdleClosed - before.MaxIdleClosed; closed != 0 || after.Idle != n {
				t.Errorf("%s pool: after a burst of %d connections %d were closed on return and %d kept idle, want none closed and %d idle",
					role, n, closed, after.Idle, n)
			}
		}
	})
}
