// Package store is the only code that speaks SQL (through gorm), on
// PostgreSQL in production and the embedded, pure-Go SQLite by default. Every
// exported method is one transaction.
package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/glebarez/sqlite"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/airside/airside/internal/apperr"
	"github.com/airside/airside/migrations"
)

// Dialect is the database behind a Store.
type Dialect string

// The supported dialects.
const (
	Postgres Dialect = "postgres"
	SQLite   Dialect = "sqlite"
)

// idlePingAfter is how long a pooled PostgreSQL connection may sit unused
// before it is pinged when handed out again.
const idlePingAfter = time.Second

// suspectFor is how long after a failure every pooled connection is pinged.
const suspectFor = 10 * time.Second

// markSuspect says the database was seen failing: for a while, pooled
// connections are pinged before use, so dead ones are replaced.
func (s *Store) markSuspect() {
	s.suspectUntil.Store(time.Now().Add(suspectFor).UnixNano())
}

// Pools are the store's connection pools by role, for the operator's
// metrics: "write" (every connection on PostgreSQL), and on SQLite "read",
// the read-only pool beside the one writer.
func (s *Store) Pools() map[string]*sql.DB {
	pools := map[string]*sql.DB{"write": s.sql}
	if s.readSQL != nil && s.readSQL != s.sql {
		pools["read"] = s.readSQL
	}
	return pools
}

// Store is Airside's storage.
type Store struct {
	db      *gorm.DB
	sql     *sql.DB
	dialect Dialect
	url     string // the driver's DSN, for the LISTEN connection
	pubs    publications
	// reader runs reads: on SQLite a pool of read-only connections beside
	// the one writer (readSQL), on PostgreSQL the same pool as db.
	reader  *gorm.DB
	readSQL *sql.DB
	// statements counts the SQL statements run (see countStatements).
	statements atomic.Int64
	// metricsWritten counts the metric and demand batches this process
	// committed: readers that keep figures derived from them (the traffic
	// pages' projection) know theirs are still current.
	metricsWritten atomic.Uint64
	// writes remembers which minutes the last metric writes touched
	// (MetricsTouchedSince).
	writes writeLog
	// announced tells other serve processes of this one's metric writes
	// (PostgreSQL NOTIFY; notify.go).
	announced metricAnnouncer
	// suspectUntil (unix ns) is until when pooled connections are pinged
	// before use because the database was seen failing.
	suspectUntil *atomic.Int64
	// Now stamps every change; one timestamp per transaction.
	Now func() time.Time
	// OverrideFor is how long a reviewer's override of a probe verdict
	// counts (default workflow.DefaultOverrideFor).
	OverrideFor time.Duration
	// ProbeFreshness is how long a passed preflight probe earns its
	// capability flag (default 7 days).
	ProbeFreshness time.Duration
}

// ParseURL splits a database URL into its dialect and the driver's DSN:
// postgres://... (or postgresql://) for PostgreSQL, sqlite:PATH for SQLite.
func ParseURL(url string) (Dialect, string, error) {
	switch {
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		return Postgres, url, nil
	case strings.HasPrefix(url, "sqlite:"):
		path := strings.TrimPrefix(url, "sqlite:")
		if path == "" {
			return "", "", fmt.Errorf("database URL %q: sqlite needs a path, e.g. sqlite:data/airside.db", url)
		}
		return SQLite, path, nil
	}
	return "", "", fmt.Errorf("database URL %q: want postgres://... or sqlite:PATH", url)
}

// Open connects to the database at url. It does not migrate.
func Open(ctx context.Context, url string) (*Store, error) {
	return open(ctx, url, false)
}

