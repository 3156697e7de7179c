// The derive site: KaTeX for every .math element, search over the declarations, the dependency graph.
// Data comes from assets/data.js (window.DERIVE), a script rather than a fetch, so file:// works.
(function () {
  "use strict";
  var D = window.DERIVE || {graph: {nodes: [], edges: []}, search: []};
  var SVG = "http://www.w3.org/2000/svg";

  function renderMath() {
    var items = document.querySelectorAll(".math");
    for (var i = 0; i < items.length; i++) {
      var el = items[i], tex = el.textContent;
      // one formula KaTeX cannot read (a user library's own macro) must not stop the rest of the page: it stays
      // as its TeX source, marked, and the error is logged (the lecture's pages are tested to log none)
      try {
        katex.render(tex, el, {displayMode: el.classList.contains("display"), throwOnError: true});
      } catch (err) {
        el.textContent = tex;
        el.classList.add("math-error");
        el.setAttribute("title", String(err && err.message || err));
        if (window.console) console.error("derive: formula not rendered: " + (err && err.message || err));
      }
    }
  }

  function setupSearch() {
    var box = document.getElementById("search"), out = document.getElementById("search-results");
    if (!box || !out) return;
    box.addEventListener("input", function () {
      var q = box.value.trim().toLowerCase();
      out.innerHTML = "";
      if (!q) { out.hidden = true; return; }
      var hits = D.search.filter(function (d) {
        return d.id.toLowerCase().indexOf(q) >= 0 || d.title.toLowerCase().indexOf(q) >= 0 ||
               d.statement.toLowerCase().indexOf(q) >= 0;
      }).slice(0, 40);
      hits.forEach(function (d) {
        var a = document.createElement("a");
        a.href = d.href;
        a.textContent = d.chapter + ". " + d.title + " (" + d.verdict + ")";
        out.appendChild(a);
      });
      if (!hits.length) out.textContent = "No declaration matches.";
      out.hidden = false;
      if (window.deriveGraphSearch) window.deriveGraphSearch(q);
    });
  }

  function el(name, attrs) {
    var e = document.createElementNS(SVG, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    return e;
  }

  function setupGraph() {
    var svg = document.getElementById("graph");
    if (!svg) return;
    var G = D.graph, W = 200, H = 24, GAP = 40, TOP = 40;
    var byId = {}, up = {}, down = {};
    G.nodes.forEach(function (n) { byId[n.id] = n; up[n.id] = []; down[n.id] = []; });
    G.edges.forEach(function (e) { down[e[0]].push(e[1]); up[e[1]].push(e[0]); });
    var cols = G.chapters.length, rows = 0;
    G.nodes.forEach(function (n) { rows = Math.max(rows, n.row + 1); });
    svg.setAttribute("width", cols * (W + GAP) + GAP);
    svg.setAttribute("height", TOP + rows * (H + 8) + 20);
    function x(n) { return GAP / 2 + n.col * (W + GAP); }
    function y(n) { return TOP + n.row * (H + 8); }
    G.chapters.forEach(function (title, i) {
      var t = el("text", {x: GAP / 2 + i * (W + GAP), y: 20, "class": "colhead"});
      t.textContent = (i + 1) + ". " + (title.length > 30 ? title.slice(0, 29) + "\u2026" : title);
      svg.appendChild(t);
    });
    var edgeEls = [];
    G.edges.forEach(function (e) {
      var a = byId[e[0]], b = byId[e[1]];
      var x0 = x(a) + W, y0 = y(a) + H / 2, x1 = x(b), y1 = y(b) + H / 2, d;
      if (a.col === b.col) { x0 = x(a); d = "M" + x0 + "," + y0 + " C" + (x0 - 30) + "," + y0 + " " + (x1 - 30) + "," + y1 + " " + x1 + "," + y1; }
      else { var m = (x0 + x1) / 2; d = "M" + x0 + "," + y0 + " C" + m + "," + y0 + " " + m + "," + y1 + " " + x1 + "," + y1; }
      var p = el("path", {d: d, "class": "edge"});
      p.dataset.from = e[0]; p.dataset.to = e[1];
      svg.appendChild(p); edgeEls.push(p);
    });
    var nodeEls = {};
    G.nodes.forEach(function (n) {
      var light = n.status === "proved" && !n.fully || n.status === "blocked";
      var g = el("g", {"class": "node" + (light ? " outline" : "") + (n.kind === "assumption" ? " assumption" : ""), transform: "translate(" + x(n) + "," + y(n) + ")"});
      var colour = n.fully ? G.colours.fully : G.colours[n.status] || G.colours.unchecked;
      var a = el("a", {href: n.href});
      a.setAttributeNS("http://www.w3.org/1999/xlink", "xlink:href", n.href);
      var r = el("rect", {width: W, height: H, fill: colour});
      var t = el("text", {x: 6, y: H / 2 + 4});
      t.textContent = n.short.length > 30 ? n.short.slice(0, 29) + "\u2026" : n.short;
      var tip = el("title", {}); tip.textContent = n.title + " (" + (n.fully ? "fully proved" : n.status) + ")";
      a.appendChild(r); a.appendChild(t); g.appendChild(tip); g.appendChild(a);
      g.dataset.id = n.id;
      a.addEventListener("click", function (ev) { if (!ev.ctrlKey && !ev.metaKey) { ev.preventDefault(); select(n.id); } });
      a.addEventListener("dblclick", function () { window.location.href = n.href; });
      svg.appendChild(g); nodeEls[n.id] = g;
    });
    function closure(start, next) {
      var seen = {}, stack = next[start].slice();
      while (stack.length) { var v = stack.pop(); if (seen[v]) continue; seen[v] = true; stack = stack.concat(next[v]); }
      return seen;
    }
    var panel = document.getElementById("panel"), only = document.getElementById("only-subgraph"), current = null;
    function list(title, ids) {
      var h = document.createElement("h4"); h.textContent = title + " (" + ids.length + ")"; panel.appendChild(h);
      var ul = document.createElement("ul");
      ids.forEach(function (id) {
        var li = document.createElement("li"), a = document.createElement("a");
        a.href = byId[id].href; a.textContent = byId[id].short; a.title = byId[id].title;
        li.appendChild(a); ul.appendChild(li);
      });
      panel.appendChild(ul);
    }
    function select(id) {
      current = id;
      var n = byId[id], ups = closure(id, up), downs = closure(id, down);
      Object.keys(nodeEls).forEach(function (k) {
        var inside = k === id || ups[k] || downs[k];
        nodeEls[k].classList.toggle("selected", k === id);
        nodeEls[k].classList.toggle("dim", !inside && !only.checked);
        nodeEls[k].classList.toggle("hidden", !inside && only.checked);
      });
      edgeEls.forEach(function (p) {
        var f = p.dataset.from, t = p.dataset.to;
        var isUp = (t === id || ups[t]) && (ups[f]), isDown = (f === id || downs[f]) && (downs[t]);
        p.classList.toggle("up", !!isUp); p.classList.toggle("down", !!isDown);
        p.classList.toggle("dim", !isUp && !isDown && !only.checked);
        p.classList.toggle("hidden", !isUp && !isDown && only.checked);
      });
      panel.innerHTML = "";
      var h = document.createElement("h3"); h.textContent = n.title; panel.appendChild(h);
      var p = document.createElement("p");
      p.textContent = n.kind + " " + n.id + ": " + (n.fully ? "proved, and everything it rests on proved" : n.status);
      panel.appendChild(p);
      var a = document.createElement("a"); a.href = n.href; a.textContent = "Open the declaration"; a.id = "open-declaration";
      panel.appendChild(a);
      list("Rests on", Object.keys(ups));
      list("Rests on it", Object.keys(downs));
      if (window.location.hash !== "#" + id) history.replaceState(null, "", "#" + id);
    }
    function clear() {
      current = null;
      Object.keys(nodeEls).forEach(function (k) { nodeEls[k].classList.remove("selected", "dim", "hidden", "match"); });
      edgeEls.forEach(function (p) { p.classList.remove("up", "down", "dim", "hidden"); });
      panel.innerHTML = "<p>Select a node.</p>";
    }
    only.addEventListener("change", function () { if (current) select(current); });
    document.getElementById("clear-selection").addEventListener("click", clear);
    window.deriveGraphSearch = function (q) {
      Object.keys(nodeEls).forEach(function (k) {
        var n = byId[k];
        nodeEls[k].classList.toggle("match", !!q && (k.toLowerCase().indexOf(q) >= 0 || n.title.toLowerCase().indexOf(q) >= 0));
      });
    };
    var hash = decodeURIComponent(window.location.hash.slice(1));
    if (hash && byId[hash]) select(hash);
  }

  window.addEventListener("error", function (ev) {
    document.documentElement.setAttribute("data-derive-error", String(ev.message));
  });
  document.addEventListener("DOMContentLoaded", function () {
    renderMath();
    setupSearch();
    setupGraph();
    document.documentElement.setAttribute("data-derive-ready", "1");
  });
})();
