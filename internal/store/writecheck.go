package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/airside/airside/internal/apperr"
)

// WriteRefusal says why the database refuses writes, in words for a person
// ("disk full", "read-only"), or "" when err is no such refusal.
func WriteRefusal(err error) string {
	if err == nil {
		return ""
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		switch {
		case pg.Code == "53100":
			return "disk full"
		case pg.Code == "25006":
			return "read-only"
		case strings.HasPrefix(pg.Code, "53"):
			return "out of resources"
		}
		return ""
	}
	// SQLite's primary result codes (the extended code's low byte):
	// SQLITE_READONLY 8, SQLITE_IOERR 10, SQLITE_FULL 13.
	var lite interface{ Code() int }
	if errors.As(err, &lite) {
		switch lite.Code() & 0xff {
		case 13:
			return "disk full"
		case 8:
			return "read-only"
		case 10:
			return "disk I/O error"
		}
	}
	return ""
}

// CheckWrite proves the database takes a write: it rewrites write_checks'
// one row, within two seconds. A refusal is an EUNAVAILABLE error whose
// message says why in a person's words (disk full, read-only), wrapping the
// driver's error.
func (s *Store) CheckWrite(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	err := s.db.WithContext(ctx).Exec(
		"INSERT INTO write_checks (id, checked_at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET checked_at = excluded.checked_at",
		s.Now()).Error
	if err == nil {
		return nil
	}
	s.markSuspect()
	why := WriteRefusal(err)
	if why == "" {
		why = "unreachable or too slow"
	}
	refusal := &apperr.Error{Code: apperr.EUNAVAILABLE, RetryAfter: 30,
		Message: "Airside's database cannot take writes right now (" + why + "). Nothing you submitted was saved; please try again later."}
	return fmt.Errorf("%w (%w)", refusal, err)
}
