
(function () {
  "use strict";
  var body = document.body;
  function fail(message) {
    body.setAttribute("data-error", String(message));
    var box = document.getElementById("error");
    if (box) { box.textContent = "The view could not be drawn: " + message; }
  }
  window.addEventListener("error", function (e) { fail(e.message || String(e)); });
  try {
    // one release's view, or a series': {series: true, periods: [...], views: {period: view}}
    var block = JSON.parse(document.getElementById("topicdp-view-data").textContent);
    var periods = block.series ? block.periods : [null];
    var svg = document.getElementById("map");
    var NS = svg.namespaceURI;  // the SVG namespace, as the HTML parser set it
    var state = {topic: 0, lambda: block.lambda, period: periods[0]};
    var data, topics, K, circles = [], circleLayer;

    function el(name, attrs, parent) {
      var node = document.createElementNS(NS, name);
      for (var a in attrs) { node.setAttribute(a, attrs[a]); }
      if (parent) { parent.appendChild(node); }
      return node;
    }

    // -- the intertopic distance map: circles laid out in Python (circle_layout), drawn as they are -------
    function drawMap() {
      while (svg.firstChild) { svg.removeChild(svg.firstChild); }
      var W = data.map.size, H = data.map.size;
      var radii = topics.map(function (t) { return t.r; });
      var ox = data.map.origin[0], oy = data.map.origin[1];
      el("line", {x1: 0, y1: oy, x2: W, y2: oy, "class": "axis"}, svg);
      el("line", {x1: ox, y1: 0, x2: ox, y2: H, "class": "axis"}, svg);
      el("text", {x: W - 6, y: oy - 5, "class": "axis-label", "text-anchor": "end"}, svg).textContent = "PC1";
      el("text", {x: ox + 5, y: 13, "class": "axis-label"}, svg).textContent = "PC2";
      var order = topics.map(function (t, k) { return k; }).sort(function (a, b) { return radii[b] - radii[a]; });
      circleLayer = el("g", {}, svg);
      var labelLayer = el("g", {}, svg);
      circles = [];
      order.forEach(function (k) {
        var t = topics[k];
        var c = el("circle", {cx: t.cx, cy: t.cy, r: radii[k], "class": "topic", "data-topic": k,
                              tabindex: 0, role: "button"}, circleLayer);
        var sized = data.sizes_released ? " (size " + (100 * t.size).toFixed(1) + "%)" : "";
        el("title", {}, c).textContent = "topic " + k + sized + ": " + t.words.slice(0, 6).join(" ");
        c.addEventListener("click", function () { select(k); });
        c.addEventListener("keydown", function (e) {
          if (e.key === "Enter" || e.key === " ") { e.preventDefault(); select(k); }
        });
        circles[k] = c;
      });
      order.forEach(function (k) {
        el("text", {x: topics[k].cx, y: topics[k].cy, "class": "topic-label"}, labelLayer).textContent = String(k);
      });
    }

    // -- the selected topic's words, ranked by relevance ------------------------------------------
    function ranked(t, lambda) {
      var idx = t.words.map(function (w, i) { return i; });
      var rel = t.p.map(function (p, i) {
        if (!(p > 0)) { return -Infinity; }
        return lambda * Math.log(p) + (1 - lambda) * (Math.log(p) - Math.log(t.pw[i]));
      });
      idx.sort(function (a, b) { return (rel[b] - rel[a]) || (t.p[b] - t.p[a]) || (a - b); });
      return idx;
    }
    var bars = document.getElementById("bars");
    function drawBars() {
      var k = state.topic, t = topics[k];
      while (bars.firstChild) { bars.removeChild(bars.firstChild); }
      var top = Math.max.apply(null, t.pw.concat(t.p.map(function (p) { return p * t.size; })));
      ranked(t, state.lambda).forEach(function (i) {
        var row = document.createElement("div");
        row.className = "bar-row";
        row.setAttribute("data-topic", k);
        row.setAttribute("data-word", t.words[i]);
        var word = document.createElement("div");
        word.className = "word";
        word.textContent = t.words[i];
        word.title = t.words[i];
        var track = document.createElement("div");
        track.className = "track";
        var overall = document.createElement("div");
        overall.className = "overall";
        overall.style.width = (100 * t.pw[i] / top) + "%";
        var intopic = document.createElement("div");
        intopic.className = "intopic";
        intopic.style.width = (100 * t.size * t.p[i] / top) + "%";
        track.title = "p(w|t) = " + t.p[i].toPrecision(3) + ", p(w) = " + t.pw[i].toPrecision(3);
        track.appendChild(overall);
        track.appendChild(intopic);
        var num = document.createElement("div");
        num.className = "num";
        num.textContent = t.p[i].toPrecision(3);
        row.appendChild(word); row.appendChild(track); row.appendChild(num);
        bars.appendChild(row);
      });
      document.getElementById("topic-number").textContent = String(k);
      var shown = document.getElementById("topic-size");  // only where the release publishes sizes
      if (shown) { shown.textContent = (100 * t.size).toFixed(1) + "%"; }
    }
    function select(k) {
      state.topic = k;
      circles.forEach(function (c, j) { c.setAttribute("class", j === k ? "topic selected" : "topic"); });
      circleLayer.appendChild(circles[k]);  // drawn last: on top of the circles it overlaps
      drawBars();
    }
    // -- a series: which period's release is shown (its privacy summary with it); topic numbers are matched ----
    function showPeriod(label) {
      state.period = label;
      data = label === null ? block : block.views[label];
      topics = data.topics;
      K = topics.length;
      var panels = document.querySelectorAll("[data-period-privacy]");
      for (var i = 0; i < panels.length; i++) {
        panels[i].hidden = panels[i].getAttribute("data-period-privacy") !== label;
      }
      if (label !== null) { body.setAttribute("data-period", label); }
      drawMap();
      select(Math.min(state.topic, K - 1));
    }
    var slider = document.getElementById("lambda");
    slider.value = String(state.lambda);
    function readLambda() {
      state.lambda = Math.min(1, Math.max(0, parseFloat(slider.value)));
      document.getElementById("lambda-value").textContent = state.lambda.toFixed(2);
      drawBars();
    }
    slider.addEventListener("input", readLambda);
    document.getElementById("prev").addEventListener("click", function () { select((state.topic + K - 1) % K); });
    document.getElementById("next").addEventListener("click", function () { select((state.topic + 1) % K); });
    var chooser = document.getElementById("period");
    var wanted = decodeURIComponent(window.location.hash.slice(1));  // page.html#2004-06 opens on that period
    var first = periods.indexOf(wanted) >= 0 ? wanted : periods[0];
    if (chooser) {
      chooser.value = first;
      chooser.addEventListener("change", function () { showPeriod(chooser.value); });
    }
    showPeriod(first);
    document.getElementById("lambda-value").textContent = state.lambda.toFixed(2);
    body.setAttribute("data-ready", "1");
  } catch (e) {
    fail(e && e.stack ? e.stack : e);
  }
})();
