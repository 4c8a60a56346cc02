// Herald console: live regions. Every element marked data-live is
// refreshed in place every data-refresh seconds by fetching the same page
// with ?fragment=<its id>; the server answers only that region's inner
// HTML. Without this script the page works the same, only without the
// refresh. No inline script: the page's CSP allows only this file.
(function () {
  "use strict";
  function refresh(region) {
    var seconds = parseInt(region.getAttribute("data-refresh") || "5", 10);
    if (!(seconds >= 1)) { seconds = 5; }
    var url = new URL(window.location.href);
    url.searchParams.set("fragment", region.id);
    function tick() {
      if (document.hidden) { schedule(); return; }
      fetch(url.toString(), { credentials: "same-origin", headers: { "Accept": "text/html" } })
        .then(function (res) {
          // A redirect means the session ended: go to sign in.
          if (res.redirected || res.status === 401) { window.location.reload(); return null; }
          return res.ok ? res.text() : null;
        })
        .then(function (html) {
          if (html === null) { return; }
          region.innerHTML = html;
          region.setAttribute("data-refreshed-at", new Date().toISOString());
        })
        .catch(function () { /* the next tick tries again */ })
        .then(schedule);
    }
    function schedule() { window.setTimeout(tick, seconds * 1000); }
    schedule();
  }
  function start() {
    var regions = document.querySelectorAll("[data-live][id]");
    for (var i = 0; i < regions.length; i++) { refresh(regions[i]); }
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
