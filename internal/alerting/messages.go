package alerting

import "fmt"

// Inbox messages of the alert evaluator, one function per event: the store
// persists these words and writes none of its own.

// NoticeOpened tells a carrier an alert opened on one of its listings.
func NoticeOpened(listing string, kind Kind, detail string) string {
	return fmt.Sprintf("Alert: %s is %s: %s.", listing, kind.Label(), detail)
}

// NoticeRecovered tells a carrier an alert closed.
func NoticeRecovered(listing string, kind Kind, detail string) string {
	return fmt.Sprintf("Recovered: %s is no longer %s: %s.", listing, kind.Label(), detail)
}

// NoticeRankMoved tells a carrier a competitor's change cost it a rank.
func NoticeRankMoved(listing, detail string) string {
	return fmt.Sprintf("Alert: %s: %s.", listing, detail)
}

func rankMove(scenario string, now, was int64) string {
	return fmt.Sprintf("%s: rank %d, was %d", scenario, now, was)
}

func rankMovedDetail(moves []string) string {
	return "another carrier's change moved you in " + joinMoves(moves)
}
