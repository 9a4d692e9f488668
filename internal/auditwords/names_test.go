package auditwords

import (
	"strings"
	"testing"

	"golang.org/x/text/language"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/i18n"
)

// directory is a Directory of fixed people: exact by login or address, loose by local part.
type directory map[string]string

func (d directory) Person(actor string) (string, bool, bool) {
	actor = strings.ToLower(actor)
	if name, ok := d[actor]; ok {
		return name, true, true
	}
	if name, ok := d["local:"+actor]; ok {
		return name, false, true
	}
	return "", false, false
}

// TestActorInWords: a login the directory saw sign in is the person's name (the login kept for
// the tooltip); an owner's address beats the directory's local-part guess; "system" is a word of
// the reader's language; anyone unknown stays as the v2 wrote them.
func TestActorInWords(t *testing.T) {
	t.Parallel()
	bundle, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	names := &Names{People: directory{"sales": "Sam Sales", "local:olga": "Olga Other", "local:dir": "Dirk Dir"}}
	names.AddCustomer(&apiclient.Customer{Owners: []apiclient.Owner{{OwnerID: 1, Name: "Olga Owner", Email: "olga@corp.example"}}})
	for _, c := range []struct {
		lang  language.Tag
		actor string
		want  Actor
	}{
		{language.English, "sales", Actor{Name: "Sam Sales", Login: "sales"}},
		{language.English, "SALES", Actor{Name: "Sam Sales", Login: "SALES"}},
		{language.English, "olga", Actor{Name: "Olga Owner", Login: "olga"}},
		{language.English, "dir", Actor{Name: "Dirk Dir", Login: "dir"}},
		{language.English, "api-user", Actor{Name: "api-user"}},
		{language.English, "system", Actor{Name: "System"}},
		{language.Italian, "system", Actor{Name: "Sistema"}},
		{language.French, "SYSTEM", Actor{Name: "Système"}},
		{language.German, "system", Actor{Name: "System"}},
		{language.Spanish, "system", Actor{Name: "Sistema"}},
	} {
		if got := names.Actor(bundle.Translator(c.lang), c.actor); got != c.want {
			t.Errorf("%s %q: %+v, want %+v", c.lang, c.actor, got, c.want)
		}
	}
	var none *Names
	if got := none.Actor(bundle.Translator(language.English), "sales"); got != (Actor{Name: "sales"}) {
		t.Errorf("no names: %+v", got)
	}
}
