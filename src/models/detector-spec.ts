/**
 * What a detector family needs to be run: the input tensor and how an image becomes it
 * (layout, size, stretch or letterbox, pixel scaling), and which outputs hold what. It is
 * declared in the model's catalog.json, so the embedded backend, the local v2 server and
 * NVIDIA Triton are all driven by the same pre- and post-processing.
 */

export type DetectorFamily = 'centernet' | 'yolo' | 'ssd';

export interface DetectorInputSpec {
  name: string;
  /** NHWC: [N, H, W, 3]; NCHW: [N, 3, H, W]. Channels are RGB either way. */
  layout: 'NHWC' | 'NCHW';
  width: number;
  height: number;
  /** stretch: each axis scaled on its own; letterbox: aspect kept, the rest padded. */
  fit: 'stretch' | 'letterbox';
  /**
   * Where a letterboxed image sits: centre (padding split on both sides, as Ultralytics
   * exports expect) or corner (top left, padded right and bottom, as the TF Object Detection
   * API's keep_aspect_ratio_resizer). Default: centre for yolo, corner otherwise.
   */
  align: 'centre' | 'corner';
  /** Pixel values 0–255 are multiplied by this (1/255 for Ultralytics exports). */
  scale: number;
  /** Value (0–255, before scaling) of the letterbox padding; Ultralytics pads with 114. */
  pad: number;
}

export interface DetectorSpec {
  family: DetectorFamily;
  input: DetectorInputSpec;
  /**
   * Output tensor names by role.
   * centernet: detections [N, K, 6] = x1, y1, x2, y2 (input pixels), score, class.
   * yolo: predictions [N, 4 + C, A] = cx, cy, w, h (input pixels), C class scores.
   * ssd: boxes [N, K, 4] = ymin, xmin, ymax, xmax (0–1), scores [N, K], classes [N, K], count [N] or [N, 1].
   */
  outputs: Record<string, string>;
}

export const FAMILY_OUTPUT_ROLES: Record<DetectorFamily, readonly string[]> = {
  centernet: ['detections'],
  yolo: ['predictions'],
  ssd: ['boxes', 'scores', 'classes', 'count'],
};

/** The built-in CenterNet: what every catalog without a `detector` entry means. */
export const CENTERNET_SPEC: DetectorSpec = Object.freeze({
  family: 'centernet',
  input: Object.freeze({ name: 'images', layout: 'NHWC', width: 512, height: 512, fit: 'stretch', align: 'corner', scale: 1, pad: 0 }),
  outputs: Object.freeze({ detections: 'detections' }),
});

export function parseDetectorSpec(raw: unknown, source: string): DetectorSpec {
  const bad = (why: string): never => {
    throw new Error(`${source}: detector: ${why}`);
  };
  const d = raw as Partial<DetectorSpec> | null;
  if (!d || typeof d !== 'object') return bad('expected an object {family, input, outputs}');
  if (d.family !== 'centernet' && d.family !== 'yolo' && d.family !== 'ssd') return bad(`unknown family ${JSON.stringify(d.family)} (centernet, yolo or ssd)`);
  const i = d.input as Partial<DetectorInputSpec> | undefined;
  if (!i || typeof i.name !== 'string' || i.name === '') return bad('input.name must be a tensor name');
  if (i.layout !== 'NHWC' && i.layout !== 'NCHW') return bad('input.layout must be NHWC or NCHW');
  if (!Number.isInteger(i.width) || !Number.isInteger(i.height) || i.width! < 1 || i.height! < 1 || i.width! > 4096 || i.height! > 4096) return bad('input.width and input.height must be integers 1–4096');
  if (i.fit !== 'stretch' && i.fit !== 'letterbox') return bad('input.fit must be stretch or letterbox');
  if (typeof i.scale !== 'number' || !(i.scale > 0)) return bad('input.scale must be a positive number');
  const pad = i.pad ?? 0;
  if (typeof pad !== 'number' || !(pad >= 0 && pad <= 255)) return bad('input.pad must be 0–255');
  const align = i.align ?? (d.family === 'yolo' ? 'centre' : 'corner');
  if (align !== 'centre' && align !== 'corner') return bad('input.align must be centre or corner');
  const outputs = d.outputs as Record<string, unknown> | undefined;
  if (!outputs || typeof outputs !== 'object') return bad('outputs must map roles to tensor names');
  const roles = FAMILY_OUTPUT_ROLES[d.family];
  for (const role of roles) if (typeof outputs[role] !== 'string' || outputs[role] === '') bad(`outputs.${role} must name the ${d.family} model's tensor`);
  return {
    family: d.family,
    input: { name: i.name, layout: i.layout, width: i.width!, height: i.height!, fit: i.fit, align, scale: i.scale, pad },
    outputs: Object.fromEntries(roles.map((r) => [r, outputs[r] as string])),
  };
}
