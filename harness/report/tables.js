// The report's tables, sortable and filterable in the page itself (no
// network, works from file://). A click on a column head sorts the rows
// below it by that column, again in reverse: by the cell's data-v (the raw
// number behind a formatted one) or its text, numbers before blanks. The
// filter box shows the folded configurations whose name holds every word
// typed; "open all" and "close all" unfold or fold those shown. The
// all-configurations table shows the rows whose backend, verdict and
// ratio (data-backend, data-verdict, data-ratio) match its filters; a row
// without a ratio is hidden once a ratio bound is set.
(() => {
  const key = td => {
    const v = td.dataset.v !== undefined ? td.dataset.v : td.textContent.trim();
    const n = parseFloat(v);
    return Number.isFinite(n) && /^[-+]?[0-9.]/.test(v) ? n : v;
  };
  const compare = (a, b) => {
    const na = typeof a === 'number', nb = typeof b === 'number';
    if (na && nb) return a - b;
    if (na !== nb) return na ? -1 : 1; // numbers before text and blanks
    return String(a).localeCompare(String(b));
  };
  document.querySelectorAll('table.sortable').forEach(table => {
    const head = table.rows[0];
    [...head.cells].forEach((th, col) => {
      th.classList.add('sort');
      th.title = 'sort by ' + th.textContent;
      th.addEventListener('click', () => {
        const dir = th.dataset.dir === 'up' ? -1 : 1;
        [...head.cells].forEach(h => delete h.dataset.dir);
        th.dataset.dir = dir === 1 ? 'up' : 'down';
        const rows = [...table.rows].slice(1);
        rows.sort((a, b) => dir * compare(key(a.cells[col]), key(b.cells[col])));
        rows.forEach(r => r.parentNode.appendChild(r));
      });
    });
  });
  document.querySelectorAll('div.fold-tools').forEach(tools => {
    const section = tools.parentNode;
    const folds = () => [...section.querySelectorAll('details.config')].filter(d => d.parentNode === section);
    const input = tools.querySelector('input');
    const count = tools.querySelector('.shown');
    input.addEventListener('input', () => {
      const words = input.value.toLowerCase().split(/\s+/).filter(w => w);
      let shown = 0;
      folds().forEach(d => {
        const name = d.querySelector('summary').textContent.toLowerCase();
        d.hidden = !words.every(w => name.includes(w));
        shown += d.hidden ? 0 : 1;
      });
      count.textContent = shown + ' shown';
    });
    tools.querySelector('.open').addEventListener('click', () => folds().forEach(d => { if (!d.hidden) d.open = true; }));
    tools.querySelector('.close').addEventListener('click', () => folds().forEach(d => { d.open = false; }));
  });
  document.querySelectorAll('div.all-tools').forEach(tools => {
    let table = tools.nextElementSibling;
    table = table && table.querySelector('table.all');
    if (!table) return;
    const get = cls => tools.querySelector(cls);
    const count = get('.shown');
    const apply = () => {
      const backend = get('.f-backend').value, verdict = get('.f-verdict').value;
      const lo = parseFloat(get('.f-lo').value), hi = parseFloat(get('.f-hi').value);
      let shown = 0;
      [...table.rows].slice(1).forEach(row => {
        const ratio = parseFloat(row.dataset.ratio);
        const ok = (!backend || row.dataset.backend === backend) && (!verdict || row.dataset.verdict === verdict) &&
          (Number.isNaN(lo) || ratio >= lo) && (Number.isNaN(hi) || ratio <= hi);
        row.hidden = !ok;
        shown += ok ? 1 : 0;
      });
      count.textContent = shown + ' of ' + (table.rows.length - 1) + ' rows shown';
    };
    tools.querySelectorAll('select, input').forEach(el => el.addEventListener('input', apply));
    apply();
  });
})();
