package store

import (
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// addMinuteOnce stores a gateway's minute row once per key (minute; a
// retried report adds nothing) and, when it was new, adds its counts to
// its hour's row (hour, keyed by hourKey in table): column + count for
// each of counts, and the new minute's value for each of the columns in
// latest (figures that are not summed: the hour keeps the last reported).
// It reports whether the minute was new.
func addMinuteOnce(tx *gorm.DB, minute, hour any, table string, hourKey []string, counts map[string]int64, latest ...string) (bool, error) {
	res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(minute)
	if res.Error != nil || res.RowsAffected == 0 {
		return false, res.Error
	}
	key := make([]clause.Column, len(hourKey))
	for i, name := range hourKey {
		key[i] = clause.Column{Name: name}
	}
	add := make(map[string]any, len(counts)) // clause.Assignments sorts the columns
	for column, n := range counts {
		add[column] = gorm.Expr(table+"."+column+" + ?", n)
	}
	set := append(clause.Assignments(add), clause.AssignmentColumns(latest)...)
	return true, tx.Clauses(clause.OnConflict{Columns: key, DoUpdates: set}).Create(hour).Error
}
