/** Draws the detections' boxes and labels onto the image (an SVG overlay composited by sharp). */
import type { Detection } from '@recognition-service/client';
import sharp from 'sharp';

const COLOURS = ['#e6194b', '#3cb44b', '#4363d8', '#f58231', '#911eb4', '#42d4f4', '#f032e6', '#bfef45'];

function escapeXml(s: string): string {
  return s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function colourOf(label: string): string {
  let h = 0;
  for (const ch of label) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return COLOURS[h % COLOURS.length];
}

export async function annotate(image: Uint8Array, detections: Detection[], outFile: string): Promise<void> {
  const base = sharp(image).rotate(); // the service's boxes are in the EXIF-upright image's pixels
  const { data, info } = await base.toBuffer({ resolveWithObject: true });
  const { width, height } = info;
  const stroke = Math.max(2, Math.round(Math.min(width, height) / 200));
  const font = Math.max(12, Math.round(Math.min(width, height) / 30));
  const shapes = detections.map((d) => {
    const { x, y, width: w, height: h } = d.boundingBox;
    const colour = colourOf(d.label);
    const text = d.confidence !== undefined ? `${d.label} ${Math.round(d.confidence * 100)}%` : d.label;
    const ty = y >= font + 4 ? y - 4 : y + font + 2;
    const tw = Math.round(text.length * font * 0.6) + 6;
    return `<rect x="${x}" y="${y}" width="${w}" height="${h}" fill="none" stroke="${colour}" stroke-width="${stroke}"/>` +
      `<rect x="${x}" y="${ty - font}" width="${tw}" height="${font + 4}" fill="${colour}"/>` +
      `<text x="${x + 3}" y="${ty}" font-family="sans-serif" font-size="${font}" fill="#fff">${escapeXml(text)}</text>`;
  });
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">${shapes.join('')}</svg>`;
  await sharp(data).composite([{ input: Buffer.from(svg), top: 0, left: 0 }]).toFile(outFile);
}
