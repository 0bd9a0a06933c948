// Media messages' files from the page (docs/protocol.md section 18): each file is uploaded by
// tus 1.0 in pieces, and after a cut goes on from where the server says it stands; a finished
// one is read back with the user's token (an <img> or <audio> cannot send it) as a blob URL.
// What to send as which message, and how to make a photo's thumbnail, are here too. Knows
// nothing of the page.

import { SignalError } from './signal.js';

// Bytes a PATCH carries: the SDK's 256 KiB (over a 100 kb/s link one takes about 21 s, and a
// cut one keeps what arrived).
export const piece = 256 * 1024;

// The longest side of a photo's thumbnail, in pixels (a message bubble is at most 80% of a
// 390 px phone: 312 px; 320 covers it).
export const thumbnailSide = 320;

// The message a file of MIME type `type` is sent as: {type, label} (label: its i18n key), or
// null for a type the server does not take as media.
export function mediaKind(type) {
  if (/^image\/(jpeg|png|gif|webp)$/.test(type)) return { type: 'image', label: 'messages.photo' };
  if (/^audio\/(ogg|webm|mp4|mpeg|aac|wav)$/.test(type)) return { type: 'voice', label: 'messages.voice' };
  if (/^video\/(mp4|webm|quicktime)$/.test(type)) return { type: 'video', label: 'messages.video' };
  return null;
}

// A MIME type without its parameters (MediaRecorder's 'audio/webm;codecs=opus' is 'audio/webm').
export function baseType(type) {
  return String(type ?? '').split(';')[0].trim().toLowerCase();
}

// "m:ss" for a duration in ms.
export function clock(ms) {
  const seconds = Math.max(0, Math.round(ms / 1000));
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
}

function base64(text) {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

async function refusal(answer) {
  const body = await answer.json().catch(() => null);
  return new SignalError(body?.error?.code ?? 'internal', body?.error?.message ?? `HTTP ${answer.status}`);
}

// One HTTP call; a network failure is a `disconnected` SignalError (sent again when back).
async function call(path, init) {
  try {
    return await fetch(path, init);
  } catch (error) {
    throw new SignalError('disconnected', `${init.method ?? 'GET'} ${path}: ${error.message}`);
  }
}

// Uploads `item` ({field, blob, type, name, length, upload?, offset}), changing it as it goes
// (`upload`: the server's id once made; `offset`: the bytes it holds); `token()` gives the
// user's token, `progress()` is called once the upload is made and after each piece. Resolves
// with the upload's id.
export async function upload(item, token, progress = () => {}) {
  const headers = (more = {}) => ({ Authorization: `Bearer ${token()}`, 'Tus-Resumable': '1.0.0', ...more });
  if (item.upload) {
    const head = await call(`/v1/uploads/${item.upload}`, { method: 'HEAD', headers: headers(), cache: 'no-store' });
    if (head.status === 404) item.upload = null; // expired: made again
    else if (head.ok) item.offset = Number(head.headers.get('Upload-Offset'));
    else throw await refusal(head);
  }
  if (!item.upload) {
    const made = await call('/v1/uploads', {
      method: 'POST',
      headers: headers({ 'Upload-Length': String(item.length), 'Upload-Metadata': `filetype ${base64(item.type)},filename ${base64(item.name)}` }),
    });
    if (made.status !== 201) throw await refusal(made);
    item.upload = made.headers.get('Location').split('/').pop();
    item.offset = 0;
    progress(item); // the id is kept at once: a page reloaded now goes on with this upload
  }
  while (item.offset < item.length) {
    const end = Math.min(item.length, item.offset + piece);
    const answer = await call(`/v1/uploads/${item.upload}`, {
      method: 'PATCH',
      headers: headers({ 'Upload-Offset': String(item.offset), 'Content-Type': 'application/offset+octet-stream' }),
      body: item.blob.slice(item.offset, end),
    });
    if (answer.status !== 204 && answer.status !== 409) throw await refusal(answer);
    // 409: the upload stands elsewhere (an older try got there): go on from there.
    item.offset = Number(answer.headers.get('Upload-Offset'));
    progress(item);
  }
  return item.upload;
}

// Blob URLs of media read so far, by id (a promise each, so a file is read once).
const read = new Map();

// A blob URL of media `id` (a finished upload the user may read).
export function mediaURL(id, token) {
  if (!read.has(id)) {
    const loading = call(`/v1/media/${encodeURIComponent(id)}`, { headers: { Authorization: `Bearer ${token()}` } })
      .then(async (answer) => {
        if (!answer.ok) throw await refusal(answer);
        return URL.createObjectURL(await answer.blob());
      });
    read.set(id, loading);
    loading.catch(() => read.delete(id)); // tried again when next shown
  }
  return read.get(id);
}

// A photo's size and, when a side is longer than `thumbnailSide`, a JPEG thumbnail of it
// (`{width, height, thumbnail: Blob | null}`); null for an image the browser cannot read.
export async function describeImage(file) {
  let bitmap;
  try {
    bitmap = await createImageBitmap(file);
  } catch {
    return null;
  }
  const { width, height } = bitmap;
  let thumbnail = null;
  if (Math.max(width, height) > thumbnailSide) {
    const scale = thumbnailSide / Math.max(width, height);
    const canvas = document.createElement('canvas');
    canvas.width = Math.max(1, Math.round(width * scale));
    canvas.height = Math.max(1, Math.round(height * scale));
    canvas.getContext('2d').drawImage(bitmap, 0, 0, canvas.width, canvas.height);
    thumbnail = await new Promise((resolve) => canvas.toBlob(resolve, 'image/jpeg', 0.8));
  }
  bitmap.close();
  return { width, height, thumbnail };
}
