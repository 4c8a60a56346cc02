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
          // Swapping the region's HTML would drop keyboard focus on a
          // link or control inside it to the page's body at every refresh:
          // remember what had focus and give it back to its counterpart.
          var key = focusKey(region);
          var open = openDetails(region);
          region.innerHTML = html;
          for (var i = 0; i < open.length; i++) {
            var d = document.getElementById(open[i]);
            if (d && region.contains(d)) { d.open = true; }
          }
          if (key) { refocus(region, key); }
          region.setAttribute("data-refreshed-at", new Date().toISOString());
        })
        .catch(function () { /* the next tick tries again */ })
        .then(schedule);
    }
    function schedule() { window.setTimeout(tick, seconds * 1000); }
    schedule();
  }
  // focusKey names the focused element inside region by its id, else by
  // its path of child positions from the region (a summary, a link in a
  // table row), so the same place can be found in the new HTML.
  function focusKey(region) {
    var el = document.activeElement;
    if (!el || el === document.body || !region.contains(el) || el === region) { return null; }
    if (el.id) { return { id: el.id }; }
    var path = [];
    for (var n = el; n !== region; n = n.parentElement) {
      path.unshift(Array.prototype.indexOf.call(n.parentElement.children, n));
    }
    return { path: path, tag: el.tagName };
  }
  function refocus(region, key) {
    var target = null;
    if (key.id) {
      target = document.getElementById(key.id);
    } else {
      target = region;
      for (var i = 0; target && i < key.path.length; i++) { target = target.children[key.path[i]]; }
      if (target && target.tagName !== key.tag) { target = null; }
    }
    if (target && region.contains(target)) { target.focus({ preventScroll: true }); }
  }
  // openDetails lists the ids of the disclosures open in region, which a
  // swap would close again under the reader's eyes.
  function openDetails(region) {
    var open = region.querySelectorAll("details[open][id]");
    var ids = [];
    for (var i = 0; i < open.length; i++) { ids.push(open[i].id); }
    return ids;
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
