package telemetry

// StoreErrorHook returns the function the session stores call on every failure (session.Options.OnError),
// counted in portal_session_store_errors_total by operation (load, save, delete, registry).
// session.ErrNoSession is no failure: the stores never report a signed-out user.
func (m *Metrics) StoreErrorHook() func(operation string) {
	return func(operation string) { m.storeErrors.WithLabelValues(operation).Inc() }
}
