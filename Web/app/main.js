// The Majlis web app: join a room, take a seat or ask to speak, hear and be heard, chat, and run
// the room as its host. State comes from the server's snapshot and events (docs/protocol.md).

import { Signal, SignalError } from './signal.js';
import { Media } from './media.js';
import { languages, pickLanguage, translator, direction, missingKeys } from './i18n.js';

const params = new URLSearchParams(location.search);
const app = document.getElementById('app');
let language = pickLanguage(params.get('lang'));
let t = translator(language);

const state = {
  me: null, room: null, seats: [], members: new Map(), role: 'member', chatMuted: false, request: null,
  requests: [], chat: [], seq: 0, levels: new Map(), banner: null, notices: [], invite: null, ended: null,
  tab: 'chat', menu: null, mediaState: 'new', noMic: false, quality: null, resumes: 0,
};
let signal = null;
let media = null;
let roomId = params.get('room') || 'majlis';

function escape(text) {
  return String(text ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}

function setLanguage(code) {
  language = code;
  t = translator(code);
  localStorage.setItem('majlis.language', code);
  document.documentElement.lang = code;
  document.documentElement.dir = direction(code);
  document.title = t('title');
  render();
}

// MARK: Joining

function renderJoin(message = '') {
  app.innerHTML = `
    <form class="join" data-form="join">
      <h1>${escape(t('title'))}</h1>
      ${languagePicker()}
      <label>${escape(t('yourName'))}<input name="name" required maxlength="64" value="${escape(params.get('name') || localStorage.getItem('majlis.name') || '')}" autocomplete="nickname"></label>
      <label>${escape(t('roomId'))}<input name="room" required maxlength="64" pattern="[A-Za-z0-9_.@-]+" value="${escape(roomId)}"></label>
      <label>${escape(t('createAs'))}
        <select name="mode"><option value="request">${escape(t('request'))}</option><option value="free">${escape(t('free'))}</option></select></label>
      <label class="token" hidden>${escape(t('token'))}<input name="token" autocomplete="off"></label>
      <button type="submit" data-action="join">${escape(t('join'))}</button>
      <p class="error" role="alert">${escape(message)}</p>
    </form>`;
}

async function join(form) {
  const data = new FormData(form);
  roomId = data.get('room');
  localStorage.setItem('majlis.name', data.get('name'));
  let token = params.get('token') || data.get('token');
  try {
    if (!token) {
      const answer = await fetch(`/v1/dev/token?name=${encodeURIComponent(data.get('name'))}`);
      if (!answer.ok) {
        form.querySelector('.token').hidden = false;
        throw new Error((await answer.json().catch(() => ({}))).error || 'a token is needed');
      }
      token = (await answer.json()).token;
    }
    await connect(token, { mode: data.get('mode') });
  } catch (error) {
    renderJoin(describe(error));
  }
}

async function connect(token, create) {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  signal = new Signal(`${scheme}://${location.host}/v1/signal`, token, { event: onEvent, state: onConnection });
  const hello = await signal.start();
  state.me = hello.user;
  const snapshot = await signal.request('room.join', { room: roomId, create });
  applySnapshot(snapshot);
  await loadChat();
  history.replaceState(null, '', `?room=${encodeURIComponent(roomId)}${params.get('lang') ? `&lang=${language}` : ''}`);
  media = new Media(signal, roomId, (mediaState) => {
    state.mediaState = mediaState;
    render();
  });
  await media.start(state.seats.length, params.get('processing') !== 'off');
  state.noMic = !media.micTrack;
  updateMic();
  render();
}

function describe(error) {
  if (error instanceof SignalError) {
    const known = t(`error.${error.code}`);
    return known === `error.${error.code}` ? t('error', { message: error.message }) : known;
  }
  return t('error', { message: error.message || String(error) });
}

// MARK: State

function applySnapshot(snapshot) {
  state.room = snapshot.room;
  state.seats = snapshot.seats;
  state.members = new Map(snapshot.members.map((member) => [member.id, member]));
  state.role = snapshot.me.role;
  state.chatMuted = snapshot.me.chatMuted;
  state.request = snapshot.me.request || null;
  state.requests = snapshot.requests;
  state.seq = snapshot.seq;
}

// The latest messages (what was said before joining, or while the connection was down).
async function loadChat() {
  const answer = await signal.request('chat.history', { room: roomId, limit: 50 }).catch(() => null);
  if (answer) state.chat = answer.messages.reverse();
}

async function resync() {
  try {
    applySnapshot(await signal.request('room.sync', { room: roomId }));
  } catch (error) {
    if (error.code !== 'not_in_room') return;
    // Dropped from the room (away past the resume grace): join again, with a new media transport.
    applySnapshot(await signal.request('room.join', { room: roomId }));
    media?.negotiate(state.seats.length, true).catch(() => {});
  }
  await loadChat();
  updateMic();
  render();
}

function onConnection(name, detail) {
  if (name === 'reconnecting') state.banner = 'reconnecting';
  if (name === 'resumed') {
    state.banner = null;
    state.resumes += 1;
    resync();
  }
  if (name === 'closed' && !state.ended) state.ended = t('closed', { reason: detail.reason || detail.code || '' });
  render();
}

function notice(text) {
  const entry = { text, id: Math.random() };
  state.notices.push(entry);
  setTimeout(() => {
    state.notices = state.notices.filter((item) => item !== entry);
    render();
  }, 4000);
}

function nameOf(user) {
  return state.members.get(user)?.name || user;
}

function onEvent(frame) {
  if (frame.room && frame.room !== roomId) return;
  if (frame.seq !== undefined) {
    if (frame.seq <= state.seq) return;
    if (frame.seq !== state.seq + 1) {
      resync();
      return;
    }
    state.seq = frame.seq;
  }
  const data = frame.data || {};
  switch (frame.ev) {
    case 'room.updated': {
      const seatCount = state.room.seatCount;
      state.room = data.room;
      if (data.room.seatCount !== seatCount) {
        state.seats = Array.from({ length: data.room.seatCount }, (_, index) => state.seats[index] || { index, state: 'empty', muted: false, micOn: false });
        media?.negotiate(data.room.seatCount).catch(() => {});
      }
      break;
    }
    case 'room.ended': state.ended = t('ended'); media?.stop(); break;
    case 'member.joined': state.members.set(data.member.id, data.member); notice(t('joined', { name: data.member.name })); break;
    case 'member.left': notice(t('left', { name: nameOf(data.user) })); state.members.delete(data.user); break;
    case 'member.updated':
      state.members.set(data.member.id, data.member);
      if (data.member.id === state.me.id) {
        state.role = data.member.role;
        state.chatMuted = data.member.chatMuted;
      }
      break;
    case 'members.changed':
      for (const member of data.joined) state.members.set(member.id, member);
      for (const user of data.left) state.members.delete(user);
      state.room.memberCount = data.memberCount;
      break;
    case 'seat.updated':
      for (const seat of data.seats) state.seats[seat.index] = seat;
      break;
    case 'request.received': state.requests.push(data.request); break;
    case 'request.cancelled':
      state.requests = state.requests.filter((request) => request.id !== data.requestId);
      if (state.request?.id === data.requestId) state.request = null;
      break;
    case 'request.accepted': state.request = null; notice(t('accepted')); break;
    case 'request.rejected': state.request = null; notice(t('rejected')); break;
    case 'seat.invited': state.invite = data; break;
    case 'you.kicked': state.ended = t('kicked'); media?.stop(); break;
    case 'you.chatMuted': state.chatMuted = data.until !== undefined; break;
    case 'chat.message': state.chat.push(data); break;
    case 'speaker.levels': state.levels = new Map(data.levels.map((level) => [level.user, level.level])); break;
    case 'network.quality':
      if (data.user === state.me.id) state.quality = [data.up, data.down].some((level) => ['poor', 'bad', 'down'].includes(level)) ? 'poor' : null;
      break;
    default: return;
  }
  updateMic();
  render();
}

function mySeat() {
  return state.seats.find((seat) => seat.user === state.me?.id);
}

function isModerator() {
  return state.role === 'owner' || state.role === 'admin';
}

function updateMic() {
  const seat = mySeat();
  media?.setMic(Boolean(seat && seat.micOn && !seat.muted));
}

// MARK: Actions

async function act(op, args = {}) {
  try {
    return await signal.request(op, { room: roomId, ...args });
  } catch (error) {
    notice(describe(error));
    render();
    return null;
  }
}

const actions = {
  // A host's click on another seat opens its menu; anyone else's click on an empty seat sits there.
  seat: async (index) => {
    const seat = state.seats[index];
    if (seat.user === state.me.id) return;
    if (isModerator()) {
      state.menu = state.menu?.seat === index ? null : { seat: index };
      return;
    }
    if (seat.state === 'empty') return actions.sit(index);
  },
  sit: async (index) => {
    state.menu = null;
    if (mySeat()) return act('seat.switch', { to: index });
    if (state.room.mode === 'request' && !isModerator()) return actions.ask(index);
    return act('seat.take', { index });
  },
  ask: async (index) => {
    const answer = await act('request.create', index === undefined ? {} : { index });
    if (answer) state.request = { id: answer.requestId, index };
  },
  cancel: () => act('request.cancel', { requestId: state.request.id }).then(() => { state.request = null; }),
  take: () => (state.room.mode === 'request' && !isModerator() ? actions.ask() : act('seat.take')),
  leaveSeat: () => act('seat.leave'),
  mic: () => act('mic.set', { on: !mySeat().micOn }),
  accept: (id) => act('request.accept', { requestId: id }),
  reject: (id) => act('request.reject', { requestId: id }),
  lock: (index) => act('seat.lock', { index, locked: state.seats[index].state !== 'locked', kick: true }),
  mute: (index) => act('seat.mute', { index, muted: !state.seats[index].muted }),
  kickSeat: (index) => act('seat.kick', { index }),
  member: (user) => { state.menu = state.menu?.user === user ? null : { user }; },
  admin: (user) => act('member.role', { user, role: state.members.get(user)?.role === 'admin' ? 'member' : 'admin' }),
  transfer: (user) => act('member.transferOwner', { user }),
  kick: (user) => act('member.kick', { user, banSeconds: 3600 }),
  invite: (user) => act('seat.invite', { user }),
  inviteReply: async (accept) => {
    const invite = state.invite;
    state.invite = null;
    await act('seat.inviteReply', { inviteId: invite.inviteId, accept: accept === 'yes' });
  },
  tab: (name) => { state.tab = name; },
  language: (code) => setLanguage(code),
  audio: () => media?.resumeAudio(),
  leave: async () => {
    await act('room.leave');
    signal.close();
    media?.stop();
    state.ended = t('left', { name: state.me.name });
  },
  end: async () => {
    if (await act('room.end')) media?.stop();
  },
};

app.addEventListener('click', async (event) => {
  const target = event.target.closest('[data-action]');
  if (!target || target.dataset.action === 'join') return;
  media?.resumeAudio();
  const action = actions[target.dataset.action];
  if (!action) return;
  event.preventDefault();
  await action(target.dataset.value === undefined ? undefined : isNaN(target.dataset.value) ? target.dataset.value : Number(target.dataset.value));
  render();
});

app.addEventListener('change', (event) => {
  if (event.target.name === 'language') setLanguage(event.target.value);
});

app.addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.target;
  if (form.dataset.form === 'join') return join(form);
  if (form.dataset.form === 'chat') {
    const input = form.elements.text;
    const text = input.value.trim();
    if (!text) return;
    input.value = '';
    await act('chat.send', { text, clientMsgId: `${Date.now()}-${Math.random().toString(36).slice(2, 8)}` });
  }
});

