package work

// ToolsID is the id of a list's saved views and export region (an htmx target, and swapped out of
// band with the results so its links follow the filters).
const ToolsID = "work-tools"

// ToolsVM is a list's saved views, the form that saves the current filters and the exports.
type ToolsVM struct {
	// List names the list ("quotes" or "contracts"); Query is its current filters, normalised,
	// empty when they could not be read (nothing to save or export then).
	List, Query string
	// Valid: the filters were read (the form and the exports are offered); otherwise Hint says
	// why not (a default sentence when empty).
	Valid bool
	Hint  string
	Views []ViewLink
	// ExportCSV and ExportXLSX export the current filters.
	ExportCSV, ExportXLSX string
	// Name is the name entered; Error what was wrong with it (the form stays open).
	Name, Error string
	// Open: "Save or export" is shown open (after a save from it).
	Open bool
}

// ViewLink is a saved view: its name and the list with its filters.
type ViewLink struct {
	ID, Name, Href string
	// Current: the list shows exactly this view's filters.
	Current bool
	// Rename is the name entered to rename it, RenameError its problem (the manage page).
	Rename, RenameError string
}

// ViewGroup is one list's saved views on the manage page.
type ViewGroup struct {
	Title, ListHref string
	Views           []ViewLink
}

// ViewsPageVM is /work/views: every saved view of the person, to open, rename or delete.
type ViewsPageVM struct {
	Groups []ViewGroup
	// Error is a problem of the last action that belongs to no field.
	Error string
}
