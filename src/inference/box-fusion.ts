/**
 * Weighted box fusion (Solovyev, Wang and Gabruseva, 2019): the detections of several models
 * (or other views) of one photo become one list. Unlike NMS, which keeps one box of a cluster
 * and drops the rest, fusion averages the cluster's corners weighted by score, and its
 * confidence is the mean over *all* views, a view that saw nothing counting 0: an object
 * every view agrees on keeps its score, one only a single view found is discounted.
 */
import type { Detection } from '../recognition/detection.js';

export interface FusionView {
  detections: readonly Detection[];
  /** How much this view counts, in the corners and in the confidence (1: as much as any other). */
  weight: number;
}

interface Member {
  box: [number, number, number, number];
  score: number;
  weight: number;
  externalId: string;
}

interface Cluster {
  members: Member[];
  fused: [number, number, number, number];
}

function overlap(a: readonly number[], b: readonly number[]): number {
  const iw = Math.min(a[2], b[2]) - Math.max(a[0], b[0]);
  const ih = Math.min(a[3], b[3]) - Math.max(a[1], b[1]);
  if (iw <= 0 || ih <= 0) return 0;
  const inter = iw * ih;
  return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter);
}

/**
 * Fuses per label: boxes are taken best first (score × weight), each joins the cluster whose
 * fused box it overlaps most above `iou`, or starts one. The result's boxes are in the same
 * pixels as the input's (floats rounded to integers), most confident first; `external_id` is
 * that of the cluster's best box.
 */
export function fuseBoxes(views: readonly FusionView[], iou: number): Detection[] {
  const total = views.reduce((s, v) => s + v.weight, 0);
  const byLabel = new Map<string, Member[]>();
  for (const view of views) {
    for (const d of view.detections) {
      const b = d.bounding_box;
      const list = byLabel.get(d.label) ?? [];
      list.push({ box: [b.x, b.y, b.x + b.width, b.y + b.height], score: d.confidence, weight: view.weight, externalId: d.external_id });
      byLabel.set(d.label, list);
    }
  }
  const out: Detection[] = [];
  for (const [label, members] of byLabel) {
    members.sort((a, b) => b.score * b.weight - a.score * a.weight);
    const clusters: Cluster[] = [];
    for (const m of members) {
      let best: Cluster | undefined;
      let bestIou = iou;
      for (const c of clusters) {
        const v = overlap(c.fused, m.box);
        if (v > bestIou) {
          best = c;
          bestIou = v;
        }
      }
      if (best === undefined) clusters.push({ members: [m], fused: [...m.box] });
      else {
        best.members.push(m);
        best.fused = weightedCorners(best.members);
      }
    }
    for (const c of clusters) {
      const weight = c.members.reduce((s, m) => s + m.weight, 0);
      const mean = c.members.reduce((s, m) => s + m.score * m.weight, 0) / weight;
      // A cluster may hold two boxes of one view; it still counts at most every view once.
      const confidence = (mean * Math.min(weight, total)) / total;
      const [x1, y1, x2, y2] = c.fused.map(Math.round);
      if (x2 <= x1 || y2 <= y1) continue;
      out.push({ label, external_id: c.members[0].externalId, bounding_box: { x: x1, y: y1, width: x2 - x1, height: y2 - y1 }, confidence: Math.round(confidence * 1e4) / 1e4 });
    }
  }
  return out.sort((a, b) => b.confidence - a.confidence);
}

function weightedCorners(members: readonly Member[]): [number, number, number, number] {
  const sw = members.reduce((s, m) => s + m.score * m.weight, 0);
  const corner = (k: number) => members.reduce((s, m) => s + m.box[k] * m.score * m.weight, 0) / sw;
  return [corner(0), corner(1), corner(2), corner(3)];
}
