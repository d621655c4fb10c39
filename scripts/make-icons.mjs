#!/usr/bin/env node
// Draws Ferry's icon (a rounded square in the accent colour with a white arrow
// over a wave) at every size the platforms want, as PNG files in resources/icons,
// icon.ico (Windows), icon.icns (macOS), icon.png, and the tray's small template images. Pure Node (zlib): no image tools needed.
// Run it after changing the drawing: `node scripts/make-icons.mjs`.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'resources', 'icons');

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc32 = (buf) => {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};
function chunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}
/** RGBA pixels (size*size*4) to a PNG file. */
export function png(size, rgba) {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // RGBA
  const raw = Buffer.alloc(size * (size * 4 + 1));
  for (let y = 0; y < size; y++) rgba.copy(raw, y * (size * 4 + 1) + 1, y * size * 4, (y + 1) * size * 4);
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

/** Coverage 0..1 of the shape at (x, y) in unit coordinates, 4x4 supersampled. */
function draw(size, inside) {
  const px = Buffer.alloc(size * size * 4);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      let bg = 0, fg = 0;
      for (let sy = 0; sy < 4; sy++) {
        for (let sx = 0; sx < 4; sx++) {
          const u = (x + (sx + 0.5) / 4) / size, v = (y + (sy + 0.5) / 4) / size;
          const r = inside(u, v);
          if (r.bg) bg++;
          if (r.fg) fg++;
        }
      }
      const a = bg / 16, f = fg / 16;
      const i = (y * size + x) * 4;
      // Accent #1f5fd1 under white.
      px[i] = Math.round(0x1f * (1 - f) + 255 * f);
      px[i + 1] = Math.round(0x5f * (1 - f) + 255 * f);
      px[i + 2] = Math.round(0xd1 * (1 - f) + 255 * f);
      px[i + 3] = Math.round(255 * Math.max(a, f));
    }
  }
  return px;
}

const roundedSquare = (u, v, r = 0.22, m = 0.04) => {
  const x = Math.max(m + r - u, 0, u - (1 - m - r)), y = Math.max(m + r - v, 0, v - (1 - m - r));
  return x * x + y * y <= r * r && u >= m && u <= 1 - m && v >= m && v <= 1 - m;
};
/** An upward arrow over a wave: a transfer crossing water. */
const mark = (u, v) => {
  const shaft = Math.abs(u - 0.5) < 0.07 && v > 0.36 && v < 0.62;
  const head = v >= 0.2 && v <= 0.4 && Math.abs(u - 0.5) <= (v - 0.2) * 1.1;
  const waveY = 0.74 + 0.045 * Math.sin((u - 0.2) * Math.PI * 4);
  const wave = u > 0.2 && u < 0.8 && Math.abs(v - waveY) < 0.045;
  return shaft || head || wave;
};

fs.mkdirSync(out, { recursive: true });
for (const size of [16, 24, 32, 48, 64, 128, 256, 512, 1024]) {
  fs.writeFileSync(path.join(out, `${size}x${size}.png`), png(size, draw(size, (u, v) => ({ bg: roundedSquare(u, v), fg: roundedSquare(u, v) && mark(u, v) }))));
}
// Windows' .ico and macOS' .icns hold PNG images of several sizes as they are.
const pngOf = (size) => fs.readFileSync(path.join(out, `${size}x${size}.png`));
function ico(sizes) {
  const images = sizes.map(pngOf);
  const head = Buffer.alloc(6 + 16 * images.length);
  head.writeUInt16LE(0, 0);
  head.writeUInt16LE(1, 2); // an icon
  head.writeUInt16LE(images.length, 4);
  let offset = head.length;
  images.forEach((img, i) => {
    const e = 6 + 16 * i, size = sizes[i];
    head[e] = size >= 256 ? 0 : size; // 0 means 256
    head[e + 1] = size >= 256 ? 0 : size;
    head.writeUInt16LE(1, e + 4); // planes
    head.writeUInt16LE(32, e + 6); // bits per pixel
    head.writeUInt32LE(img.length, e + 8);
    head.writeUInt32LE(offset, e + 12);
    offset += img.length;
  });
  return Buffer.concat([head, ...images]);
}
function icns(entries) {
  const parts = entries.map(([type, size]) => {
    const img = pngOf(size);
    const h = Buffer.alloc(8);
    h.write(type, 0, 'ascii');
    h.writeUInt32BE(img.length + 8, 4);
    return Buffer.concat([h, img]);
  });
  const h = Buffer.alloc(8);
  h.write('icns', 0, 'ascii');
  h.writeUInt32BE(8 + parts.reduce((n, p) => n + p.length, 0), 4);
  return Buffer.concat([h, ...parts]);
}
fs.writeFileSync(path.join(root, 'resources', 'icon.ico'), ico([16, 24, 32, 48, 64, 128, 256]));
fs.writeFileSync(path.join(root, 'resources', 'icon.icns'), icns([['icp4', 16], ['icp5', 32], ['icp6', 64], ['ic07', 128], ['ic08', 256], ['ic09', 512], ['ic10', 1024]]));
fs.copyFileSync(path.join(out, '1024x1024.png'), path.join(root, 'resources', 'icon.png'));

// The tray: the mark alone, white on transparent (macOS takes it as a template image).
for (const [name, size] of [['trayTemplate.png', 16], ['trayTemplate@2x.png', 32]]) {
  const px = draw(size, (u, v) => ({ bg: false, fg: mark(u, v) }));
  for (let i = 0; i < px.length; i += 4) px[i] = px[i + 1] = px[i + 2] = 0; // black template
  fs.writeFileSync(path.join(root, 'resources', name), png(size, px));
}
console.log(`icons written to ${path.relative(root, out)}`);