// open is Open with gorm's prepared-statement cache on or off: off as
// shipped, on only for the test that proves the freeze's regression test
// still catches it (see below).
func open(ctx context.Context, url string, statementCache bool) (*Store, error) {
	dialect, dsn, err := ParseURL(url)
	if err != nil {
		return nil, err
	}
	cfg := &gorm.Config{
		Logger:                 logger.Default.LogMode(logLevel()),
		TranslateError:         true,
		SkipDefaultTransaction: true,
		// No gorm prepared-statement cache (PrepareStmt): with a full pool it
		// deadlocks (go-gorm/gorm#7350, #7465), and the embedded default's
		// pool is one writer connection, always full under load: a
		// transaction holding the writer waited on the cache while a lone
		// statement holding the cache waited for the writer, and the portal
		// froze at start-up. Nothing is lost on PostgreSQL, where pgx keeps
		// its own per-connection statement cache (QueryExecModeCacheStatement),
		// which prepares on the connection that runs the statement, inside a
		// transaction or not; SQLite parses a statement in microseconds.
		NowFunc:     func() time.Time { return time.Now().UTC() },
		PrepareStmt: statementCache,
	}
	var db *gorm.DB
	suspectUntil := new(atomic.Int64)
	switch dialect {
	case Postgres:
		// A pooled connection known to be closed is replaced when handed out;
		// one is pinged first on its first reuse, after sitting idle, or
		// while the database was seen failing lately: after the database
		// dropped connections (a restart, a failover) a dead one is replaced
		// instead of failing the request that drew it. A busy connection is
		// not pinged: that would double every round trip.
		db, err = gorm.Open(postgres.New(postgres.Config{DSN: dsn, OptionOpenDB: []stdlib.OptionOpenDB{
			stdlib.OptionResetSession(func(ctx context.Context, conn *pgx.Conn) error {
				if conn.IsClosed() {
					return driver.ErrBadConn
				}
				data := conn.PgConn().CustomData()
				now := time.Now()
				last, seen := data["airside.lastUsed"].(time.Time)
				data["airside.lastUsed"] = now
				suspect := now.UnixNano() < suspectUntil.Load()
				if (!seen || suspect || now.Sub(last) > idlePingAfter) && conn.Ping(ctx) != nil {
					suspectUntil.Store(now.Add(suspectFor).UnixNano())
					return driver.ErrBadConn
				}
				return nil
			}),
		}}), cfg)
	case SQLite:
		if dir := filepath.Dir(dsn); dir != "." {
			if err := os.MkdirAll(dir, 0o750); err != nil {
				return nil, fmt.Errorf("create database folder: %w", err)
			}
		}
		db, err = openSQLiteWriter(ctx, dsn, cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s database: %w", dialect, err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, fmt.Errorf("open %s database: %w", dialect, err)
	}
	if dialect == SQLite {
		// One writer at a time is SQLite's model; one connection makes every
		// transaction of this process wait its turn, and _txlock=immediate
		// (in the DSN) makes another process's writer wait on busy_timeout
		// instead of failing with SQLITE_BUSY on a lock upgrade. (No
		// _time_format here: go-sqlite v1.23 stops reading parameters after
		// it, silently dropping _txlock. Times are all UTC, so the driver's
		// default text format sorts correctly.)
		sqlDB.SetMaxOpenConns(1)
	} else {
		// As many kept idle as may be open: database/sql keeps two by
		// default, so under a burst every connection past two was closed
		// when handed back and the next request paid a new one (a
		// PostgreSQL backend forked, a first-use ping): the pages' p99
		// under a live fleet was that. Idle ones still close after 5 min.
		sqlDB.SetMaxOpenConns(postgresConns)
		sqlDB.SetMaxIdleConns(postgresConns)
		sqlDB.SetConnMaxIdleTime(5 * time.Minute)
	}
	s := &Store{db: db, reader: db, sql: sqlDB, dialect: dialect, url: dsn, suspectUntil: suspectUntil, Now: func() time.Time { return time.Now().UTC() }}
	if dialect == SQLite {
		// Readers beside the one writer: WAL lets them read the last commit
		// while a write is under way, and their transactions begin deferred,
		// so a read never takes the write lock.
		reader, err := gorm.Open(sqlite.Open("file:"+dsn+"?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=query_only(1)"), cfg)
		if err != nil {
			sqlDB.Close()
			return nil, fmt.Errorf("open sqlite readers: %w", err)
		}
		if s.readSQL, err = reader.DB(); err != nil {
			sqlDB.Close()
			return nil, fmt.Errorf("open sqlite readers: %w", err)
		}
		s.readSQL.SetMaxOpenConns(sqliteReaders)
		s.readSQL.SetMaxIdleConns(sqliteReaders) // kept open, as PostgreSQL's
		s.reader = reader
	}
	for _, db := range []*gorm.DB{s.db, s.reader} {
		if err := s.countStatements(db); err != nil {
			s.Close()
			return nil, err
		}
		if err := s.traceStatements(db); err != nil {
			s.Close()
			return nil, err
		}
		if s.reader == s.db {
			break
		}
	}
	if err := s.Ping(ctx); err != nil {
		sqlDB.Close()
		return nil, err
	}
	return s, nil
}

// postgresConns is the PostgreSQL pool's size, and sqliteReaders the
// SQLite readers' beside the one writer; each keeps all of them open
// once opened (until idle for 5 minutes, on PostgreSQL).
const (
	postgresConns = 20
	sqliteReaders = 4
)

// openSQLiteWriter opens the SQLite writer connection. Switching a fresh
// file to WAL takes an exclusive lock, and SQLite answers SQLITE_BUSY at
// once, without its busy handler, when another process holds the file
// meanwhile (two serve processes started together on a new file): the
// open is tried again until the other lets go, within openBusyFor.
func openSQLiteWriter(ctx context.Context, dsn string, cfg *gorm.Config) (*gorm.DB, error) {
	deadline := time.Now().Add(openBusyFor)
	for {
		db, err := gorm.Open(sqlite.Open("file:"+dsn+"?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_txlock=immediate"), cfg)
		var lite interface{ Code() int }
		if err == nil || !errors.As(err, &lite) || lite.Code()&0xff != sqliteBusy || time.Now().After(deadline) {
			return db, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// openBusyFor bounds how long an open waits for another process's lock;
// sqliteBusy is SQLITE_BUSY's primary code.
const (
	openBusyFor = 10 * time.Second
	sqliteBusy  = 5
)

// Dialect reports which database is behind the store.
func (s *Store) Dialect() Dialect { return s.dialect }

// Close releases the connections.
func (s *Store) Close() error {
	if s.readSQL != nil {
		s.readSQL.Close()
	}
	return s.sql.Close()
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := s.sql.PingContext(ctx); err != nil {
		s.markSuspect()
		return fmt.Errorf("ping database: %w", err)
	}
	return nil
}

// Migrate applies the embedded migrations of the store's dialect in order,
// each in its own transaction, recorded in goose_db_version.
func (s *Store) Migrate(ctx context.Context) error {
	provider, unlock, err := s.migrations()
	if err != nil {
		return err
	}
	defer unlock()
	results, err := provider.Up(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, r := range results {
		slog.Debug("migration applied", "version", r.Source.Version, "file", r.Source.Path, "duration", r.Duration)
		if r.Source.Version == 6 {
			if err := s.backfillHourly(ctx); err != nil {
				return fmt.Errorf("migrate: %w", err)
			}
		}
	}
	return nil
}

// MigrateDown rolls back the newest applied migration, in its own
// transaction, and reports the version before and after.
func (s *Store) MigrateDown(ctx context.Context) (from, to int64, err error) {
	provider, unlock, err := s.migrations()
	if err != nil {
		return 0, 0, err
	}
	defer unlock()
	if from, err = provider.GetDBVersion(ctx); err != nil {
		return 0, 0, fmt.Errorf("migrate down: %w", err)
	}
	if from == 0 {
		return 0, 0, errors.New("migrate down: no migration is applied; nothing to roll back")
	}
	if _, err := provider.Down(ctx); err != nil {
		return from, from, fmt.Errorf("migrate down from version %d: %w", from, err)
	}
	if to, err = provider.GetDBVersion(ctx); err != nil {
		return from, 0, fmt.Errorf("migrate down: %w", err)
	}
	return from, to, nil
}

// MigrationVersion is the newest migration applied to the database.
func (s *Store) MigrationVersion(ctx context.Context) (int64, error) {
	provider, unlock, err := s.migrations()
	if err != nil {
		return 0, err
	}
	defer unlock()
	v, err := provider.GetDBVersion(ctx)
	if err != nil {
		return 0, fmt.Errorf("migration version: %w", err)
	}
	return v, nil
}

// migrations is the goose provider of the store's dialect, with the lock that
// makes processes starting at once migrate one after the other: on
// PostgreSQL an advisory lock (goose's session locker), on SQLite an
// exclusive lock on a file beside the database (goose has no SQLite locker,
// and two processes on a fresh file both created the tables). unlock
// releases the SQLite lock.
func (s *Store) migrations() (_ *goose.Provider, unlock func(), err error) {
	dir := string(s.dialect)
	fsys, err := fs.Sub(migrations.FS, dir)
	if err != nil {
		return nil, nil, fmt.Errorf("migrations for %s: %w", dir, err)
	}
	unlock = func() {}
	gooseDialect := goose.DialectSQLite3
	var opts []goose.ProviderOption
	if s.dialect == Postgres {
		gooseDialect = goose.DialectPostgres
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return nil, nil, fmt.Errorf("migrate: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	} else {
		release, err := LockFile(s.url+".migrate-lock", true)
		if err != nil {
			return nil, nil, fmt.Errorf("migrate: %w", err)
		}
		unlock = release
	}
	provider, err := goose.NewProvider(gooseDialect, s.sql, fsys, opts...)
	if err != nil {
		unlock()
		return nil, nil, fmt.Errorf("migrate: %w", err)
	}
	return provider, unlock, nil
}

// tx runs fn in one transaction with one timestamp. A transaction that
// published (raised the catalogue revision) wakes this process's waiters once
// it has committed.
func (s *Store) tx(ctx context.Context, fn func(tx *gorm.DB, now time.Time) error) error {
	now := s.Now().UTC()
	published := false
	ctx = context.WithValue(ctx, publishedKey{}, &published)
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error { return fn(tx, now) })
	if err == nil && published {
		s.pubs.signal()
	}
	return err
}

// publishedKey marks, in a transaction's context, that it raised the
// revision.
type publishedKey struct{}

func markPublished(tx *gorm.DB) {
	if v, ok := tx.Statement.Context.Value(publishedKey{}).(*bool); ok {
		*v = true
	}
}

// read runs fn without a transaction (a single consistent statement or a read
// that tolerates interleaving).
func (s *Store) read(ctx context.Context) *gorm.DB { return s.reader.WithContext(ctx) }

// readTx runs fn in one read-only transaction (a consistent view across
// statements); on SQLite it takes no write lock.
func (s *Store) readTx(ctx context.Context, fn func(tx *gorm.DB) error) error {
	return s.reader.WithContext(ctx).Transaction(fn)
}

// notFound maps gorm's not-found to the domain's.
func notFound(err error, what string) error {
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return apperr.Errorf(apperr.ENOTFOUND, "%s not found.", what)
	}
	return err
}

// isDuplicate reports a unique-constraint violation on either database.
func isDuplicate(err error) bool {
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "UNIQUE constraint failed") || strings.Contains(msg, "SQLSTATE 23505")
}

func logLevel() logger.LogLevel {
	if os.Getenv("AIRSIDE_SQL_LOG") != "" {
		return logger.Info
	}
	return logger.Silent
}

// countStatements counts every statement gorm runs, so tests can prove the
// gateway's hot paths run none (the counter costs one atomic add).
func (s *Store) countStatements(db *gorm.DB) error {
	count := func(*gorm.DB) { s.statements.Add(1) }
	cb := db.Callback()
	for name, err := range map[string]error{
		"create": cb.Create().After("gorm:create").Register("airside:count_create", count),
		"query":  cb.Query().After("gorm:query").Register("airside:count_query", count),
		"update": cb.Update().After("gorm:update").Register("airside:count_update", count),
		"delete": cb.Delete().After("gorm:delete").Register("airside:count_delete", count),
		"row":    cb.Row().After("gorm:row").Register("airside:count_row", count),
		"raw":    cb.Raw().After("gorm:raw").Register("airside:count_raw", count),
	} {
		if err != nil {
			return fmt.Errorf("count %s statements: %w", name, err)
		}
	}
	return nil
}

// Statements is how many SQL statements this store has run.
func (s *Store) Statements() int64 { return s.statements.Load() }
