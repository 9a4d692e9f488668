package components

// Job is what every page of a job of the job engine shows of it (the batch archive, the
// handover, the import's run): its state, its counts and the address of its page. The pages'
// view models embed it.
type Job struct {
	ID, URL string
	// Version names what the progress region shows; the region asks for the next one with it.
	Version string
	// Draft: not started yet (the page previews it). Active while it runs (the region polls).
	Draft, Active bool
	Cancelling    bool
	// WaitingForSignIn: the v2 API refused the token; the job resumes when the person is back.
	WaitingForSignIn bool
	CanRetry         bool
	// Status is the job's state in words.
	Status                              string
	Total, Done, Failed, Left, Rejected int
	// Percent is the share of lines decided (done, failed or rejected), 0 to 100.
	Percent int
	Resumed int
	// Verified counts the lines checked on the v2 API after an interruption; Unverified those
	// that may have been sent and are not checked yet.
	Verified, Unverified int
}

// JobWords are what a kind of job calls things in its progress region.
type JobWords struct {
	// Name prefixes the region's ids and test ids: "batch" gives #batch-progress, batch-status,
	// batch-bar, batch-failed, batch-cancel…
	Name string
	// DataStatus: the region carries its status in words (data-status), else data-active.
	DataStatus bool
	// Message keys of the bar's label, the done and left-out counts and the cancel button.
	Bar, Done, Rejected, Cancel string
	// DoneID and RejectedID end the test ids of the done and left-out counts.
	DoneID, RejectedID string
}
