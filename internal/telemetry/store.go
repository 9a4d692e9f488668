package telemetry

import (
	"errors"
	"net/http"
	"time"

	"github.com/gorilla/securecookie"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cpqportal/portal/internal/session"
)

// InstrumentStore returns store with its failures counted in portal_session_store_errors_total
// (operation load, save or delete). session.ErrNoSession is no failure: it is a signed-out user.
// The result still offers the store's login-cookie codecs (session.CodecSource), which auth needs so
// that every replica can read a sign-in started on another.
func (m *Metrics) InstrumentStore(store session.Store) session.Store {
	inner := instrumentedStore{next: store, errors: m.storeErrors}
	if source, ok := store.(session.CodecSource); ok {
		return instrumentedCodecStore{instrumentedStore: inner, source: source}
	}
	return inner
}

type instrumentedStore struct {
	next   session.Store
	errors *prometheus.CounterVec
}

func (s instrumentedStore) count(operation string, err error) error {
	if err != nil && !errors.Is(err, session.ErrNoSession) {
		s.errors.WithLabelValues(operation).Inc()
	}
	return err
}

// Load implements session.Store.
func (s instrumentedStore) Load(r *http.Request) (*session.Session, error) {
	sess, err := s.next.Load(r)
	return sess, s.count("load", err)
}

// Save implements session.Store.
func (s instrumentedStore) Save(w http.ResponseWriter, r *http.Request, sess *session.Session) error {
	return s.count("save", s.next.Save(w, r, sess))
}

// Delete implements session.Store.
func (s instrumentedStore) Delete(w http.ResponseWriter, r *http.Request) error {
	return s.count("delete", s.next.Delete(w, r))
}

type instrumentedCodecStore struct {
	instrumentedStore
	source session.CodecSource
}

// Codecs implements session.CodecSource.
func (s instrumentedCodecStore) Codecs(purpose string, maxAge time.Duration) []securecookie.Codec {
	return s.source.Codecs(purpose, maxAge)
}
