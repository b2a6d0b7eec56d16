// Package migrations embeds the numbered SQL migrations, one folder per
// dialect: the files differ only where the dialects do (identity columns).
package migrations

import "embed"

// FS holds postgres/*.sql and sqlite/*.sql.
//
//go:embed postgres/*.sql sqlite/*.sql
var FS embed.FS
