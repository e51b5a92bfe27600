// Evaluated in headless Chromium by layout_test.go once the page's fonts
// have loaded: every chart's text boxes (as rotated quads in page
// coordinates), the width the browser gives each text and the size it is
// drawn at on the screen, the filled shapes (cells, bars, glyphs) as
// boxes, each bar's box as the chart records it (its tooltip rectangle),
// the smallest text of the page outside the charts and how wide the page
// is against the window. The result goes into the DOM as JSON for
// --dump-dom to carry out.
document.fonts.ready.then(() => {
  const out = {fonts: [], charts: [], viewport: window.innerWidth, pageWidth: document.documentElement.scrollWidth, smallestText: 1e9, smallestTextOf: ''};
  document.querySelectorAll('body *:not(svg):not(svg *):not(script):not(style)').forEach(el => {
    if (![...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) return;
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) return; // folded or hidden
    const size = parseFloat(getComputedStyle(el).fontSize);
    if (size < out.smallestText) { out.smallestText = size; out.smallestTextOf = el.tagName + ': ' + el.textContent.trim().slice(0, 60); }
  });
  document.fonts.forEach(f => out.fonts.push(f.family.replace(/"/g, '') + ' ' + f.status));
  const corners = (el, b) => {
    const m = el.getScreenCTM();
    return [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]]
      .map(([x, y]) => { const p = new DOMPoint(x, y).matrixTransform(m); return [p.x, p.y]; });
  };
  document.querySelectorAll('figure').forEach(fig => {
    const svg = fig.querySelector('svg');
    if (!svg) return;
    const texts = [...svg.querySelectorAll('text')].map(t => ({
      text: t.textContent,
      size: parseFloat(getComputedStyle(t).fontSize),
      screenSize: parseFloat(getComputedStyle(t).fontSize) * Math.hypot(t.getScreenCTM().a, t.getScreenCTM().b),
      width: t.getComputedTextLength(),
      font: getComputedStyle(t).fontFamily,
      quad: corners(t, t.getBBox()),
    }));
    const shapes = [...svg.querySelectorAll('path')].filter(p => {
      const cs = getComputedStyle(p);
      return cs.fill !== 'none' && cs.fill !== 'rgb(255, 255, 255)';
    }).map(p => corners(p, p.getBBox()));
    const bars = [...svg.querySelectorAll('g.hover rect.bar')].map(b => ({text: b.querySelector('title').textContent, quad: corners(b, b.getBBox())}));
    const box = svg.getBoundingClientRect();
    out.charts.push({name: fig.id, texts, shapes, bars, box: [box.left, box.top, box.right, box.bottom]});
  });
  const pre = document.createElement('pre');
  pre.id = 'xbench-layout';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
