// Package pages holds the portal's page contents, one file per area (customers.templ, quotes.templ,
// contracts.templ, audits.templ). The handlers render a page inside the frame with
// h.renderPage(c, status, title, layout.SectionXxx, pages.XxxPage(vm)); an htmx region is a
// XxxPartial(vm) with a stable element id, included by its page and rendered alone (h.render) for
// htmx requests, so each region has one source of truth.
//
// Conventions (the CSP forbids inline script and style, htmx runs without eval):
//   - Typed view models per page (CustomerEditVM), never maps; templates only display them.
//   - Forms: components.ErrorSummary("There is a problem", components.SummaryFrom(fields...)) at the top,
//     then components.TextField / TextArea / Select per field (they keep the value, show the error,
//     set aria-invalid and aria-describedby). A failed POST re-renders the form with status 422.
//   - htmx attributes only (hx-get, hx-post, hx-target, hx-swap, hx-push-url, hx-confirm,
//     hx-disabled-elt="find button[type=submit]", hx-indicator); never hx-on or inline handlers.
//     app.js provides: toasts, announcements, data-confirm on plain forms, disabling plain forms'
//     buttons while submitting, focus on [data-autofocus] and error summaries after a swap, "/" to
//     focus [data-search], and <progress data-upload-progress> inside an htmx upload form.
//   - Lists: <table class="responsive"> with data-label on each <td> (rows become cards on phones),
//     components.EmptyState when empty, components.Pagination(components.NewPager(...)).
//   - Details: components.KeyValues, components.Badge for statuses, components.JSONTree for payloads.
//   - Every element a test looks for has a data-testid.
package pages
