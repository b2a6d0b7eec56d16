package store

import (
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/gorm"

	"github.com/airside/airside/internal/tracing"
)

const spanKey = "airside:span"

// traceStatements makes each SQL statement a client span under the span of
// the work that ran it (a request, an election), named by its operation
// and carrying the statement's text. Work with no recording span (tracing
// off, background loops) gets none: a span per statement of every loop
// would bury the requests' traces.
func (s *Store) traceStatements(db *gorm.DB) error {
	system := "sqlite"
	if s.dialect == Postgres {
		system = "postgresql"
	}
	begin := func(op string) func(*gorm.DB) {
		return func(tx *gorm.DB) {
			ctx := tx.Statement.Context
			if ctx == nil || !trace.SpanFromContext(ctx).IsRecording() {
				return
			}
			ctx, span := tracing.Tracer("store").Start(ctx, "db."+op, trace.WithSpanKind(trace.SpanKindClient),
				trace.WithAttributes(attribute.String("db.system.name", system), attribute.String("db.operation.name", op),
					attribute.String("db.collection.name", tx.Statement.Table)))
			tx.Statement.Context = ctx
			tx.InstanceSet(spanKey, span)
		}
	}
	end := func(tx *gorm.DB) {
		v, ok := tx.InstanceGet(spanKey)
		if !ok {
			return
		}
		span := v.(trace.Span)
		span.SetAttributes(attribute.String("db.query.text", tx.Statement.SQL.String()), attribute.Int64("db.response.returned_rows", tx.RowsAffected))
		if tx.Error != nil && tx.Error != gorm.ErrRecordNotFound {
			span.RecordError(tx.Error)
			span.SetStatus(codes.Error, tx.Error.Error())
		}
		span.End()
	}
	cb := db.Callback()
	for name, err := range map[string]error{
		"create begin": cb.Create().Before("gorm:create").Register("airside:trace_create", begin("insert")),
		"create end":   cb.Create().After("gorm:create").Register("airside:trace_create_end", end),
		"query begin":  cb.Query().Before("gorm:query").Register("airside:trace_query", begin("select")),
		"query end":    cb.Query().After("gorm:query").Register("airside:trace_query_end", end),
		"update begin": cb.Update().Before("gorm:update").Register("airside:trace_update", begin("update")),
		"update end":   cb.Update().After("gorm:update").Register("airside:trace_update_end", end),
		"delete begin": cb.Delete().Before("gorm:delete").Register("airside:trace_delete", begin("delete")),
		"delete end":   cb.Delete().After("gorm:delete").Register("airside:trace_delete_end", end),
		"row begin":    cb.Row().Before("gorm:row").Register("airside:trace_row", begin("row")),
		"row end":      cb.Row().After("gorm:row").Register("airside:trace_row_end", end),
		"raw begin":    cb.Raw().Before("gorm:raw").Register("airside:trace_raw", begin("raw")),
		"raw end":      cb.Raw().After("gorm:raw").Register("airside:trace_raw_end", end),
	} {
		if err != nil {
			return fmt.Errorf("trace %s: %w", name, err)
		}
	}
	return nil
}
