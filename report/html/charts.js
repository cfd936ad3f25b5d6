/* charts.js: draws report.html's line charts (div.ps-lines: {"unit","series":[{"name","t":[s],
 * "v":[..]}],"phases":[{"name","t0","t1"}]}) and its timeline (div.ps-timeline: {"t1","phases":
 * [{"name","depth","t0","t1"}],"procs":[{"pid","exe","t0","t1"}]}) as SVG, times in seconds
 * from the run's start. Phases are shaded behind the lines. Each series has its own colour and
 * dash pattern (readable in print and without colour). One point per value given; the count is
 * written on each line (data-points) so a headless browser's DOM dump can be checked. It must
 * never fetch anything. */
(function () {
  'use strict';
  var NS = document.getElementById('ps-ns').namespaceURI;
  var COLOURS = ['#0072b2', '#e69f00', '#009e73', '#cc79a7', '#56b4e9', '#d55e00', '#000000', '#f0e442'];
  var DASH = ['', '6 3', '2 2', '8 3 2 3', '1 3', '10 4'];
  var SHADE = ['#eef2f7', '#e3e9f1'];

  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  function niceMax(v) {
    if (!(v > 0)) return 1;
    var p = Math.pow(10, Math.floor(Math.log10(v))), r = v / p;
    return (r <= 1 ? 1 : r <= 2 ? 2 : r <= 5 ? 5 : 10) * p;
  }

  function fmt(v) {
    var a = Math.abs(v);
    return a >= 100 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : a >= 1 ? v.toFixed(2) : v.toPrecision(2);
  }

  function frame(div, W, H, L, R, T, B, tmax, ymax, unit) {
    var svg = el('svg', { width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, 'class': 'ps-chart-svg', role: 'img',
                          'aria-label': div.getAttribute('data-title') });
    var X = function (t) { return L + (W - L - R) * (tmax > 0 ? t / tmax : 0); };
    var Y = function (v) { return H - B - (H - T - B) * (ymax > 0 ? v / ymax : 0); };
    el('line', { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: '#333' }, svg);
    if (ymax !== null) el('line', { x1: L, y1: T, x2: L, y2: H - B, stroke: '#333' }, svg);
    for (var i = 0; i <= 5; i++) {
      var t = tmax * i / 5;
      el('line', { x1: X(t), y1: H - B, x2: X(t), y2: H - B + 4, stroke: '#333' }, svg);
      var tx = el('text', { x: X(t), y: H - B + 16, 'text-anchor': 'middle', 'class': 'ps-axis' }, svg);
      tx.textContent = fmt(t) + (i === 5 ? ' s' : '');
      if (ymax !== null) {
        var v = ymax * i / 5;
        el('line', { x1: L, y1: Y(v), x2: W - R, y2: Y(v), stroke: '#ddd' }, svg);
        var ty = el('text', { x: L - 5, y: Y(v) + 4, 'text-anchor': 'end', 'class': 'ps-axis' }, svg);
        ty.textContent = fmt(v) + (i === 5 && unit ? ' ' + unit : '');
      }
    }
    return { svg: svg, X: X, Y: Y };
  }

  function shade(f, phases, T, B, H) {
    (phases || []).forEach(function (p, i) {
      if (p.depth) return;
      var r = el('rect', { x: f.X(p.t0), y: T, width: Math.max(0.5, f.X(p.t1) - f.X(p.t0)), height: H - T - B,
                           fill: SHADE[i % 2], 'class': 'ps-shade' }, f.svg);
      el('title', {}, r).textContent = p.name + ': ' + fmt(p.t0) + ' s to ' + fmt(p.t1) + ' s';
      var tx = el('text', { x: f.X(p.t0) + 2, y: T + 11, 'class': 'ps-shade-label' }, f.svg);
      tx.textContent = p.name;
    });
  }

  function lines(div, d) {
    var W = Math.max(600, Math.min(1400, div.clientWidth || 1160)), H = 240;
    var tmax = d.t1 || 0, ymax = 0, total = 0;
    d.series.forEach(function (s) {
      s.t.forEach(function (t) { if (t > tmax) tmax = t; });
      s.v.forEach(function (v) { if (v > ymax) ymax = v; });
      total += s.v.length;
    });
    var f = frame(div, W, H, 70, 20, 8, 26, tmax, niceMax(ymax), d.unit);
    shade(f, d.phases, 8, 26, H);
    var legend = document.createElement('div');
    legend.className = 'ps-legend';
    d.series.forEach(function (s, k) {
      var pts = s.t.map(function (t, i) { return f.X(t).toFixed(1) + ',' + f.Y(s.v[i]).toFixed(1); });
      var pl = el('polyline', { points: pts.join(' '), fill: 'none', stroke: COLOURS[k % COLOURS.length],
                                'stroke-width': 1.8, 'stroke-dasharray': DASH[k % DASH.length],
                                'class': 'ps-series', 'data-name': s.name, 'data-points': s.v.length }, f.svg);
      el('title', {}, pl).textContent = s.name;
      if (s.v.length === 1) el('circle', { cx: f.X(s.t[0]), cy: f.Y(s.v[0]), r: 2.5, fill: COLOURS[k % COLOURS.length] }, f.svg);
      var span = document.createElement('span');
      var sw = document.createElementNS(NS, 'svg');
      sw.setAttribute('width', 28); sw.setAttribute('height', 10);
      el('line', { x1: 0, y1: 5, x2: 28, y2: 5, stroke: COLOURS[k % COLOURS.length], 'stroke-width': 2,
                   'stroke-dasharray': DASH[k % DASH.length] }, sw);
      span.appendChild(sw);
      span.appendChild(document.createTextNode(' ' + s.name));
      legend.appendChild(span);
    });
    f.svg.setAttribute('data-points', total);
    div.appendChild(f.svg);
    div.appendChild(legend);
  }

  function timeline(div, d) {
    var W = Math.max(600, Math.min(1400, div.clientWidth || 1160)), LANE = 20;
    var depth = 0;
    (d.phases || []).forEach(function (p) { if (p.depth + 1 > depth) depth = p.depth + 1; });
    var procs = d.procs || [];
    var lanes = depth + procs.length, T = 4, B = 26, L = 150, H = T + B + Math.max(1, lanes) * LANE;
    var f = frame(div, W, H, L, 20, T, B, d.t1 || 0, null, 's');
    var lab = function (y, s) {
      var t = el('text', { x: L - 6, y: y + LANE - 6, 'text-anchor': 'end', 'class': 'ps-axis' }, f.svg);
      t.textContent = s;
    };
    for (var k = 0; k < depth; k++) lab(T + k * LANE, k ? 'phases, nested ' + k : 'phases');
    (d.phases || []).forEach(function (p, i) {
      var y = T + p.depth * LANE, x0 = f.X(p.t0), w = Math.max(1, f.X(p.t1) - x0);
      var r = el('rect', { x: x0, y: y + 2, width: w, height: LANE - 4, fill: COLOURS[(p.g || 0) % COLOURS.length],
                           'fill-opacity': 0.75, stroke: '#222', 'stroke-width': 0.5, 'class': 'ps-phase',
                           'data-name': p.name }, f.svg);
      el('title', {}, r).textContent = p.name + ': ' + fmt(p.t0) + ' s to ' + fmt(p.t1) + ' s (' + fmt(p.t1 - p.t0) + ' s)' +
        (p.open ? ', never ended' : '');
      if (w > 40) {
        var t = el('text', { x: x0 + 3, y: y + LANE - 6, 'class': 'ps-bar-label', 'pointer-events': 'none' }, f.svg);
        t.textContent = p.name;
      }
    });
    procs.forEach(function (p, i) {
      var y = T + (depth + i) * LANE, x0 = f.X(p.t0), w = Math.max(1, f.X(p.t1) - x0);
      lab(y, (p.exe || 'process') + ' (' + p.pid + ')');
      var r = el('rect', { x: x0, y: y + 4, width: w, height: LANE - 8, fill: '#7f8c8d', 'class': 'ps-proc' }, f.svg);
      el('title', {}, r).textContent = (p.exe || 'process') + ', pid ' + p.pid + ': ' + fmt(p.t0) + ' s to ' + fmt(p.t1) + ' s';
    });
    div.appendChild(f.svg);
  }

  var n = 0;
  ['lines', 'timeline'].forEach(function (kind) {
    var divs = document.querySelectorAll('div.ps-' + kind);
    for (var i = 0; i < divs.length; i++) {
      var d = JSON.parse(divs[i].querySelector('script.ps-data').textContent);
      if (d) (kind === 'lines' ? lines : timeline)(divs[i], d);
      n++;
    }
  });
  document.body.setAttribute('data-charts', n);
})();