// MARK: Rendering

function languagePicker() {
  return `<select name="language" aria-label="${escape(t('language'))}">${Object.entries(languages)
    .map(([code, label]) => `<option value="${code}" ${code === language ? 'selected' : ''}>${escape(label)}</option>`).join('')}</select>`;
}

function roleMark(user) {
  const role = state.members.get(user)?.role;
  if (role === 'owner') return `<span class="mark owner">${escape(t('owner'))}</span>`;
  if (role === 'admin') return `<span class="mark admin">${escape(t('admin'))}</span>`;
  return '';
}

function renderSeat(seat) {
  const level = seat.user ? state.levels.get(seat.user) || 0 : 0;
  const classes = ['seat', seat.state, level > 5 ? 'speaking' : '', seat.user === state.me.id ? 'mine' : ''].join(' ');
  const label = seat.user ? nameOf(seat.user) : t(seat.state === 'locked' ? 'locked' : 'empty');
  const marks = [seat.muted ? '<span class="icon muted" title="muted">🔇</span>' : '', seat.user && !seat.micOn && !seat.muted ? '<span class="icon mic-off">🎙̸</span>' : '',
    seat.state === 'locked' ? '<span class="icon lock">🔒</span>' : ''].join('');
  let menu = '';
  if (state.menu?.seat === seat.index && isModerator()) {
    menu = `<div class="menu">
      ${seat.state === 'empty' ? `<button data-action="sit" data-value="${seat.index}" class="primary">${escape(t('takeSeat'))}</button>` : ''}
      <button data-action="lock" data-value="${seat.index}">${escape(t(seat.state === 'locked' ? 'unlock' : 'lock'))}</button>
      <button data-action="mute" data-value="${seat.index}">${escape(t(seat.muted ? 'unmute' : 'mute'))}</button>
      ${seat.user ? `<button data-action="kickSeat" data-value="${seat.index}">${escape(t('kickFromSeat'))}</button>` : ''}</div>`;
  }
  return `<li class="${classes}" data-seat="${seat.index}" data-user="${escape(seat.user || '')}" style="--level:${level}">
    <button class="avatar" data-action="seat" data-value="${seat.index}" aria-label="${escape(t('seat', { n: seat.index + 1 }))}">${escape(seat.user ? label.slice(0, 1) : seat.index + 1)}</button>
    <span class="name">${escape(label)}</span>${seat.user ? roleMark(seat.user) : ''}${marks}${menu}</li>`;
}

