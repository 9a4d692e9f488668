package handlers

// later starts fn now and returns a function that waits for its result, so reads that do not depend
// on each other go to the v2 API side by side (issue 27: what a person waits for is the number of
// round trips made one after the other). fn must not touch the gin context (it runs in its own
// goroutine); call the returned function on every path, deferred where the handler may return
// early, so that no read outlives its request.
func later[T any](fn func() (T, error)) func() (T, error) {
	var (
		value T
		err   error
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		value, err = fn()
	}()
	return func() (T, error) {
		<-done
		return value, err
	}
}
