package feed

// NoticeFailing tells a carrier's members its feed stopped working (once,
// when a read fails after one that did not), with why.
func NoticeFailing(outcome string) string {
	return "Your provider feed stopped working: " + outcome + " The portal reads it again every 15 minutes; the feed page says when it is back."
}

// NoticeRecovered tells them it reads again (once, after failing).
func NoticeRecovered(url string) string {
	return "Your provider feed " + url + " reads again: the portal files its changes as before."
}
