package demoidp

import "strings"

// User is a person who can sign in at the demo provider.
type User struct {
	// Subject is the stable user id (the tokens' sub).
	Subject string
	// Username and Password are what the login form takes.
	Username, Password string
	// Name and Email go into the tokens as name and email (Username as preferred_username).
	Name, Email string
	// Role goes into the tokens as roles: [Role].
	Role string
}

// DemoUsers returns the built-in demo users, for printing at start-up. They are fixed and public: the
// provider is for demos and tests only. The sales rep and the team lead are customer owners in the demo
// simulator (Sam Sales and Giulia Bianchi, docs/v2-assumptions.md A13), each owning other customers; the back
// office owns none and is not restricted.
func DemoUsers() []User {
	return []User{
		{Subject: "demo-sales", Username: "sales", Password: "sales-demo", Name: "Sam Sales", Email: "sam.sales@demo.example", Role: "sales"},
		{Subject: "demo-backoffice", Username: "backoffice", Password: "backoffice-demo", Name: "Bea Backoffice", Email: "bea.backoffice@demo.example", Role: "backoffice"},
		{Subject: "demo-teamlead", Username: "teamlead", Password: "teamlead-demo", Name: "Giulia Bianchi", Email: "giulia.bianchi@demo.example", Role: "team-lead"},
	}
}

// userDirectory looks users up by username (case-insensitive) and subject. It is read-only after New.
type userDirectory struct {
	byUsername map[string]User
	bySubject  map[string]User
}

func newUserDirectory(users []User) userDirectory {
	d := userDirectory{byUsername: map[string]User{}, bySubject: map[string]User{}}
	for _, u := range users {
		d.byUsername[normalizeUsername(u.Username)] = u
		d.bySubject[u.Subject] = u
	}
	return d
}

// normalizeUsername makes usernames case-insensitive and forgiving of stray spaces.
func normalizeUsername(username string) string {
	return strings.ToLower(strings.TrimSpace(username))
}
