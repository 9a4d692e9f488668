package i18n

import (
	"net/http"
	"sync"
	"time"
	// The time zone database is embedded (about 450 KB), so a person's zone is known on a
	// machine or container without /usr/share/zoneinfo.
	_ "time/tzdata"
)

// ZoneCookieName is the cookie that keeps a person's time zone: app.js writes the browser's own
// (Intl.DateTimeFormat().resolvedOptions().timeZone) when it differs, and every page shows times
// in it (docs/i18n.md). It is a preference like the language, not a secret.
const ZoneCookieName = "portal_tz"

// maxZoneName bounds a zone's name (the longest in the database has 32 characters).
const maxZoneName = 64

// zones keeps the locations loaded so far, by name. Only names the time zone database knows are
// kept, so it holds at most the database's few hundred zones whatever requests send.
type zones struct {
	loaded sync.Map // name to *time.Location
}

// Zone is the time zone of a request: the zone cookie when it names a zone of the database,
// else UTC.
func (b *Bundle) Zone(r *http.Request) *time.Location {
	c, err := r.Cookie(ZoneCookieName)
	if err != nil {
		return time.UTC
	}
	zone, ok := b.LookupZone(c.Value)
	if !ok {
		return time.UTC
	}
	return zone
}

// LookupZone returns the zone named name ("Europe/Rome", "UTC"): an IANA name of at most 64
// letters, digits and / _ + -, that the database knows. "Local" (the server's zone) and
// anything else are refused.
func (b *Bundle) LookupZone(name string) (*time.Location, bool) {
	if !validZoneName(name) {
		return nil, false
	}
	if loc, ok := b.zones.loaded.Load(name); ok {
		return loc.(*time.Location), true
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, false
	}
	b.zones.loaded.Store(name, loc)
	return loc, true
}

func validZoneName(name string) bool {
	if name == "" || len(name) > maxZoneName || name == "Local" || name[0] == '/' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '/', c == '_', c == '+', c == '-':
		default:
			return false
		}
		if c == '/' && i+1 < len(name) && name[i+1] == '/' {
			return false
		}
	}
	return true
}
