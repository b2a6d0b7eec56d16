package store

import (
	"context"
	"fmt"
	"sort"
)

// Columns lists every application table with its sorted column names, for
// checking that both dialects' migrations agree.
func (s *Store) Columns(ctx context.Context) (map[string][]string, error) {
	tables, err := s.db.WithContext(ctx).Migrator().GetTables()
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	out := map[string][]string{}
	for _, table := range tables {
		if table == "goose_db_version" || table == "sqlite_sequence" {
			continue
		}
		types, err := s.db.WithContext(ctx).Migrator().ColumnTypes(table)
		if err != nil {
			return nil, fmt.Errorf("columns of %s: %w", table, err)
		}
		for _, c := range types {
			out[table] = append(out[table], c.Name())
		}
		sort.Strings(out[table])
	}
	return out, nil
}

// ExecForTest runs raw statements; tests use it to simulate faults (a
// trigger that fails a step). Production code never calls it.
func (s *Store) ExecForTest(ctx context.Context, statements ...string) error {
	for _, stmt := range statements {
		if err := s.db.WithContext(ctx).Exec(stmt).Error; err != nil {
			return fmt.Errorf("exec %q: %w", stmt, err)
		}
	}
	return nil
}
