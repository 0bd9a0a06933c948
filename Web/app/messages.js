// The conversations page (`/messages`): the user's one-to-one and group conversations outside
// rooms (docs/protocol.md section 17), with unread marks, cards shown by their fallback, photos
// and voice messages (section 18), typing and read marks, in four languages (Arabic right to
// left), on a phone's width. The state and its changes are in conversations.js, uploads in
// uploads.js; this file draws the page from them and carries out actions.

import { Signal, SignalError } from './signal.js';
import { Identity } from './identity.js';
import { morph } from './morph.js';
import { createCards } from './cards.js';
import { icon } from './icons.js';
import { pickLanguage, translator, direction } from './i18n.js';
import {
  initialConversations, applyList, applyDetails, addMessages, markRead, addPending, settlePending, applyEvent, ordered, totalUnread,
  titleOf, typingIn, readersOf, lastSeq, directPeers, applyPresence, presenceOf,
} from './conversations.js';
import { upload, mediaURL, mediaKind, baseType, describeImage, clock } from './uploads.js';
import { Outbox } from './outbox.js';
import { ClientLog } from './clientlog.js';

const params = new URLSearchParams(location.search);
const app = document.getElementById('app');
const language = pickLanguage(params.get('lang'));
const t = translator(language);
document.documentElement.lang = language;
document.documentElement.dir = direction(language);
document.title = t('messages.title');

const state = initialConversations();
const page = {
  step: 'loading', // 'loading', 'signin' (a name, in development mode), 'connecting', 'ready', 'failed'
  open: null, // the conversation shown, or null for the list
  offline: false,
  error: '',
  log: [],
  media: new Map(), // media id -> blob URL, once read
  recording: null, // {recorder, started} while a voice message is recorded
  ended: null, // why the server ended the session ({reason, message}), when it did
  full: new Set(), // photos shown whole (their thumbnail was tapped)
};
const identity = new Identity();
let signal = null;
let outbox = null; // what is being sent, kept in the browser until the server has it
let lastTyping = 0;

// This browser's device (docs/protocol.md section 4): the page keeps its connection beside the
// user's other devices, and beside a room page of the same browser.
const device = localStorage.getItem('majlis.device') || `web-${Math.random().toString(36).slice(2, 12)}`;
localStorage.setItem('majlis.device', device);

// The cards this page knows; any other type shows its fallback.
const cards = createCards();
cards.register('room_invite', (payload) => (typeof payload?.room === 'string' && payload.room ? { kind: 'room', room: payload.room } : null));
for (const kind of ['image', 'voice', 'video']) {
  cards.register(kind, (payload) => (typeof payload?.media === 'string' && payload.media ? {
    kind,
    media: payload.media,
    thumbnail: typeof payload.thumbnail === 'string' ? payload.thumbnail : null,
    duration: Number.isFinite(payload.duration) ? payload.duration : null,
    width: Number.isFinite(payload.width) ? payload.width : null,
    height: Number.isFinite(payload.height) ? payload.height : null,
  } : null));
}

// The page's log: every line kept for the app's support (`clientLog`, section 20 of the
// protocol), the last hundred on the page too.
const clientLog = new ClientLog();
function log(text) {
  clientLog.record(text);
  page.log.push(`${new Date().toISOString().slice(11, 23)} ${text}`);
  if (page.log.length > 100) page.log.shift();
}

