package store

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// ErrLocked is LockFile's answer, without wait, when another process holds
// the lock.
var ErrLocked = errors.New("locked by another process")

// LockFile takes an exclusive advisory lock (flock) on path, creating the
// file if needed; with wait it blocks until the lock is free, without it a
// lock held elsewhere answers ErrLocked at once. The lock goes with the
// process, so a crash never leaves a stale one behind. release drops it.
func LockFile(path string, wait bool) (release func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	how := syscall.LOCK_EX
	if !wait {
		how |= syscall.LOCK_NB
	}
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrLocked
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil // closing the file drops its flock
}

// HoldSQLiteFile takes the lock that says one serve process uses this SQLite
// file. Each process keeps the routing catalogue in memory and only learns of
// publications made in the same process, so a second serve on the file would
// route on stale fares; it is refused instead. On PostgreSQL, where processes
// tell each other through LISTEN/NOTIFY, it holds nothing.
func (s *Store) HoldSQLiteFile() (release func(), err error) {
	if s.dialect != SQLite {
		return func() {}, nil
	}
	release, err = LockFile(s.url+".serve-lock", false)
	if errors.Is(err, ErrLocked) {
		return nil, fmt.Errorf("another airside serve is already using %s: one process per SQLite file "+
			"(use PostgreSQL, AIRSIDE_DATABASE_URL=postgres://..., to run several)", s.url)
	}
	return release, err
}
