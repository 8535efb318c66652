// Zoom and pan of the report's thread timelines, along the time axis only:
// scroll to zoom around the pointer, drag to pan, double-click to reset.
// Timelines of one run (measured and predicted) move together. Each SVG says
// where its plot is: data-tl-x0 / data-tl-w (px), data-tl-t1 (ms at the right
// end), data-tl-y (the axis line); its boxes sit in .tl-zoom, its axis in .tl-axis.
(function () {
  var groups = {};
  function num(s, k) { return parseFloat(s.getAttribute('data-tl-' + k)); }
  function ms(v) {
    if (v === 0) return '0s';
    if (v < 9.995) return v.toFixed(2) + 'ms';
    if (v < 99.95) return v.toFixed(1) + 'ms';
    if (v < 999.5) return v.toFixed(0) + 'ms';
    if (v < 9995) return (v / 1e3).toFixed(2) + 's';
    return (v / 1e3).toFixed(1) + 's';
  }
  function ticks(a, b) {
    var raw = (b - a) / 5, step = Math.pow(10, Math.floor(Math.log(raw) / Math.LN10));
    if (raw / step >= 5) step *= 5; else if (raw / step >= 2) step *= 2;
    var out = [];
    for (var v = Math.ceil(a / step) * step; v <= b + step * 1e-9; v += step) out.push(v);
    return out;
  }
  function draw(s, a, b) {
    var x0 = num(s, 'x0'), w = num(s, 'w'), t1 = num(s, 't1'), y = num(s, 'y');
    var k = t1 / (b - a);
    s.querySelector('.tl-zoom').setAttribute('transform',
      'matrix(' + k + ',0,0,1,' + (x0 * (1 - k) - a * w / (b - a)) + ',0)');
    var axis = s.querySelector('.tl-axis'), ns = s.namespaceURI;
    while (axis.firstChild) axis.removeChild(axis.firstChild);
    ticks(a, b).forEach(function (v) {
      var px = x0 + (v - a) / (b - a) * w;
      var line = document.createElementNS(ns, 'line');
      line.setAttribute('x1', px); line.setAttribute('x2', px);
      line.setAttribute('y1', y + 2); line.setAttribute('y2', y + 6);
      line.setAttribute('stroke', '#555555');
      var text = document.createElementNS(ns, 'text');
      text.setAttribute('x', px); text.setAttribute('y', y + 17);
      text.setAttribute('text-anchor', 'middle');
      text.textContent = ms(Math.round(v * 1e3) / 1e3);
      axis.appendChild(line); axis.appendChild(text);
    });
    s.setAttribute('data-tl-a', a); s.setAttribute('data-tl-b', b);
  }
  function show(s, a, b) {
    var t1 = num(s, 't1'), width = Math.max(b - a, t1 / 5000);
    if (width > t1) width = t1;
    a = Math.min(Math.max(a, 0), t1 - width);
    groups[s.getAttribute('data-tl-group')].forEach(function (o) { draw(o, a, a + width); });
  }
  // The time (ms) under the pointer of event e, in svg s.
  function at(s, e) {
    var r = s.getBoundingClientRect(), scale = r.width / s.viewBox.baseVal.width;
    var a = num(s, 'a'), b = num(s, 'b');
    return a + ((e.clientX - r.left) / scale - num(s, 'x0')) / num(s, 'w') * (b - a);
  }
  document.querySelectorAll('svg.timeline').forEach(function (s) {
    var g = s.getAttribute('data-tl-group');
    (groups[g] = groups[g] || []).push(s);
    s.setAttribute('data-tl-a', 0); s.setAttribute('data-tl-b', num(s, 't1'));
    s.addEventListener('wheel', function (e) {
      e.preventDefault();
      var t = at(s, e), a = num(s, 'a'), b = num(s, 'b'), f = e.deltaY > 0 ? 1.25 : 0.8;
      show(s, t - (t - a) * f, t + (b - t) * f);
    }, { passive: false });
    var drag = null;
    s.addEventListener('mousedown', function (e) { drag = { t: at(s, e), a: num(s, 'a'), b: num(s, 'b') }; });
    window.addEventListener('mouseup', function () { drag = null; });
    s.addEventListener('mousemove', function (e) {
      if (!drag) return;
      var d = at(s, e) - drag.t;
      show(s, num(s, 'a') - d, num(s, 'b') - d);
    });
    s.addEventListener('dblclick', function () { show(s, 0, num(s, 't1')); });
    s.style.cursor = 'grab';
    s.setAttribute('data-tl-ready', '1');
  });
})();