function renderControls() {
  const seat = mySeat();
  const buttons = [];
  if (seat) {
    buttons.push(`<button data-action="mic" class="${seat.micOn ? 'on' : 'off'}">${escape(t(seat.micOn ? 'micOn' : 'micOff'))}</button>`);
    buttons.push(`<button data-action="leaveSeat">${escape(t('leaveSeat'))}</button>`);
  } else if (state.request) {
    buttons.push(`<span class="pending">${escape(t('requestPending'))}</span><button data-action="cancel">${escape(t('cancelRequest'))}</button>`);
  } else {
    const ask = state.room.mode === 'request' && !isModerator();
    buttons.push(`<button data-action="take" class="primary">${escape(t(ask ? 'askToSpeak' : 'takeSeat'))}</button>`);
  }
  if (state.noMic) buttons.push(`<span class="hint">${escape(t('noMic'))}</span>`);
  return `<div class="controls">${buttons.join('')}</div>`;
}

function renderRequests() {
  if (!isModerator() || state.requests.length === 0) return '';
  return `<section class="requests"><h2>${escape(t('requests'))}</h2><ul>${state.requests.map((request) => `
    <li data-request="${escape(request.id)}"><span>${escape(nameOf(request.user))}</span>
      <button data-action="accept" data-value="${escape(request.id)}" class="primary">${escape(t('accept'))}</button>
      <button data-action="reject" data-value="${escape(request.id)}">${escape(t('reject'))}</button></li>`).join('')}</ul></section>`;
}

