// zotrec serve: keys j/k to move, s/x/m/l to act; each click is sent without leaving the page and the list
// comes back refilled. Without this script the forms still work (a POST, then the page again).
"use strict";
(function () {
  var csrf = document.querySelector('meta[name="csrf"]').getAttribute("content");
  var list = document.getElementById("papers");
  var said = document.getElementById("said");
  var current = 0;
  var busy = false;

  function cards() { return list.querySelectorAll("li.paper"); }

  function mark(index, scroll) {
    var all = cards();
    if (!all.length) { return; }
    current = Math.max(0, Math.min(index, all.length - 1));
    for (var i = 0; i < all.length; i++) { all[i].classList.toggle("current", i === current); }
    all[current].setAttribute("tabindex", "-1");
    if (scroll) { all[current].scrollIntoView({block: "nearest"}); all[current].focus({preventScroll: true}); }
  }

  function send(form, action) {
    if (busy) { return; }  // one click at a time: a double click sends once
    busy = true;
    var buttons = form.querySelectorAll("button");
    for (var i = 0; i < buttons.length; i++) { buttons[i].disabled = true; }
    var body = new URLSearchParams(new FormData(form));
    body.set("action", action);
    fetch("/act", {method: "POST", body: body, credentials: "same-origin",
                   headers: {"X-CSRF-Token": csrf, "Accept": "application/json"}})
      .then(function (answer) {  // a refusal (403, 400) is one line of text: say it
        var kind = answer.headers.get("Content-Type") || "";
        return kind.indexOf("json") >= 0 ? answer.json() : answer.text().then(function (line) { return {said: line}; });
      })
      .then(function (found) {
        said.textContent = found.said || "";
        if (found.list !== undefined) { list.innerHTML = found.list; }
        mark(current, true);
      })
      .catch(function () { said.textContent = "zotrec did not answer; is `zotrec serve` still running?"; })
      .then(function () {
        busy = false;
        var left = form.querySelectorAll("button");
        for (var i = 0; i < left.length; i++) { left[i].disabled = false; }
      });
  }

  list.addEventListener("click", function (event) {
    var button = event.target.closest("button.act");
    if (!button) { return; }
    event.preventDefault();
    var all = cards();
    for (var i = 0; i < all.length; i++) { if (all[i].contains(button)) { current = i; } }
    send(button.form, button.value);
  });

  var keys = {s: "save", x: "not", m: "more", l: "later"};
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    var tag = (event.target.tagName || "").toLowerCase();
    if (tag === "input" || tag === "select" || tag === "textarea") { return; }
    if (event.key === "j") { mark(current + 1, true); event.preventDefault(); return; }
    if (event.key === "k") { mark(current - 1, true); event.preventDefault(); return; }
    var action = keys[event.key];
    var card = cards()[current];
    if (action && card) { event.preventDefault(); send(card.querySelector("form.actions"), action); }
  });

  var filter = document.querySelector("form.filter");
  var selects = filter.querySelectorAll("select");
  for (var i = 0; i < selects.length; i++) { selects[i].addEventListener("change", function () { filter.submit(); }); }
  mark(0, false);
})();
