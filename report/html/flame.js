/* flame.js: draws every flame graph of report.html (a div.ps-flame holding its tree as JSON,
 * report/html/flametree.h's node schema) as SVG: width = samples, the root at the bottom, click
 * a frame to zoom into it (click the root or "reset" to zoom out), a search box that highlights
 * the frames whose name holds the text and sums their share (a frame inside another match is
 * counted once), a tooltip (an SVG title, made on the first hover) with the full name, module, file:line, samples and share.
 * Inline frames are hatched, frames of a cut stack ("[truncated]") are grey with a cross-hatch.
 * Colours: one sequential palette by module (dark blue to yellow, readable in grey and for
 * colour-blind readers); a tree whose nodes carry "d" (a differential graph) is coloured by it
 * from blue (less) to orange (more), each frame's value in data-d. The page's URL hash "#search=TEXT" fills every search box.
 * What it drew goes into the DOM as data attributes (data-samples, data-width in px, data-share
 * in %), so a headless browser's DOM dump can be checked. It must never fetch anything. */
(function () {
  'use strict';
  var NS = document.getElementById('ps-ns').namespaceURI;
  var ROW = 17, MINPX = 0.25;
  /* sequential, colour-blind safe (viridis-like), light enough for black text */
  var PALETTE = ['#7fb3d5', '#a9cce3', '#76d7c4', '#a3e4d7', '#f7dc6f', '#f8c471', '#d7bde2', '#c8d1d9',
                 '#aed6f1', '#abebc6', '#f9e79f', '#fad7a0'];

  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  function pct(x) { return (100 * x).toFixed(2); }

  function esc(s) {
    return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  }

  function num(x) { return Math.abs(x) >= 100 ? x.toFixed(1) : x.toPrecision(4); }

  /* a differential node (perfscope diff --html): "v" B's value, "a" A's, "d" the change, "p"
   * the function's p-value where it has one; the root's "u" names the unit, "du" the change's */
  function difftip(n, root) {
    var u = root.u ? ' ' + root.u : '';
    return n.n + (n.depth === 0 ? ' (the whole phase)' : '') +
      '\nB: ' + num(n.v) + u + ' (' + pct(n.v / root.v) + '% of B\'s phase)' +
      '\nA: ' + num(n.a) + u + (root.a ? ' (' + pct(n.a / root.a) + '% of A\'s phase)' : '') +
      '\nchange: ' + (n.d > 0 ? '+' : '') + n.d.toFixed(2) + (root.du ? ' ' + root.du : '') +
      (typeof n.p === 'number' ? '\np-value (' + (n.pk || 'over runs') + '): ' + n.p.toPrecision(2) : '');
  }

  function tooltip(n, root) {
    if (typeof n.d === 'number' && typeof n.a === 'number') return difftip(n, root);
    return n.n + (n.depth === 0 ? ' (all samples of the phase)' : '') +
      (n.m ? '\nmodule: ' + n.m : '') + (n.f ? '\nsource: ' + n.f : '') +
      '\nsamples: ' + n.v + ' (' + pct(n.v / root.v) + '% of the phase)' +
      (typeof n.d === 'number' ? '\nchange: ' + (n.d > 0 ? '+' : '') + n.d : '') +
      (n.i ? '\ninlined into its caller' : '') + (n.t ? '\nthe stack was cut at max frames: its outer frames are unknown' : '');
  }

  function divColour(d, maxd) {
    var t = maxd > 0 ? Math.max(-1, Math.min(1, d / maxd)) : 0;
    /* blue (-) through near-white to orange (+) */
    var a = [33, 102, 172], w = [247, 247, 247], o = [230, 97, 1];
    var to = t < 0 ? a : o, s = Math.abs(t);
    return 'rgb(' + [0, 1, 2].map(function (i) { return Math.round(w[i] + (to[i] - w[i]) * s); }).join(',') + ')';
  }

  function prepare(root) {
    var modules = {}, maxDepth = 0, maxd = 0, diff = false;
    (function walk(n, depth, parent) {
      n.parent = parent; n.depth = depth;
      if (depth > maxDepth) maxDepth = depth;
      if (n.m) modules[n.m] = (modules[n.m] || 0) + (n.v || 0);
      if (typeof n.d === 'number') { diff = true; maxd = Math.max(maxd, Math.abs(n.d)); }
      var c = n.c || [];
      c.sort(function (a, b) { return a.n < b.n ? -1 : a.n > b.n ? 1 : 0; });
      for (var i = 0; i < c.length; i++) walk(c[i], depth + 1, n);
    })(root, 0, null);
    var order = Object.keys(modules).sort(function (a, b) { return modules[b] - modules[a]; });
    var colour = {};
    order.forEach(function (m, i) { colour[m] = PALETTE[i % PALETTE.length]; });
    /* the root's "dmax" (when given): the change drawn at full colour, so that a small change
     * stays pale however small the others are */
    if (typeof root.dmax === 'number' && root.dmax > 0) maxd = Math.max(maxd, root.dmax);
    return { maxDepth: maxDepth, colour: colour, modules: order, diff: diff, maxd: maxd };
  }

  function defs(svg, id) {
    var d = el('defs', {}, svg);
    var p = el('pattern', { id: id + '-inl', width: 6, height: 6, patternUnits: 'userSpaceOnUse',
                            patternTransform: 'rotate(45)' }, d);
    el('line', { x1: 0, y1: 0, x2: 0, y2: 6, stroke: '#000', 'stroke-opacity': 0.35, 'stroke-width': 2 }, p);
    var q = el('pattern', { id: id + '-cut', width: 6, height: 6, patternUnits: 'userSpaceOnUse' }, d);
    el('path', { d: 'M0,0L6,6M6,0L0,6', stroke: '#000', 'stroke-opacity': 0.5, 'stroke-width': 1 }, q);
  }

  function Graph(div, idx) {
    var script = div.querySelector('script.ps-data');
    var root = JSON.parse(script.textContent);
    this.div = div; this.root = root; this.id = 'fl' + idx;
    if (!root || !root.v) {
      var p = document.createElement('p');
      p.className = 'ps-note';
      p.textContent = 'No stack samples in this phase.';
      div.appendChild(p);
      this.empty = true;
      return;
    }
    this.info = prepare(root);
    this.width = Math.max(600, Math.min(1400, div.clientWidth || 1160));
    var bar = document.createElement('div');
    bar.className = 'ps-flame-bar';
    var input = document.createElement('input');
    input.type = 'search'; input.placeholder = 'search functions'; input.className = 'ps-search';
    var reset = document.createElement('button');
    reset.textContent = 'reset zoom'; reset.type = 'button';
    var result = document.createElement('span');
    result.className = 'ps-search-result';
    bar.appendChild(input); bar.appendChild(reset); bar.appendChild(result);
    div.appendChild(bar);
    this.input = input; this.result = result;
    var self = this;
    input.addEventListener('input', function () { self.search(input.value); });
    reset.addEventListener('click', function () { self.zoom(self.root); });
    if (root.hidden) {
      var note = document.createElement('p');
      note.className = 'ps-note';
      note.textContent = root.hidden + ' frames of fewer than ' + root.min + ' samples are left out of this page (a gap ' +
        'in their caller); stacks.folded and profile.pb.gz have them all.';
      div.appendChild(note);
    }
    this.legend();
    this.zoom(root);
  }

  Graph.prototype.legend = function () {
    var lg = document.createElement('div');
    lg.className = 'ps-legend';
    var info = this.info;
    var html = [];
    if (info.diff) {
      html.push('<span><i style="background:' + divColour(-1, 1) + '"></i>less in B than in A</span>');
      html.push('<span><i style="background:' + divColour(1, 1) + '"></i>more in B than in A</span>');
    } else {
      info.modules.slice(0, 8).forEach(function (m) {
        var s = document.createElement('span');
        s.textContent = m;
        html.push('<span><i style="background:' + info.colour[m] + '"></i>' + s.innerHTML + '</span>');
      });
    }
    html.push('<span><i class="ps-inl"></i>inlined</span><span><i class="ps-cut"></i>stack cut at max frames</span>');
    lg.innerHTML = html.join('');
    this.div.appendChild(lg);
  };

  Graph.prototype.zoom = function (focus) {
    this.focus = focus;
    var W = this.width, info = this.info, root = this.root, id = this.id;
    /* what is wide enough to draw, first: the graph is as tall as the deepest of it */
    var todo = [], hidden = 0, deepest = 0;
    var scale = W / focus.v;
    for (var a = focus.parent; a; a = a.parent) todo.push([a, 0, W]); /* ancestors span the width */
    (function layout(n, x) {
      var w = n.v * scale;
      if (w < MINPX) { hidden++; return; }
      todo.push([n, x, w]);
      if (n.depth > deepest) deepest = n.depth;
      var cx = x, c = n.c || [];
      for (var i = 0; i < c.length; i++) { layout(c[i], cx); cx += c[i].v * scale; }
    })(focus, 0);
    var H = (deepest + 1) * ROW + 4;
    if (this.svg) this.svg.parentNode.removeChild(this.svg);
    var svg = el('svg', { width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, 'class': 'ps-flame-svg',
                          role: 'img', 'aria-label': 'flame graph of ' + this.div.getAttribute('data-title') });
    defs(svg, id);
    /* one string of markup, parsed once (thousands of frames draw in a few ms); the tooltip
     * (an SVG title) is made when a frame is first hovered */
    var self = this, parts = [], drawn = [];
    todo.forEach(function (p) { place(p[0], p[1], p[2]); });
    function place(n, x, w) {
      var k = drawn.length;
      drawn.push(n);
      var y = H - (n.depth + 1) * ROW, xs = x.toFixed(2), ws = Math.max(0, w - 0.5).toFixed(2);
      var fill = n.depth === 0 ? '#d5d8dc' : info.diff ? divColour(n.d || 0, info.maxd)
               : n.t ? '#bfbfbf' : (info.colour[n.m] || '#c8d1d9');
      parts.push('<g class="ps-frame' + (n.i ? ' ps-inline' : '') + (n.t ? ' ps-truncated' : '') + '" data-idx="' + k + '">' +
        '<rect x="' + xs + '" y="' + y + '" width="' + ws + '" height="' + (ROW - 1) + '" fill="' + fill +
        '" data-name="' + esc(n.n) + '" data-samples="' + n.v + '" data-width="' + w.toFixed(2) +
        (info.diff ? '" data-d="' + (n.d || 0) : '') +
        '" data-share="' + pct(n.v / root.v) + '"></rect>');
      if (n.i) parts.push('<rect x="' + xs + '" y="' + y + '" width="' + ws + '" height="' + (ROW - 1) +
                          '" fill="url(#' + id + '-inl)" pointer-events="none"></rect>');
      if (n.t) parts.push('<rect x="' + xs + '" y="' + y + '" width="' + ws + '" height="' + (ROW - 1) +
                          '" fill="url(#' + id + '-cut)" pointer-events="none"></rect>');
      if (w > 28) {
        var chars = Math.floor((w - 6) / 6.5);
        var label = n.n.length > chars ? n.n.slice(0, Math.max(0, chars - 2)) + '..' : n.n;
        parts.push('<text x="' + (x + 3).toFixed(2) + '" y="' + (y + ROW - 5) + '" pointer-events="none">' + esc(label) + '</text>');
      }
      parts.push('</g>');
    }
    var holder = el('g', {}, svg);
    holder.innerHTML = parts.join('');
    var rects = holder.querySelectorAll('g > rect[data-name]');
    for (var k = 0; k < rects.length; k++) drawn[k].rect = rects[k];
    function frameOf(ev) {
      var g = ev.target.closest ? ev.target.closest('g[data-idx]') : null;
      return g ? [g, drawn[+g.getAttribute('data-idx')]] : null;
    }
    svg.addEventListener('mouseover', function (ev) {
      var f = frameOf(ev);
      if (!f || f[0].querySelector('title')) return;
      el('title', {}, f[0]).textContent = tooltip(f[1], root);
    });
    svg.addEventListener('click', function (ev) {
      var f = frameOf(ev);
      if (f) self.zoom(f[1] === self.focus && f[1].parent ? f[1].parent : f[1]);
    });
    svg.setAttribute('data-frames', drawn.length);
    svg.setAttribute('data-hidden', hidden);
    svg.setAttribute('data-samples', root.v);
    svg.setAttribute('data-focus', focus.n);
    this.div.insertBefore(svg, this.div.querySelector('.ps-legend'));
    this.svg = svg;
    if (this.term) this.search(this.term);
  };

  Graph.prototype.search = function (term) {
    this.term = term;
    var rects = this.svg.querySelectorAll('rect[data-name]');
    for (var i = 0; i < rects.length; i++) rects[i].classList.remove('ps-match');
    if (!term) { this.result.textContent = ''; this.result.removeAttribute('data-share'); return; }
    var sum = 0, matches = 0, root = this.root, svg = this.svg;
    (function walk(n, inside) {
      var hit = n !== root && n.n.indexOf(term) >= 0;
      if (hit) { matches++; if (n.rect && n.rect.ownerSVGElement === svg) n.rect.classList.add('ps-match'); }
      if (hit && !inside) sum += n.v;
      var c = n.c || [];
      for (var i = 0; i < c.length; i++) walk(c[i], inside || hit);
    })(root, false);
    var share = root.v ? sum / root.v : 0;
    this.result.textContent = matches + ' frame' + (matches === 1 ? '' : 's') + ' match "' + term + '": ' +
      pct(share) + '% of the samples (' + sum + ')';
    this.result.setAttribute('data-share', pct(share));
    this.result.setAttribute('data-samples', sum);
    this.result.setAttribute('data-matches', matches);
  };

  var graphs = [];
  var divs = document.querySelectorAll('div.ps-flame');
  for (var i = 0; i < divs.length; i++) {
    try { graphs.push(new Graph(divs[i], i)); }
    catch (e) { divs[i].appendChild(document.createTextNode('flame graph failed: ' + e)); throw e; }
  }
  function fromHash() {
    var m = /(?:^#|&)search=([^&]*)/.exec(location.hash);
    if (!m) return;
    var term = decodeURIComponent(m[1]);
    graphs.forEach(function (g) { if (!g.empty) { g.input.value = term; g.search(term); } });
  }
  fromHash();
  window.addEventListener('hashchange', fromHash);
  document.body.setAttribute('data-flames', graphs.length);
  /* when the last picture was drawn, in ms since the page began loading (bench/html.sh reads it) */
  document.body.setAttribute('data-ready-ms', Math.round(performance.now()));
})();
