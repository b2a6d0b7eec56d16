package store

import (
	"context"
	"fmt"

	"github.com/airside/airside/internal/alerting"
	"github.com/airside/airside/internal/preflight"
	"github.com/airside/airside/internal/workflow"
)

// QueueDepths is the work waiting, for the operator's metrics, by queue:
// "review" (filings submitted and not yet decided), "preflight" (probe runs
// queued) and "webhooks" (deliveries pending, first attempt or a retry).
// One statement counts them all.
func (s *Store) QueueDepths(ctx context.Context) (map[string]int64, error) {
	var q struct{ Review, Preflight, Webhooks int64 }
	err := s.read(ctx).Raw(`SELECT
		(SELECT COUNT(*) FROM filings WHERE state = ?) AS review,
		(SELECT COUNT(*) FROM preflight_runs WHERE state = ?) AS preflight,
		(SELECT COUNT(*) FROM webhook_deliveries WHERE state = ?) AS webhooks`,
		string(workflow.Submitted), string(preflight.RunQueued), string(alerting.Pending)).Scan(&q).Error
	if err != nil {
		return nil, fmt.Errorf("queue depths: %w", err)
	}
	return map[string]int64{"review": q.Review, "preflight": q.Preflight, "webhooks": q.Webhooks}, nil
}
