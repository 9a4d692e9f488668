package components

import "testing"

// The progress region of a job page (batch archive, handover, import's run): it polls with what it
// shows while the job runs and stops once it ended; the ids follow the kind's words; cancel is
// offered while it runs (not twice), retry when the handler says so.
func TestJobProgressPollsWhileTheJobRunsAndOffersItsActions(t *testing.T) {
	t.Parallel()
	words := JobWords{Name: "demo", Bar: "batch.progress.bar", Done: "batch.count.done", DoneID: "made",
		Rejected: "batch.count.rejected", RejectedID: "skipped", Cancel: "batch.cancel"}
	running := Job{ID: "j1", URL: "/jobs/j1", Version: "v7", Active: true, Status: "Running <b>", Total: 4, Done: 1, Failed: 1, Left: 1, Rejected: 1, Percent: 75}
	doc, html := render(t, JobProgress(running, words))
	s := doc.Find(`section#demo-progress[data-testid="demo-progress"]`)
	if s.Length() != 1 || s.AttrOr("hx-get", "") != "/jobs/j1/progress?after=v7" || s.AttrOr("data-active", "") != "true" {
		t.Fatalf("running region:\n%s", html)
	}
	if _, ok := s.Attr("data-status"); ok {
		t.Errorf("data-status without DataStatus:\n%s", html)
	}
	if got := doc.Find(`[data-testid="demo-status"]`).Text(); got != "Running <b>" {
		t.Errorf("status = %q", got)
	}

	doc, html = render(t, JobCounts(running, words))
	for id, want := range map[string]string{"demo-made": "1", "demo-failed": "1", "demo-left": "1", "demo-skipped": "1"} {
		if got := doc.Find(`[data-testid="` + id + `"]`).Text(); got != want {
			t.Errorf("%s = %q, want %q:\n%s", id, got, want, html)
		}
	}
	if doc.Find(`progress[data-testid="demo-bar"]`).AttrOr("value", "") != "75" {
		t.Errorf("bar:\n%s", html)
	}

	doc, html = render(t, JobActions(running, words))
	if doc.Find(`form[action="/jobs/j1/cancel"] [data-testid="demo-cancel"]`).Length() != 1 || doc.Find(`[data-testid="demo-retry"]`).Length() != 0 {
		t.Errorf("running actions:\n%s", html)
	}
	cancelling := running
	cancelling.Cancelling = true
	if doc, html = render(t, JobActions(cancelling, words)); doc.Find(`[data-testid="demo-cancel"]`).Length() != 0 {
		t.Errorf("cancel offered twice:\n%s", html)
	}

	ended := running
	ended.Active, ended.CanRetry, ended.Status = false, true, "Finished"
	words.DataStatus = true
	doc, html = render(t, JobProgress(ended, words))
	s = doc.Find(`section#demo-progress`)
	if _, polls := s.Attr("hx-get"); polls || s.AttrOr("data-status", "") != "Finished" {
		t.Errorf("ended region:\n%s", html)
	}
	if _, ok := s.Attr("data-active"); ok {
		t.Errorf("data-active with DataStatus:\n%s", html)
	}
	doc, html = render(t, JobActions(ended, words))
	if doc.Find(`form[action="/jobs/j1/retry"] [data-testid="demo-retry"]`).Length() != 1 || doc.Find(`[data-testid="demo-cancel"]`).Length() != 0 {
		t.Errorf("ended actions:\n%s", html)
	}
}
