// CPQ Portal: a quote that has a contract asks before every change (docs/work-index.md). Loaded
// only by such quote pages. Every htmx request from inside [data-change-confirm] that changes
// something (not GET) asks the page's question first, together with the element's own
// hx-confirm; the documents region (attachments, the contract itself) is left alone.
(function () {
  "use strict";
  document.addEventListener("htmx:confirm", function (e) {
    var d = e.detail;
    var page = d.elt && d.elt.closest && d.elt.closest("[data-change-confirm]");
    if (!page || String(d.verb).toLowerCase() === "get" || d.elt.closest("#quote-documents")) return;
    e.preventDefault();
    var question = page.getAttribute("data-change-confirm");
    if (d.question) question += "\n\n" + d.question;
    if (window.confirm(question)) d.issueRequest(true);
  });
})();
