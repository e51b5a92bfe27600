// Evaluated in headless Chromium by layout_test.go once the page's fonts
// have loaded: every chart's text boxes (as rotated quads in page
// coordinates), the width the browser gives each text, and the filled
// shapes (cells, bars, glyphs) as boxes. The result goes into the DOM as
// JSON for --dump-dom to carry out.
document.fonts.ready.then(() => {
  const out = {fonts: [], charts: []};
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
      width: t.getComputedTextLength(),
      font: getComputedStyle(t).fontFamily,
      quad: corners(t, t.getBBox()),
    }));
    const shapes = [...svg.querySelectorAll('path')].filter(p => {
      const cs = getComputedStyle(p);
      return cs.fill !== 'none' && cs.fill !== 'rgb(255, 255, 255)';
    }).map(p => corners(p, p.getBBox()));
    out.charts.push({name: fig.id, texts, shapes});
  });
  const pre = document.createElement('pre');
  pre.id = 'xbench-layout';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
