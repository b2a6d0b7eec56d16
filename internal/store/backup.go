package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Backup writes a consistent copy of the database to path while the portal
// keeps serving: on SQLite with VACUUM INTO, from a read transaction, so the
// copy holds every write committed before it began (those still in the -wal
// file too, which a copy of the .db file would lose); on PostgreSQL with
// pg_dump's custom format. It refuses to overwrite path.
func (s *Store) Backup(ctx context.Context, path string) error {
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("backup: %s already exists; choose a new file", path)
	}
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return fmt.Errorf("backup: %w", err)
		}
	}
	if s.dialect == Postgres {
		return runTool(ctx, "pg_dump", "--format=custom", "--no-owner", "--file", path, "--dbname", s.url)
	}
	// On a connection of its own (the readers are query_only, and the
	// writer would hold every write back): VACUUM INTO reads in one read
	// transaction and takes no write lock.
	conn, err := sql.Open("sqlite", "file:"+s.url+"?_pragma=busy_timeout(5000)")
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "VACUUM INTO ?", path); err != nil {
		os.Remove(path)
		return fmt.Errorf("backup: vacuum into %s: %w", path, err)
	}
	return nil
}

// Restore replaces the database at url with the backup at path. On SQLite
// the backup is checked (integrity_check) before it replaces the file, and
// the file may not be in use by a serve process; on PostgreSQL pg_restore
// drops and recreates every object of the backup. Migrations pending for
// this version run at the next serve.
func Restore(ctx context.Context, url, path string) error {
	dialect, dsn, err := ParseURL(url)
	if err != nil {
		return err
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if dialect == Postgres {
		return runTool(ctx, "pg_restore", "--clean", "--if-exists", "--no-owner", "--single-transaction", "--dbname", dsn, path)
	}
	if err := checkSQLiteFile(ctx, path); err != nil {
		return err
	}
	release, err := LockFile(dsn+".serve-lock", false)
	if errors.Is(err, ErrLocked) {
		return fmt.Errorf("restore: an airside serve is using %s: stop it first", dsn)
	}
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer release()
	tmp := dsn + ".restoring"
	if err := copyFile(path, tmp); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	for _, stale := range []string{dsn + "-wal", dsn + "-shm"} {
		if err := os.Remove(stale); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("restore: %w", err)
		}
	}
	if err := os.Rename(tmp, dsn); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	return nil
}

// checkSQLiteFile opens a backup read-only and runs integrity_check on it.
func checkSQLiteFile(ctx context.Context, path string) error {
	st, err := Open(ctx, "sqlite:"+path)
	if err != nil {
		return fmt.Errorf("restore: %s is not a readable SQLite database: %w", path, err)
	}
	defer st.Close()
	var result string
	if err := st.reader.WithContext(ctx).Raw("PRAGMA integrity_check").Scan(&result).Error; err != nil {
		return fmt.Errorf("restore: check %s: %w", path, err)
	}
	if result != "ok" {
		return fmt.Errorf("restore: %s fails its integrity check: %s", path, result)
	}
	return nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// runTool runs one of PostgreSQL's client programs, its output on failure
// in the error.
func runTool(ctx context.Context, name string, args ...string) error {
	if _, err := exec.LookPath(name); err != nil {
		return fmt.Errorf("%s is needed for PostgreSQL backups (apt-get install postgresql-client): %w", name, err)
	}
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", name, err, strings.TrimSpace(string(out)))
	}
	return nil
}
