/** Inline SVG pictures: requests per day (stacked), a quota gauge, feedback bars, an image with its boxes. */
import type { Detection } from './api.js';
import { h, s } from './dom.js';

const COLORS = { done: '#2f855a', error: '#c53030', refused: '#d69e2e', good: '#2f855a', neutral: '#718096', bad: '#c53030' };

export function stackedDays<T extends { date: string }>(rows: T[], series: Array<keyof T & keyof typeof COLORS>, title: string): SVGElement {
  const W = 1000;
  const H = 220;
  const pad = { l: 36, r: 8, t: 10, b: 26 };
  const max = Math.max(1, ...rows.map((r) => series.reduce((sum, k) => sum + Number(r[k]), 0)));
  const bw = (W - pad.l - pad.r) / Math.max(1, rows.length);
  const y = (v: number) => pad.t + (H - pad.t - pad.b) * (1 - v / max);
  const bars = rows.map((r, i) => {
    let acc = 0;
    const x = pad.l + i * bw + 1;
    const parts = series.map((k) => {
      const v = Number(r[k]);
      const top = y(acc + v);
      const rect = s('rect', { x, y: top, width: Math.max(1, bw - 2), height: Math.max(0, y(acc) - top), fill: COLORS[k] }, s('title', {}, `${r.date} ${String(k)}: ${v}`));
      acc += v;
      return rect;
    });
    const label = i % Math.ceil(rows.length / 8) === 0 ? s('text', { x: x + bw / 2, y: H - 8, 'text-anchor': 'middle', class: 'axis' }, r.date.slice(5)) : null;
    return [parts, label];
  });
  const ticks = [...new Set([0, Math.round(max / 2), max])].map((v) => [
    s('line', { x1: pad.l, x2: W - pad.r, y1: y(v), y2: y(v), class: 'grid' }),
    s('text', { x: pad.l - 4, y: y(v) + 4, 'text-anchor': 'end', class: 'axis' }, v),
  ]);
  return s('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'aria-label': title }, s('title', {}, title), ticks, bars);
}

export function legend(series: Array<keyof typeof COLORS>): HTMLElement {
  return h('div', { class: 'legend' }, series.map((k) => h('span', {}, h('i', { class: `sw sw-${k}` }), k)));
}

export function gauge(used: number, limit: number): HTMLElement {
  const ratio = limit > 0 ? Math.min(1, used / limit) : used > 0 ? 1 : 0;
  const color = ratio >= 0.9 ? COLORS.error : ratio >= 0.7 ? COLORS.refused : COLORS.done;
  const svg = s('svg', { viewBox: '0 0 300 16', class: 'gauge', role: 'img', 'aria-label': `quota ${used} of ${limit}` },
    s('rect', { x: 0, y: 0, width: 300, height: 16, rx: 4, class: 'gauge-bg' }),
    s('rect', { x: 0, y: 0, width: Math.round(300 * ratio), height: 16, rx: 4, fill: color }),
  );
  return h('div', { class: 'gauge-wrap' }, svg, h('span', {}, `${used.toLocaleString('en-US')} / ${limit.toLocaleString('en-US')} this month (${Math.round(ratio * 100)}%)`));
}

/** The stored image with each detection's box and label drawn over it, in image pixels. */
export function annotatedImage(src: string, detections: Detection[]): HTMLElement {
  const svg = s('svg', { class: 'boxes', preserveAspectRatio: 'none' });
  const img = h('img', { src, alt: 'request image' });
  img.addEventListener('load', () => {
    svg.setAttribute('viewBox', `0 0 ${img.naturalWidth} ${img.naturalHeight}`);
    const stroke = Math.max(2, Math.round(img.naturalWidth / 250));
    for (const d of detections) {
      const b = d.bounding_box;
      const text = `${d.label}${d.confidence === undefined ? '' : ` ${Math.round(d.confidence * 100)}%`}`;
      const fs = Math.max(12, Math.round(img.naturalWidth / 40));
      svg.append(
        s('rect', { x: b.x, y: b.y, width: b.width, height: b.height, class: 'box', 'stroke-width': stroke }),
        s('rect', { x: b.x, y: Math.max(0, b.y - fs - 4), width: text.length * fs * 0.6 + 8, height: fs + 4, class: 'box-label-bg' }),
        s('text', { x: b.x + 4, y: Math.max(fs, b.y - 4), 'font-size': fs, class: 'box-label' }, text),
      );
    }
    svg.dataset.boxes = String(detections.length);
  });
  return h('div', { class: 'frame' }, img, svg);
}
