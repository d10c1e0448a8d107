// The report page's script: reads the JSON data element and draws the sections with Chart.js.
// Inlined into every page by src/report/html_page.cpp (see docs/report.md).
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('tunekit-data').textContent);
  const app = document.getElementById('app');
  const charts = [];
  const palette = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2',
                   '#7f7f7f', '#bcbd22', '#17becf', '#393b79', '#637939', '#8c6d31', '#843c39',
                   '#7b4173', '#3182bd', '#e6550d', '#31a354', '#756bb1', '#636363', '#9c9ede',
                   '#cedb9c', '#e7ba52', '#e7969c', '#de9ed6', '#6baed6', '#fd8d3c', '#74c476'];
  const colours = new Map();
  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.font.size = 11;
  // After each drawing, how many data elements Chart.js placed inside each chart's area (read by
  // tests/integration/report_browser_test.py).
  Chart.register({
    id: 'tunekitMarks',
    afterRender: (c) => {
      const area = c.chartArea;
      let marks = 0;
      c.data.datasets.forEach((_, i) => {
        for (const e of c.getDatasetMeta(i).data) {
          if (Number.isFinite(e.x) && Number.isFinite(e.y) && !e.skip && e.x >= area.left - 1 &&
              e.x <= area.right + 1) {
            marks++;
          }
        }
      });
      c.canvas.dataset.marks = String(marks);
      // The labels of the ticks on each axis, '|'-separated (e.g. data-x-ticks).
      for (const [id, scale] of Object.entries(c.scales)) {
        c.canvas.dataset[id + 'Ticks'] = scale.ticks.map((t) => t.label).join('|');
      }
    },
  });

  function colour(name) {
    if (name === 'tuned' || name.startsWith('tuned')) return '#000000';
    if (!colours.has(name)) colours.set(name, palette[colours.size % palette.length]);
    return colours.get(name);
  }
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return e;
  }
  function num(v, digits) {
    if (v === null || v === undefined || !Number.isFinite(v)) return '-';
    const a = Math.abs(v);
    if (a >= 100) return v.toFixed(1);
    if (a >= 0.01) return v.toFixed(digits === undefined ? 3 : digits);
    return v.toPrecision(3);
  }
  // At most `n` characters; a cut text ends in an ellipsis.
  function clip(text, n) { return text.length > n ? text.slice(0, n - 1) + '\u2026' : text; }
  function ratio(v) { return Number.isFinite(v) ? v.toFixed(2) + 'x' : '-'; }
  function geomean(xs) {
    const v = xs.filter((x) => Number.isFinite(x) && x > 0);
    return v.length ? Math.exp(v.reduce((s, x) => s + Math.log(x), 0) / v.length) : NaN;
  }
  function table(header, rows) {
    const t = el('table', {}, el('thead', {}, el('tr', {}, ...header.map((h) => el('th', {}, h)))));
    const body = el('tbody');
    // Long configuration names may wrap; numbers and problems stay on one line.
    const cell = (c) => el('td', String(c).length > 40 ? {class: 'wrap'} : {}, c);
    for (const r of rows) body.append(el('tr', {}, ...r.map(cell)));
    t.append(body);
    return el('div', {class: 'scroll'}, t);
  }
  // Whether any dataset of a chart's config has a finite value to draw.
  function hasData(config) {
    const finite = (v) => Number.isFinite(v !== null && typeof v === 'object' ? v.y : v);
    return config.data.datasets.some((d) => d.data.some(finite));
  }
  function chart(parent, title, config, tall) {
    if (!hasData(config)) {
      parent.append(el('figure', {class: 'chart empty'}, el('figcaption', {}, title),
                       el('p', {class: 'nodata'}, 'No data to draw.')));
      return;
    }
    const canvas = el('canvas', {'aria-label': title, role: 'img'});
    const box = el('figure', {class: 'chart'}, el('figcaption', {}, title),
                   el('div', {class: tall ? 'canvas tall' : 'canvas'}, canvas));
    parent.append(box);
    charts.push({chart: new Chart(canvas, config), canvas: canvas});
  }
  function logAxis(title) { return {type: 'logarithmic', title: {display: true, text: title}}; }
  function axis(title) { return {title: {display: true, text: title}}; }
  // "tn_4096_16_11008_ld_..." -> "4096\u00d716\u00d711008" (m x n x k); other forms shortened.
  function shortLabel(params) {
    const m = /^[a-z]{2}_(\d+)_(\d+)_(\d+)/i.exec(params);
    if (m) return m[1] + '\u00d7' + m[2] + '\u00d7' + m[3];
    return params.length > 28 ? params.slice(0, 27) + '\u2026' : params;
  }

  function header() {
    app.append(el('h1', {}, data.title));
    app.append(el('p', {class: 'meta'}, 'generated ' + data.generated + ' by tunekit ' +
                  data.tunekit_version + ' \u00b7 ' + data.ops.length + ' op group(s), ' +
                  data.searches.length + ' search(es), ' + data.comparisons.length +
                  ' comparison run(s)'));
  }

  function environments() {
    if (!data.environments.length) return;
    const s = el('section', {id: 'machines'}, el('h2', {}, 'Machines and library versions'));
    s.append(table(['#', 'CPU', 'threads', 'tunekit', 'libraries', 'source'],
      data.environments.map((e) => [e.id, e.cpu_model || '-', e.threads || '-',
        e.tunekit_version || '-',
        Object.entries(e.libraries).map(([k, v]) => k.replace(/_VERSION$/, '') + ' ' + v)
          .join(', ') || '-', e.source])));
    app.append(s);
  }

  function opSection(g) {
    const s = el('section', {class: 'op'});
    const env = data.environments.find((e) => e.id === g.environment && e.source === g.source);
    s.append(el('h2', {}, g.op + (env ? ' \u2014 ' + env.cpu_model + ', ' + env.threads +
                                        ' thread(s)' : '')));
    const p = g.problems;
    s.append(el('p', {}, p.length + ' problem(s); speed-up over Default: geometric mean ' +
      ratio(geomean(p.map((x) => x.speedup_default))) +
      (g.best_library ? '; best single library ' + g.best_library + ' takes ' +
       ratio(g.best_library_over_tuned) + ' the tuned time (geometric mean)' : '')));
    s.append(table(['problem', 'winner', 'ms', 'GFLOP/s', 'Default ms', 'vs Default',
                    'vs ' + (g.best_library || 'best library'), 'runner-up'],
      p.map((x) => [x.params, x.winner, num(x.time_ms), num(x.gflops, 1), num(x.default_ms),
                    ratio(x.speedup_default), ratio(x.speedup_best_library),
                    x.runner_up ? x.runner_up + ' (' + num(x.runner_up_ms) + ')' : '-'])));
    const wide = el('div', {class: 'grid wide'});
    const grid = el('div', {class: 'grid'});
    s.append(wide, grid);
    const labels = p.map((x) => shortLabel(x.params));
    const names = [];
    for (const x of p) for (const c of x.candidates) if (!names.includes(c.name)) names.push(c.name);
    const datasets = names.map((n) => ({
      label: n, showLine: false, pointRadius: 3, backgroundColor: colour(n), borderColor: colour(n),
      data: p.map((x) => { const c = x.candidates.find((c) => c.name === n);
                           return c && c.outcome === 'measured' && c.time_ms > 0 ? c.time_ms : null; })}));
    datasets.unshift({label: 'winner', showLine: false, pointStyle: 'star', pointRadius: 9,
                      borderWidth: 2, borderColor: '#000', backgroundColor: '#000',
                      data: p.map((x) => x.time_ms)});
    chart(wide, 'Every candidate\u2019s time per problem (ms, log scale; star: winner; problems m\u00d7n\u00d7k)',
          {type: 'line', data: {labels: labels, datasets: datasets},
           options: {scales: {y: logAxis('ms per call'), x: {ticks: {autoSkip: false}}},
                     plugins: {legend: {position: 'right', labels: {boxWidth: 10}}}}}, true);
    chart(grid, 'Speed-up of the winner per problem',
          {type: 'bar', data: {labels: labels, datasets: [
             {label: 'over Default', backgroundColor: '#1f77b4', data: p.map((x) => x.speedup_default)},
             {label: 'over ' + (g.best_library || 'best single library'), backgroundColor: '#ff7f0e',
              data: p.map((x) => x.speedup_best_library)}]},
           options: {scales: {y: axis('speed-up (x)'), x: {ticks: {autoSkip: false}}},
                     plugins: {legend: {position: 'bottom'}}}});
    app.append(s);
  }

  // Values on integer positions 0, 1, ... in the data's order (numbers sorted as numbers); the
  // ticks sit on those positions and are labelled with the values.
  function twoKnobChart(grid, v) {
    const xs = v.x_values, ys = v.y_values;
    const onValues = (values) => (scale) => { scale.ticks = values.map((_, i) => ({value: i})); };
    const times = v.cells.map((c) => c[2]);
    const lo = Math.log(Math.min(...times)), hi = Math.log(Math.max(...times));
    const shade = (t) => { const f = hi > lo ? (Math.log(t) - lo) / (hi - lo) : 0;
                           return 'hsl(' + Math.round(120 - 120 * f) + ', 70%, 45%)'; };
    chart(grid, 'Best time per pair of values of ' + v.x + ' and ' + v.y + ' (green: fast, red: slow)',
          {type: 'scatter', data: {datasets: [{label: 'best ms',
             data: v.cells.map((c) => ({x: xs.indexOf(c[0]), y: ys.indexOf(c[1]), ms: c[2]})),
             pointRadius: Math.max(4, Math.min(14, 220 / Math.max(xs.length, ys.length))),
             pointStyle: 'rect', backgroundColor: v.cells.map((c) => shade(c[2]))}]},
           options: {plugins: {legend: {display: false}, tooltip: {callbacks: {label: (ctx) =>
                       v.x + '=' + xs[ctx.raw.x] + ', ' + v.y + '=' + ys[ctx.raw.y] + ': ' +
                       num(ctx.raw.ms) + ' ms'}}},
                     scales: {x: {title: {display: true, text: v.x}, min: -0.5, max: xs.length - 0.5,
                                  afterBuildTicks: onValues(xs),
                                  ticks: {autoSkip: false, callback: (i) => xs[i] ?? ''}},
                              y: {title: {display: true, text: v.y}, min: -0.5, max: ys.length - 0.5,
                                  afterBuildTicks: onValues(ys),
                                  ticks: {autoSkip: false, callback: (i) => ys[i] ?? ''}}}}});
  }

  function searchSection(r) {
    const s = el('section', {class: 'search'});
    s.append(el('h2', {}, 'Search: ' + r.task + (r.problem ? ' on ' + r.problem : '') +
                ' (' + r.format + ', ' + r.target + ')'));
    const best = r.best_by_trial.length ? r.best_by_trial[r.best_by_trial.length - 1][1] : NaN;
    s.append(el('p', {}, r.trials + ' trial(s), ' + r.failed + ' failed; best ' + num(best) +
                ' ms; workload ' + clip(r.workload, 160)));
    const grid = el('div', {class: 'grid'});
    s.append(grid);
    chart(grid, 'Best time so far against trials', {type: 'line', data: {datasets: [
      {label: 'best so far (ms)', stepped: true, borderColor: '#1f77b4', pointRadius: 0,
       data: r.best_by_trial.map((p) => ({x: p[0], y: p[1]}))}]},
      options: {scales: {x: {type: 'linear', title: {display: true, text: 'trial'}},
                         y: logAxis('ms')}, plugins: {legend: {display: false}}}});
    if (r.best_by_time.length) {
      chart(grid, 'Best time so far against tuning time', {type: 'line', data: {datasets: [
        {label: 'best so far (ms)', stepped: true, borderColor: '#2ca02c', pointRadius: 0,
         data: r.best_by_time.map((p) => ({x: p[0], y: p[1]}))}]},
        options: {scales: {x: {type: 'linear', title: {display: true, text: 'seconds since the first trial'}},
                           y: logAxis('ms')}, plugins: {legend: {display: false}}}});
    }
    const h = r.histogram;
    chart(grid, 'Distribution of measured times (log-spaced bins)', {type: 'bar', data: {
      labels: h.counts.map((_, i) => num(h.edges_ms[i]) + '\u2013' + num(h.edges_ms[i + 1])),
      datasets: [{label: 'configurations', backgroundColor: '#9467bd', data: h.counts}]},
      options: {scales: {x: axis('ms'), y: axis('configurations')},
                plugins: {legend: {display: false}}}});
    if (r.importance.length) {
      chart(grid, 'Knob importance: main-effect share of the variance of log(time) (\u03b7\u00b2)',
            {type: 'bar', data: {labels: r.importance.map((k) => k.knob + ' (' + k.values + ')'),
               datasets: [{label: 'share', backgroundColor: '#ff7f0e',
                           data: r.importance.map((k) => k.share)}]},
             options: {indexAxis: 'y', scales: {x: {min: 0, max: 1, title: {display: true,
                       text: 'share of variance'}}}, plugins: {legend: {display: false}}}});
    }
    if (r.two_knobs) twoKnobChart(grid, r.two_knobs);
    if (r.failures.length) {
      s.append(el('h3', {}, 'Failed configurations (' + r.failures.length + ')'));
      const shown = r.failures.slice(0, 25);
      s.append(table(['configuration', 'error', 'reason'],
                     shown.map((f) => [clip(f.config, 140), f.error, f.reason || '-'])));
      if (r.failures.length > shown.length) {
        s.append(el('p', {}, 'and ' + (r.failures.length - shown.length) + ' more'));
      }
    }
    app.append(s);
  }

  function comparisonSection(run) {
    const s = el('section', {class: 'comparison'});
    s.append(el('h2', {}, (run.tool === 'torch' ? 'PyTorch against tunekit' :
                           'Tuned dispatch against every single library') + ' \u2014 ' + run.created +
                          (run.host ? ' on ' + run.host : '')));
    const problems = Object.keys(run.problems);
    const names = [];
    for (const p of problems) for (const n of Object.keys(run.problems[p])) {
      if (n !== 'tuned' && !names.includes(n)) names.push(n);
    }
    const rel = (p, n) => { const c = run.problems[p][n], t = run.problems[p].tuned;
                            return c && t && c.time_ms > 0 && t.time_ms > 0 ? c.time_ms / t.time_ms : null; };
    s.append(table(['contender', 'its time / tuned time (geometric mean)', 'problems'],
      names.map((n) => { const r = problems.map((p) => rel(p, n)).filter((x) => x !== null);
                         return [n, ratio(geomean(r)), r.length]; })));
    const grid = el('div', {class: 'grid wide'});
    s.append(grid);
    chart(grid, 'Each contender\u2019s time over the tuned dispatch\u2019s (above 1: tuned is faster)',
          {type: 'line', data: {labels: problems.map((p) => shortLabel(p.split(',')[1] || p)),
             datasets: names.map((n) => ({label: n, showLine: false, pointRadius: 4,
               backgroundColor: colour(n), borderColor: colour(n),
               data: problems.map((p) => rel(p, n))}))},
           options: {scales: {y: logAxis('time / tuned time'), x: {ticks: {autoSkip: false}}},
                     plugins: {legend: {position: 'bottom', labels: {boxWidth: 10}}}}});
    app.append(s);
  }

  header();
  environments();
  if (!data.ops.length && !data.searches.length && !data.comparisons.length) {
    app.append(el('p', {class: 'empty'}, 'Nothing tuned yet in these sources.'));
  }
  data.ops.forEach(opSection);
  data.comparisons.forEach(comparisonSection);
  data.searches.forEach(searchSection);
  document.body.dataset.charts = String(charts.length);
})();