function escape(text) {
  return String(text ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}

function describe(error) {
  const code = error?.code;
  if (code) {
    const known = t(`error.${code}`);
    return known !== `error.${code}` ? known : t('error.generic', { code });
  }
  return t('error', { message: error?.message || String(error) });
}

// MARK: Connecting and keeping up

async function start() {
  await identity.load();
  if (identity.signInKind() === 'development' && !identity.name) {
    page.step = 'signin';
    render();
    return;
  }
  if (identity.signInKind() === 'token') {
    page.step = 'failed';
    page.error = t('error.token_needed');
    render();
    return;
  }
  await connect();
}

async function connect() {
  page.step = 'connecting';
  render();
  try {
    const token = await identity.token();
    signal = new Signal(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/v1/signal`, token, { event: onEvent, state: onConnection }, { device });
    const hello = await signal.start();
    state.me = hello.user.id;
    identity.remember(hello.user);
    outbox = new Outbox(state.me);
    signal.setUsable();
    await refresh();
    page.step = 'ready';
    render();
    // What an earlier page of this user left unsent (reloaded or closed mid-upload) goes now,
    // under its client id: posted once, its uploads going on from where the server stands.
    for (const entry of await outbox.unsent()) {
      if (!state.pending.some((pending) => pending.clientMsgId === entry.clientMsgId)) resend(entry);
    }
    const opened = new URLSearchParams(location.hash.slice(1)).get('c');
    if (opened && state.conversations.has(opened)) await open(opened);
  } catch (error) {
    log(`failed: ${error.message}`);
    page.step = 'failed';
    page.error = describe(error);
  }
  render();
}

function onConnection(name) {
  log(name);
  if (name === 'reconnecting') page.offline = true;
  if (name === 'resumed' || (name === 'open' && page.step === 'ready')) {
    // Back: whatever was sent meanwhile is synced.
    page.offline = false;
    signal.setUsable();
    refresh().then(() => page.open && open(page.open)).catch((error) => log(`sync failed: ${error.message}`)).finally(render);
    // What could not go while the connection was down goes now (the same client id: once).
    for (const pending of state.pending.filter((entry) => entry.status === 'failed' && entry.offline)) resend(pending);
  }
  if (name === 'closed') {
    page.step = 'failed';
    // Told why first (`session.ended`): signed out by the app, or signed in on another device.
    const ended = page.ended;
    page.error = ended ? t(`session.${ended.reason}`, { message: ended.message ?? '' }) : t('error.disconnected');
  }
  render();
}

// Lists the conversations and syncs each that has messages this page does not.
async function refresh() {
  let after;
  do {
    const list = await signal.send('conv.list', after ? { after, limit: 200 } : { limit: 200 });
    applyList(state, list);
    after = list.more ? list.conversations[list.conversations.length - 1]?.id : undefined;
  } while (after);
  for (const summary of state.conversations.values()) {
    if (summary.lastSeq > lastSeq(state, summary.id)) await sync(summary.id);
  }
  // Who of the people written to is online now; `presence.changed` keeps it current.
  const peers = directPeers(state);
  if (peers.length) applyPresence(state, (await signal.send('presence.get', { users: peers })).presence);
  state.synced = true;
}

async function sync(id) {
  for (;;) {
    const page = await signal.send('msg.sync', { conversation: id, after: lastSeq(state, id), limit: 200 });
    addMessages(state, id, page.messages);
    if (!page.more || page.messages.length === 0) return;
  }
}

async function details(id) {
  applyDetails(state, await signal.send('conv.get', { conversation: id }));
}

function onEvent(frame) {
  if (frame.room) return;
  if (frame.ev === 'token.expiring') {
    identity.renew(signal);
    return;
  }
  if (frame.ev === 'log.requested') {
    clientLog.answer(frame.data, signal);
    return;
  }
  if (frame.ev === 'session.ended') {
    if (['revoked', 'elsewhere'].includes(frame.data?.reason)) page.ended = frame.data;
    return;
  }
  const next = applyEvent(state, frame, Date.now());
  if (frame.ev === 'msg.typing') setTimeout(render, 6100);
  const follow = next?.refresh ? refresh() : next?.sync ? sync(next.sync) : next?.details ? details(next.details) : null;
  follow?.catch((error) => log(`follow failed: ${error.message}`)).finally(render);
  if (frame.ev === 'msg.new' && frame.data.conversation === page.open && !document.hidden) readNow(page.open);
  render();
}

// MARK: Actions

async function open(id) {
  page.open = id;
  history.replaceState(null, '', `${location.pathname}${location.search}#c=${encodeURIComponent(id)}`);
  render();
  await details(id);
  await sync(id);
  readNow(id);
  // Whether the other is online (they may have become a contact since the last sync).
  const peer = state.conversations.get(id)?.kind === 'direct' ? state.conversations.get(id).peer : null;
  if (peer) applyPresence(state, (await signal.send('presence.get', { users: [peer] })).presence);
  render();
}

function close() {
  page.open = null;
  history.replaceState(null, '', `${location.pathname}${location.search}`);
  render();
}

// Marks the open conversation read up to its newest message.
function readNow(id) {
  const summary = state.conversations.get(id);
  const seq = lastSeq(state, id);
  if (!summary || summary.readSeq >= seq) return;
  markRead(state, id, seq);
  signal.send('msg.read', { conversation: id, seq }).catch((error) => log(`read failed: ${error.message}`));
}

function newClientId() {
  return `web-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}

// Sends `draft` (`{text}`, or `{type, fallback, payload, uploads}` for a file) to `target`
// (`{conversation}` or `{to: user}`); pending until the server has it. A draft's files are
// uploaded first, each going on from where the server stands when the send is tried again.
async function send(draft, target = { conversation: page.open }, clientMsgId = newClientId()) {
  const fresh = !state.pending.some((entry) => entry.clientMsgId === clientMsgId);
  if (fresh) addPending(state, { clientMsgId, ...target, draft });
  const pending = state.pending.find((entry) => entry.clientMsgId === clientMsgId);
  pending.status = 'sending';
  if (fresh) outbox?.keep(pending, true);
  render();
  try {
    const payload = { ...draft.payload };
    for (const item of draft.uploads ?? []) {
      if (!item.upload || item.offset < item.length) {
        await upload(item, () => signal.token, () => {
          outbox?.keep(pending);
          render();
        });
      }
      payload[item.field] = item.upload;
    }
    const type = draft.type ?? 'text';
    const fields = type === 'text' ? { text: draft.text } : { type, fallback: draft.fallback, payload };
    const answer = await signal.send('msg.send', { ...target, ...fields, clientMsgId });
    outbox?.drop(clientMsgId);
    settlePending(state, clientMsgId, answer);
    if (!answer.held) {
      if (!state.conversations.has(answer.conversation)) await refresh();
      // The sending connection gets no msg.new of its own message: it is added here.
      addMessages(state, answer.conversation, [{
        conversation: answer.conversation, seq: answer.seq, from: { id: state.me, name: identity.name }, type, ...fields, ts: answer.ts, clientMsgId,
      }]);
      if (target.to) await open(answer.conversation);
    }
  } catch (error) {
    settlePending(state, clientMsgId, null, describe(error));
    pending.offline = error?.code === 'disconnected';
  }
  render();
}

// Sends a pending message again, where it was going, under its client id.
function resend(pending) {
  send(pending.draft, pending.to ? { to: pending.to } : { conversation: pending.conversation }, pending.clientMsgId);
}

// Sends `file` (a photo, a voice or video file) to the open conversation, with a photo's size
// and thumbnail, or a recording's `duration` (ms).
async function sendFile(file, duration = null) {
  const type = baseType(file.type);
  const kind = mediaKind(type);
  if (!kind) {
    page.error = t('messages.notMedia', { type: type || file.name });
    render();
    return;
  }
  const payload = {};
  const uploads = [{ field: 'media', blob: file, type, name: file.name || `${kind.type}.${type.split('/')[1]}`, length: file.size, upload: null, offset: 0 }];
  if (kind.type === 'image') {
    const image = await describeImage(file);
    if (image) {
      payload.width = image.width;
      payload.height = image.height;
      if (image.thumbnail) uploads.push({ field: 'thumbnail', blob: image.thumbnail, type: 'image/jpeg', name: 'thumbnail.jpg', length: image.thumbnail.size, upload: null, offset: 0 });
    }
  }
  if (duration !== null) payload.duration = Math.round(duration);
  page.error = '';
  await send({ type: kind.type, fallback: `[${t(kind.label)}]`, payload, uploads });
}

// Starts recording a voice message from the microphone, or stops and sends the one recording.
async function toggleRecording() {
  if (page.recording) {
    page.recording.recorder.stop();
    return;
  }
  let stream;
  try {
    stream = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true } });
  } catch (error) {
    page.error = t('messages.noMicrophone', { reason: error.message });
    render();
    return;
  }
  const recorder = new MediaRecorder(stream);
  const pieces = [];
  const started = performance.now();
  recorder.ondataavailable = (event) => event.data.size && pieces.push(event.data);
  recorder.onstop = () => {
    stream.getTracks().forEach((track) => track.stop());
    page.recording = null;
    const type = baseType(recorder.mimeType) || 'audio/webm';
    const voice = new Blob(pieces, { type });
    if (voice.size > 0) sendFile(new File([voice], `voice.${type.split('/')[1]}`, { type }), performance.now() - started);
    render();
  };
  recorder.start();
  page.recording = { recorder, started };
  render();
}

// The blob URL of media `id`, or '' while it is read (the page is drawn again when it is).
function mediaSource(id) {
  if (page.media.has(id)) return page.media.get(id);
  mediaURL(id, () => signal.token).then((url) => {
    page.media.set(id, url);
    render();
  }).catch((error) => log(`media ${id}: ${error.message}`));
  return '';
}

async function createGroup(title, members) {
  const made = await signal.send('conv.create', { title, members });
  state.conversations.set(made.conversation.id, made.conversation);
  await open(made.conversation.id);
}

function typed() {
  if (!page.open || Date.now() - lastTyping < 3000) return;
  lastTyping = Date.now();
  signal.request('msg.typing', { conversation: page.open }).catch(() => {});
}

app.addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.target;
  const data = new FormData(form);
  const kind = form.dataset.form;
  if (kind === 'signin') {
    identity.setName(String(data.get('name') || '').trim());
    if (identity.name) connect();
    return;
  }
  if (kind === 'send') {
    const text = String(data.get('text') || '').trim();
    if (!text) return;
    form.reset();
    send({ text });
  } else if (kind === 'chat') {
    const to = String(data.get('to') || '').trim();
    const text = String(data.get('text') || '').trim();
    if (!to || !text) return;
    form.reset();
    send({ text }, { to });
  } else if (kind === 'group') {
    const title = String(data.get('title') || '').trim();
    const members = String(data.get('members') || '').split(',').map((id) => id.trim()).filter(Boolean);
    if (!title) return;
    form.reset();
    createGroup(title, members).catch((error) => {
      page.error = describe(error);
      render();
    });
  }
});

app.addEventListener('click', (event) => {
  const target = event.target.closest('[data-action]');
  if (!target) return;
  const action = target.dataset.action;
  if (action === 'open') open(target.dataset.id).catch((error) => log(`open failed: ${error.message}`));
  if (action === 'back') close();
  if (action === 'record') toggleRecording();
  if (action === 'full') {
    page.full.add(target.dataset.id);
    render();
  }
  if (action === 'retry') {
    const pending = state.pending.find((entry) => entry.clientMsgId === target.dataset.id);
    if (pending) resend(pending);
  }
});

app.addEventListener('change', (event) => {
  const input = event.target.closest('[data-input=file]');
  if (!input?.files?.length) return;
  const files = [...input.files];
  input.value = '';
  for (const file of files) sendFile(file);
});

app.addEventListener('input', (event) => {
  if (event.target.closest('[data-form=send]')) typed();
});

document.addEventListener('visibilitychange', () => {
  if (!document.hidden && page.open) readNow(page.open);
});

// MARK: Drawing

// A card as the page shows it.
function cardHTML(card) {
  switch (card.kind) {
    case 'room': return `<a class="card" href="/?room=${encodeURIComponent(card.room)}">${escape(t('messages.joinRoom', { room: card.room }))}</a>`;
    case 'image': {
      const whole = !card.thumbnail || page.full.has(card.media);
      const source = mediaSource(whole ? card.media : card.thumbnail);
      const size = card.width && card.height ? ` style="aspect-ratio: ${card.width} / ${card.height}"` : '';
      return `<button class="photo" data-action="full" data-id="${escape(card.media)}" data-media="${escape(card.media)}" data-whole="${whole}" aria-label="${escape(t('messages.photo'))}"${size}>
        ${source ? `<img src="${escape(source)}" alt="${escape(t('messages.photo'))}">` : ''}</button>`;
    }
    case 'voice': {
      const source = mediaSource(card.media);
      return `<div class="voice" data-media="${escape(card.media)}"><audio controls preload="metadata" ${source ? `src="${escape(source)}"` : ''}></audio>
        ${card.duration !== null ? `<span class="duration">${clock(card.duration)}</span>` : ''}</div>`;
    }
    case 'video': {
      const source = mediaSource(card.media);
      return `<video class="video" data-media="${escape(card.media)}" controls preload="metadata" ${source ? `src="${escape(source)}"` : ''}></video>`;
    }
    default: return '';
  }
}

function contentHTML(message) {
  const content = cards.content(message);
  switch (content.kind) {
    case 'text': return `<p class="text" dir="auto">${escape(content.text)}</p>`;
    case 'revoked': return `<p class="revoked">${escape(t('messages.revoked'))}</p>`;
    case 'card': return `${cardHTML(content.card)}${message.text ? `<p class="text" dir="auto">${escape(message.text)}</p>` : ''}`;
    default: return `<p class="fallback" dir="auto">${escape(content.text)}</p>`;
  }
}

// A card's line in the list.
function cardPreview(card) {
  if (card.kind === 'room') return t('messages.joinRoom', { room: card.room });
  if (card.kind === 'voice') return `${t('messages.voice')}${card.duration !== null ? ` ${clock(card.duration)}` : ''}`;
  return t(card.kind === 'image' ? 'messages.photo' : 'messages.video');
}

// A list's line for a conversation: its last message as text every client can show.
function previewOf(summary) {
  const message = summary.lastMessage;
  if (!message) return '';
  const content = cards.content(message);
  const text = content.kind === 'revoked' ? t('messages.revoked') : content.kind === 'card' ? cardPreview(content.card) : content.text;
  return message.from.id === state.me ? `${t('messages.you')}: ${text}` : text;
}

function listHTML() {
  const conversations = ordered(state);
  const items = conversations.map((summary) => `
    <li data-key="${escape(summary.id)}">
      <button class="conversation" data-action="open" data-id="${escape(summary.id)}">
        <span class="name" dir="auto">${escape(titleOf(summary))}${summary.kind === 'direct' ? presenceDot(summary.peer) : ''}</span>
        ${summary.unread > 0 ? `<span class="badge" data-unread="${summary.unread}" title="${escape(t('messages.unread', { n: summary.unread }))}">${summary.unread}</span>` : ''}
        <span class="preview" dir="auto">${escape(previewOf(summary))}</span>
      </button>
    </li>`).join('');
  return `
    <section class="conversations">
      ${conversations.length ? `<ul class="list">${items}</ul>` : `<p class="empty">${escape(t('messages.none'))}</p>`}
      <form data-form="chat" class="compose">
        <h2>${escape(t('messages.newChat'))}</h2>
        <input name="to" placeholder="${escape(t('messages.to'))}" autocomplete="off" required>
        <input name="text" placeholder="${escape(t('typeMessage'))}" autocomplete="off" required>
        <button>${escape(t('send'))}</button>
      </form>
      <form data-form="group" class="compose">
        <h2>${escape(t('messages.newGroup'))}</h2>
        <input name="title" placeholder="${escape(t('messages.groupTitle'))}" autocomplete="off" required>
        <input name="members" placeholder="${escape(t('messages.groupMembers'))}" autocomplete="off">
        <button>${escape(t('messages.create'))}</button>
      </form>
    </section>`;
}

// A contact's mark in the list: a dot while online.
function presenceDot(user) {
  const presence = presenceOf(state, user);
  if (presence?.status !== 'online') return '';
  return `<span class="presence" data-presence="online" title="${escape(t('messages.online'))}" aria-label="${escape(t('messages.online'))}"></span>`;
}

// A contact's line under the name: online, or when last seen.
function presenceLine(user) {
  const presence = presenceOf(state, user);
  if (!presence) return '';
  const text = presence.status === 'online' ? t('messages.online')
    : presence.lastSeen ? t('messages.lastSeen', { time: new Date(presence.lastSeen).toLocaleString(language, { dateStyle: 'short', timeStyle: 'short' }) })
    : t('messages.away');
  return `<span class="presence-line" data-presence="${presence.status}">${escape(text)}</span>`;
}

function pendingHTML(pending) {
  const status = pending.status === 'failed'
    ? `${escape(t('messages.failed', { reason: pending.error || '' }))} <button data-action="retry" data-id="${escape(pending.clientMsgId)}">${escape(t('messages.retry'))}</button>`
    : escape(t(`messages.${pending.status}`));
  const uploads = pending.draft.uploads ?? [];
  const total = uploads.reduce((sum, item) => sum + item.length, 0);
  const sent = uploads.reduce((sum, item) => sum + (item.upload ? item.offset : 0), 0);
  const progress = total > 0 && sent < total
    ? `<progress max="${total}" value="${sent}" aria-label="${escape(t('messages.uploading', { percent: Math.floor((100 * sent) / total) }))}"></progress>` : '';
  const shown = pending.draft.text ?? pending.draft.fallback ?? '';
  return `<li class="message mine pending" data-key="p-${escape(pending.clientMsgId)}" data-status="${pending.status}">
      <p class="text" dir="auto">${escape(shown)}</p>${progress}<span class="status">${status}</span></li>`;
}

function conversationHTML(id) {
  const summary = state.conversations.get(id);
  if (!summary) return listHTML();
  const messages = state.messages.get(id) ?? [];
  const mine = messages.filter((message) => message.from.id === state.me);
  const lastMine = mine[mine.length - 1];
  const readers = lastMine ? readersOf(state, id, lastMine.seq) : 0;
  const items = messages.map((message) => {
    const own = message.from.id === state.me;
    const read = own && message === lastMine && readers > 0
      ? `<span class="read" data-readers="${readers}">${escape(summary.kind === 'direct' ? t('messages.read') : t('messages.readBy', { n: readers }))}</span>` : '';
    return `<li class="message ${own ? 'mine' : 'theirs'}" data-key="m-${message.seq}" data-seq="${message.seq}">
      ${!own && summary.kind === 'group' ? `<span class="from" dir="auto">${escape(message.from.name || message.from.id)}</span>` : ''}
      ${contentHTML(message)}${read}</li>`;
  }).join('');
  const pending = state.pending.filter((entry) => entry.conversation === id || (summary.kind === 'direct' && entry.to === summary.peer && !entry.conversation));
  const typing = typingIn(state, id, Date.now());
  return `
    <section class="conversation-view" data-conversation="${escape(id)}">
      <header>
        <button class="back" data-action="back" aria-label="${escape(t('messages.back'))}">${direction(language) === 'rtl' ? '→' : '←'}</button>
        <h2><bdi>${escape(titleOf(summary))}</bdi></h2>
        ${summary.kind === 'group' ? `<span class="members">${escape(t('messages.members', { n: summary.memberCount }))}</span>` : presenceLine(summary.peer)}
      </header>
      <ol class="messages">${items}${pending.map(pendingHTML).join('')}</ol>
      <p class="typing" aria-live="polite">${typing.length ? escape(t('messages.typing', { names: typing.join(', ') })) : ''}</p>
      <form data-form="send" class="composer">
        <label class="attach" title="${escape(t('messages.attach'))}">${icon('photo')}
          <input type="file" data-input="file" accept="image/jpeg,image/png,image/gif,image/webp" aria-label="${escape(t('messages.attach'))}"></label>
        <button type="button" class="record" data-action="record" data-recording="${page.recording ? 'true' : 'false'}"
          aria-label="${escape(t(page.recording ? 'messages.stopRecording' : 'messages.record'))}" title="${escape(t(page.recording ? 'messages.stopRecording' : 'messages.record'))}">${icon(page.recording ? 'stop' : 'mic')}</button>
        <input name="text" placeholder="${escape(t('typeMessage'))}" autocomplete="off" dir="auto">
        <button>${escape(t('send'))}</button>
      </form>
    </section>`;
}

function render() {
  const unread = totalUnread(state);
  let body;
  if (page.step === 'signin') {
    body = `<form data-form="signin" class="compose"><input name="name" placeholder="${escape(t('yourName'))}" required><button>${escape(t('join'))}</button></form>`;
  } else if (page.step === 'failed') {
    body = `<p class="error" role="alert">${escape(page.error)}</p>`;
  } else if (page.step !== 'ready') {
    body = '<p class="loading">…</p>';
  } else {
    body = page.open ? conversationHTML(page.open) : listHTML();
  }
  morph(app, `
    <header class="top">
      <h1>${escape(t('messages.title'))}${unread > 0 ? ` <span class="badge total" data-unread="${unread}">${unread}</span>` : ''}</h1>
      <a href="/${params.get('lang') ? `?lang=${language}` : ''}">${escape(t('messages.rooms'))}</a>
    </header>
    ${page.offline ? `<p class="banner" role="status">${escape(t('messages.offline'))}</p>` : ''}
    ${page.error && page.step === 'ready' ? `<p class="error" role="alert">${escape(page.error)}</p>` : ''}
    ${body}`);
  const list = app.querySelector('.messages');
  if (list) list.scrollTop = list.scrollHeight;
}

// Leaving the page (another page in this tab, or the tab closed) ends the session at once, so
// the user's contacts see them go; a page the browser brings back from its cache connects again.
addEventListener('pagehide', () => signal?.close());
addEventListener('pageshow', (event) => {
  if (event.persisted) connect();
});

// For tests, and for a person who asks why (as the room page's window.majlis).
window.majlis = { state, page, SignalError };
start();