function dayLabel(ts) {
  const day = new Date(ts).toDateString();
  const now = new Date();
  if (day === now.toDateString()) return t('today');
  if (day === new Date(now - 86400000).toDateString()) return t('yesterday');
  return new Date(ts).toLocaleDateString(language);
}

function renderChat() {
  let lastDay = null;
  const lines = state.chat.map((message) => {
    const day = dayLabel(message.ts);
    const separator = day !== lastDay ? `<li class="day">${escape(day)}</li>` : '';
    lastDay = day;
    const time = new Date(message.ts).toLocaleTimeString(language, { hour: '2-digit', minute: '2-digit' });
    return `${separator}<li class="message ${message.from.id === state.me.id ? 'mine' : ''}"><b>${escape(message.from.name)}</b>
      <bdi>${escape(message.text ?? '')}</bdi><time>${escape(time)}</time></li>`;
  });
  return `<ul class="messages" aria-live="polite">${lines.join('')}</ul>
    <form data-form="chat" class="compose"><input name="text" maxlength="500" autocomplete="off" placeholder="${escape(t(state.chatMuted ? 'chatMuted' : 'typeMessage'))}" ${state.chatMuted ? 'disabled' : ''}>
    <button type="submit" ${state.chatMuted ? 'disabled' : ''}>${escape(t('send'))}</button></form>`;
}

