package storefront

// Inbox messages to staff, one function per event: the store persists these
// words and writes none of its own.

// NoticeProfileChange tells staff a carrier's profile change awaits review.
func NoticeProfileChange(carrier string) string {
	return "A profile change of " + carrier + " awaits review."
}

// NoticeApplication tells staff a company applied to carry.
func NoticeApplication(company string) string { return "A new application to carry: " + company + "." }

// NoticeApplicantAnswered tells staff an applicant replied.
func NoticeApplicantAnswered(company string) string { return "The applicant " + company + " answered." }

// NoticeModelProposal tells staff a model proposal awaits review.
func NoticeModelProposal(model string) string {
	return "A model proposal awaits review: " + model + "."
}

// ProfileDecided tells a carrier what became of its profile change.
func ProfileDecided(approved bool, note string) string {
	if approved {
		return "Your profile change was approved and is public."
	}
	return "Your profile change was declined: " + note
}

// ProposalAccepted tells a carrier its proposed model is in the catalogue.
func ProposalAccepted(model string) string {
	return "Your proposed model " + model + " is in the catalogue: any carrier may list it now."
}

// ProposalDeclined tells a carrier its proposed model was declined, and why.
func ProposalDeclined(model, note string) string {
	return "Your proposed model " + model + " was declined: " + note
}
