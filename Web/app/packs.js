// Resource packs in the page (docs/protocol.md section 19): the server's catalogue, and each pack
// fetched when first shown, checked (its bytes must hash to its name, SHA-256), unzipped with the
// browser's own inflater (DecompressionStream), and its files kept as blob: URLs for the page's
// life (a Lottie item's JSON also as text, for `lottie.js` to draw). A pack's address is its hash, answered as immutable, so the browser's cache keeps it
// between visits; a pack that fails its check is never shown (and is fetched again next time).
// Knows nothing of the page.

import { parseLottie } from './lottie.js';

// The entries of a zip archive (stored or deflated): {name, method, size, start, length}.
export function zipEntries(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let end = bytes.length - 22;
  const lowest = Math.max(0, end - 0xffff);
  while (end >= lowest && view.getUint32(end, true) !== 0x06054b50) end -= 1;
  if (end < lowest) throw new Error('not a zip archive');
  const count = view.getUint16(end + 10, true);
  let position = view.getUint32(end + 16, true);
  const entries = [];
  for (let index = 0; index < count; index += 1) {
    if (view.getUint32(position, true) !== 0x02014b50) throw new Error('the central directory is damaged');
    const method = view.getUint16(position + 10, true);
    const length = view.getUint32(position + 20, true);
    const size = view.getUint32(position + 24, true);
    const nameLength = view.getUint16(position + 28, true);
    const skip = nameLength + view.getUint16(position + 30, true) + view.getUint16(position + 32, true);
    const local = view.getUint32(position + 42, true);
    const name = new TextDecoder().decode(bytes.subarray(position + 46, position + 46 + nameLength));
    position += 46 + skip;
    if (name.endsWith('/')) continue;
    if (name.startsWith('/') || name.includes('\\') || name.split('/').some((part) => part === '' || part === '.' || part === '..')) {
      throw new Error(`${name}: a name must be a relative path`);
    }
    if (method !== 0 && method !== 8) throw new Error(`${name} is compressed with method ${method}`);
    const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
    if (start + length > bytes.length) throw new Error(`${name} runs past the end of the archive`);
    entries.push({ name, method, size, start, length });
  }
  return entries;
}

// An entry's bytes, inflated.
export async function entryBytes(bytes, entry) {
  const raw = bytes.subarray(entry.start, entry.start + entry.length);
  if (entry.method === 0) return raw;
  const inflated = new Blob([raw]).stream().pipeThrough(new DecompressionStream('deflate-raw'));
  const out = new Uint8Array(await new Response(inflated).arrayBuffer());
  if (out.length !== entry.size) throw new Error(`${entry.name} does not inflate to its size`);
  return out;
}

// The SHA-256 of `bytes`, in hex (null where the browser offers no digest: not a secure page).
export async function sha256(bytes) {
  if (!globalThis.crypto?.subtle) return null;
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return [...digest].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}

const types = { webp: 'image/webp', png: 'image/png', apng: 'image/apng', jpg: 'image/jpeg', jpeg: 'image/jpeg', json: 'application/json' };

export class Packs {
  constructor(base = '') {
    this.base = base;
    this.loaded = new Map(); // sha256 -> Promise<{manifest, urls: Map(name -> blob URL)}>
    this.catalogue = null;
  }

  // The server's catalogue, asked again at most once a minute (a pack named in an event that it
  // does not list makes it ask at once).
  async list(fresh = false) {
    if (!fresh && this.catalogue && Date.now() - this.catalogue.at < 60000) return this.catalogue.value;
    const answer = await fetch(`${this.base}/v1/packs`);
    if (!answer.ok) throw new Error(`the packs' catalogue answered ${answer.status}`);
    this.catalogue = { value: await answer.json(), at: Date.now() };
    return this.catalogue.value;
  }

  // Pack `sha`, checked and unzipped (fetched once a page).
  pack(sha) {
    if (!this.loaded.has(sha)) {
      const loading = this.fetchPack(sha);
      this.loaded.set(sha, loading);
      loading.catch(() => this.loaded.delete(sha)); // fetched again next time
    }
    return this.loaded.get(sha);
  }

  async fetchPack(sha) {
    if (!/^[0-9a-f]{64}$/.test(sha)) throw new Error(`${sha} is not a pack's name`);
    const answer = await fetch(`${this.base}/v1/packs/${sha}`);
    if (!answer.ok) throw new Error(`pack ${sha} answered ${answer.status}`);
    const bytes = new Uint8Array(await answer.arrayBuffer());
    if ((await sha256(bytes)) !== sha) throw new Error(`pack ${sha} came damaged, or cannot be checked here`);
    const files = new Map();
    for (const entry of zipEntries(bytes)) files.set(entry.name, entry);
    const manifestEntry = files.get('manifest.json');
    if (!manifestEntry) throw new Error('the pack has no manifest.json');
    const manifest = JSON.parse(new TextDecoder().decode(await entryBytes(bytes, manifestEntry)));
    const urls = new Map();
    const texts = new Map();
    for (const [name, entry] of files) {
      if (name === 'manifest.json') continue;
      const extension = name.split('.').pop().toLowerCase();
      const content = await entryBytes(bytes, entry);
      if (extension === 'json') texts.set(name, new TextDecoder().decode(content));
      urls.set(name, URL.createObjectURL(new Blob([content], { type: types[extension] ?? 'application/octet-stream' })));
    }
    return { manifest, urls, texts };
  }

  // How item `item` of pack `sha` shows: {item, images: [blob URL] (one, or the frames in order),
  // fps, duration (ms)}; {item, lottie (parseLottie's), duration} for a Lottie animation; or
  // {item, text, duration, reason} for one the page cannot draw (its name shows instead).
  async show(sha, itemId) {
    const { manifest, urls, texts } = await this.pack(sha);
    const item = manifest.items?.find((candidate) => candidate.id === itemId);
    if (!item) throw new Error(`pack ${sha} has no item ${itemId}`);
    const duration = item.duration ?? (item.format === 'frames' ? Math.round((1000 * item.frames.length) / (item.fps ?? 12)) : 2500);
    if (item.format === 'lottie') {
      try {
        const lottie = parseLottie(texts.get(item.animation) ?? '');
        return { item, lottie, duration: item.duration ?? Math.min(60000, Math.max(1, lottie.duration)) };
      } catch (error) {
        return { item, text: item.names?.en ?? item.id, duration, reason: `${item.animation}: ${error.message}` };
      }
    }
    const images = item.format === 'frames' ? item.frames.map((name) => urls.get(name)) : [urls.get(item.animation)];
    return { item, images, fps: item.fps ?? 12, duration };
  }
}