function renderMembers() {
  const owner = state.role === 'owner';
  return `<ul class="members">${[...state.members.values()].map((member) => {
    const mine = member.id === state.me.id;
    let menu = '';
    if (state.menu?.user === member.id && isModerator() && !mine) {
      const items = [];
      if (!member.seat && member.seat !== 0) items.push(['invite', 'invite']);
      if (owner) items.push(['admin', member.role === 'admin' ? 'removeAdmin' : 'makeAdmin'], ['transfer', 'transfer']);
      if (member.role !== 'owner' && (owner || member.role === 'member')) items.push(['kick', 'kick']);
      menu = `<div class="menu">${items.map(([action, label]) => `<button data-action="${action}" data-value="${escape(member.id)}">${escape(t(label))}</button>`).join('')}</div>`;
    }
    return `<li data-member="${escape(member.id)}"><button class="who" data-action="member" data-value="${escape(member.id)}">
      <bdi>${escape(member.name)}</bdi>${mine ? ` (${escape(t('you'))})` : ''}</button>${roleMark(member.id)}${menu}</li>`;
  }).join('')}</ul>`;
}

function render() {
  if (!state.room) return renderJoin();
  if (state.ended) {
    app.innerHTML = `<div class="ended"><h1>${escape(t('title'))}</h1><p role="alert">${escape(state.ended)}</p><a href="?room=${encodeURIComponent(roomId)}">${escape(t('join'))}</a></div>`;
    return;
  }
  const banners = [];
  if (state.banner === 'reconnecting') banners.push(t('reconnecting'));
  if (state.quality === 'poor') banners.push(t('poorNetwork'));
  if (state.mediaState === 'failed') banners.push(t('mediaFailed'));
  const chatScroll = app.querySelector('.messages');
  const atBottom = !chatScroll || chatScroll.scrollTop + chatScroll.clientHeight >= chatScroll.scrollHeight - 8;
  const previous = app.querySelector('[data-form=chat] input');
  const draft = previous?.value || '';
  const focused = previous && document.activeElement === previous ? [previous.selectionStart, previous.selectionEnd] : null;
  app.innerHTML = `
    <header>
      <h1><bdi>${escape(state.room.title || state.room.id)}</bdi></h1>
      <span class="count">${escape(t('memberCount', { n: state.room.memberCount }))}</span>
      <span class="mode">${escape(t(state.room.mode))}</span>
      ${languagePicker()}
      ${state.role === 'owner' ? `<button data-action="end" class="danger">${escape(t('endRoom'))}</button>` : ''}
      <button data-action="leave">${escape(t('leaveRoom'))}</button>
    </header>
    ${banners.map((text) => `<div class="banner" role="status">${escape(text)}</div>`).join('')}
    ${state.invite ? `<div class="banner invite" role="alertdialog">${escape(t('invited', { name: nameOf(state.invite.from) }))}
      <button data-action="inviteReply" data-value="yes" class="primary">${escape(t('yes'))}</button><button data-action="inviteReply" data-value="no">${escape(t('no'))}</button></div>` : ''}
    <main>
      <section class="stage">
        ${state.room.announcement ? `<p class="announcement"><bdi>${escape(state.room.announcement)}</bdi></p>` : ''}
        <ol class="seats">${state.seats.map(renderSeat).join('')}</ol>
        ${renderControls()}
        ${renderRequests()}
      </section>
      <section class="side">
        <nav class="tabs"><button data-action="tab" data-value="chat" class="${state.tab === 'chat' ? 'active' : ''}">${escape(t('chat'))}</button>
          <button data-action="tab" data-value="members" class="${state.tab === 'members' ? 'active' : ''}">${escape(t('members'))} (${state.room.memberCount})</button></nav>
        ${state.tab === 'chat' ? renderChat() : renderMembers()}
      </section>
    </main>
    <div class="notices">${state.notices.map((entry) => `<p>${escape(entry.text)}</p>`).join('')}</div>`;
  const input = app.querySelector('[data-form=chat] input');
  if (input && draft) input.value = draft;
  if (input && focused) {
    input.focus();
    input.setSelectionRange(...focused);
  }
  const messages = app.querySelector('.messages');
  if (messages && atBottom) messages.scrollTop = messages.scrollHeight;
}

// Hooks for tests and for debugging from the console.
window.majlis = { state, level: (seat) => media?.level(seat) ?? 0, peakFrequency: (seat) => media?.peakFrequency(seat) ?? 0, packetsReceived: async (seat) => (await media?.packetsReceived(seat)) ?? 0, media: () => media, signal: () => signal, t: (key, values) => t(key, values), missingKeys };

setLanguage(language);
if (params.get('token')) connect(params.get('token'), { mode: 'request' }).catch((error) => renderJoin(describe(error)));
