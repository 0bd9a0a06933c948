// The operator console: every room with its live member count, a room's seats and members with
// kick, ban, mute everyone, a system message and end, and the webhook queue with replay. It
// speaks the server API (docs/openapi.yaml) with a token that grants admin for every room.

import { languages, pickLanguage, translator, direction } from './i18n.js';
import { morph } from './morph.js';

const params = new URLSearchParams(location.search);
const root = document.getElementById('console');
let language = pickLanguage(params.get('lang'));
let t = translator(language);

const state = {
  development: false, // whether the server is in development mode (its key may be used here)
  token: sessionStorage.getItem('majlis.console.token') || '', rooms: [], room: null, bans: [], hooks: null, error: '', notice: null,
  confirm: null, refreshes: 0,
};
let timer = null;

function escape(text) {
  return String(text ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}

function time(ms) {
  return ms ? new Date(ms).toLocaleString(language === 'zh' ? 'zh-CN' : language) : '';
}

class APIError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function api(method, path, body) {
  const answer = await fetch(`/v1${path}`, {
    method,
    headers: { Authorization: `Bearer ${state.token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const data = await answer.json().catch(() => ({}));
  if (!answer.ok) throw new APIError(answer.status, data.error?.code || `http_${answer.status}`, data.error?.message || answer.statusText);
  return data;
}

function describe(error) {
  const known = t(`error.${error.code}`);
  return known === `error.${error.code}` ? t('error', { message: error.message }) : known;
}

// MARK: Signing in

function renderSignIn(message = '') {
  morph(root, `
    <form class="join" data-form="sign-in">
      <h1>${escape(t('console.title'))}</h1>
      ${languagePicker()}
      <label>${escape(t('console.token'))}<input name="token" autocomplete="off" value="${escape(state.token)}"></label>
      <button type="submit" class="primary" data-action="sign-in">${escape(t('console.signIn'))}</button>
      ${state.development ? `<button type="button" data-action="development">${escape(t('console.development'))}</button>`
    : `<p class="hint">${escape(t('console.noDevelopment'))}</p>`}
      <p class="error" role="alert">${escape(message)}</p>
    </form>`);
}

async function signIn(token) {
  state.token = token;
  try {
    await refresh();
    sessionStorage.setItem('majlis.console.token', token);
    clearInterval(timer);
    timer = setInterval(() => refresh().catch(() => {}), 2000);
  } catch (error) {
    state.token = '';
    renderSignIn(describe(error));
  }
}

async function developmentToken() {
  const answer = await fetch('/v1/dev/token?name=Operator&admin=1');
  if (!answer.ok) throw new APIError(answer.status, 'unauthorized', t('console.noDevelopment'));
  return (await answer.json()).token;
}

// MARK: Data

async function refresh() {
  // The cluster's registry may be out of reach (Redis down) while rooms run on: that is shown, not thrown.
  const nodes = api('GET', '/nodes').catch((error) => ({ error: describe(error) }));
  const [rooms, hooks] = await Promise.all([api('GET', '/rooms?limit=200'), api('GET', '/webhooks/events?limit=500')]);
  state.rooms = rooms.rooms;
  state.hooks = hooks;
  state.nodes = await nodes;
  if (state.room) await loadRoom(state.room.room.id);
  state.refreshes += 1;
  render();
}

// A room's view and its bans (null when the room is gone).
async function loadRoom(id) {
  const path = `/rooms/${encodeURIComponent(id)}`;
  const [room, bans] = await Promise.all([api('GET', path), api('GET', `${path}/bans`)]).catch((error) => {
    if (error.code === 'room_not_found') return [null, null];
    throw error;
  });
  state.room = room;
  state.bans = bans?.bans || [];
}

// "Name" (the id on hover) for a member of the open room, a banned user or an owner whose name
// the server knows (`known`), else the id.
function person(id, known) {
  const name = known || nameOf(id, null);
  return name ? `<bdi title="${escape(id)}">${escape(name)}</bdi>` : `<bdi>${escape(id)}</bdi>`;
}

function nameOf(id, fallback = id) {
  return state.room?.members.find((entry) => entry.id === id)?.name
    || state.bans.find((ban) => ban.user === id)?.name
    || fallback;
}

// `notice`: [key, values] of what to say when it worked (translated when shown).
async function act(work, notice) {
  try {
    await work();
    state.error = '';
    state.notice = notice || null;
    await refresh();
  } catch (error) {
    state.error = describe(error);
    render();
  }
}

// MARK: Rendering

function languagePicker() {
  return `<select data-action="language" aria-label="${escape(t('language'))}">${Object.entries(languages)
    .map(([code, name]) => `<option value="${code}" ${code === language ? 'selected' : ''}>${escape(name)}</option>`).join('')}</select>`;
}

function render() {
  if (!state.token) return renderSignIn();
  const room = state.room;
  morph(root, `
    <header><h1>${escape(t('console.title'))}</h1>${languagePicker()}<button data-action="sign-out">${escape(t('console.signOut'))}</button></header>
    ${state.error ? `<div class="banner" role="alert">${escape(state.error)}</div>` : ''}
    ${state.notice ? `<p class="hint console-notice">${escape(t(...state.notice))}</p>` : ''}
    <div class="console">
      <section class="rooms">
        <h2>${escape(t('console.rooms'))}<span class="count">${escape(t('console.roomCount', { n: state.rooms.length }))}</span></h2>
        ${state.rooms.length === 0 ? `<p class="empty">${escape(t('console.noRooms'))}</p>` : `
        <table><thead><tr><th>${escape(t('roomId'))}</th><th>${escape(t('console.roomTitle'))}</th><th>${escape(t('members'))}</th>
          <th>${escape(t('console.mode'))}</th><th>${escape(t('owner'))}</th><th></th></tr></thead><tbody>
          ${state.rooms.map((entry) => `
          <tr data-key="room-${escape(entry.id)}" data-room="${escape(entry.id)}" class="${room?.room.id === entry.id ? 'selected' : ''}">
            <td data-label="${escape(t('roomId'))}">${escape(entry.id)}</td><td class="wide" data-label="${escape(t('console.roomTitle'))}"><bdi>${escape(entry.title)}</bdi></td>
            <td class="members-count" data-label="${escape(t('members'))}">${entry.memberCount}</td>
            <td data-label="${escape(t('console.mode'))}">${escape(t(`modeLabel.${entry.mode}`))}</td><td data-label="${escape(t('owner'))}">${person(entry.owner, entry.ownerName)}</td>
            <td class="actions"><button data-action="open" data-room="${escape(entry.id)}">${escape(t('console.open'))}</button>
              <button class="danger" data-action="end" data-room="${escape(entry.id)}">${escape(t('endRoom'))}</button></td>
          </tr>`).join('')}
        </tbody></table>`}
      </section>
      ${room ? renderRoom(room) : ''}
      ${renderHooks()}
      ${renderNodes()}
    </div>
    ${state.confirm ? `<div class="dialog" role="alertdialog"><div class="box"><p>${escape(t(...state.confirm.text))}</p>
      <button class="danger" data-action="confirm-yes">${escape(t('confirm.yes'))}</button><button data-action="confirm-no">${escape(t('cancel'))}</button></div></div>` : ''}`);
}

function renderRoom(view) {
  const info = view.room;
  const seat = (entry) => entry.state === 'locked' ? escape(t('locked')) : entry.user ? person(entry.user) : escape(t('empty'));
  return `
    <section class="room" data-room="${escape(info.id)}">
      <h2>${escape(info.title || info.id)}<span class="count">${escape(t('memberCount', { n: info.memberCount }))}</span>
        <button data-action="mute-all">${escape(t('console.muteAll'))}</button>
        <button data-action="unmute-all">${escape(t('console.unmuteAll'))}</button>
        <button class="danger" data-action="end" data-room="${escape(info.id)}">${escape(t('endRoom'))}</button></h2>
      <table class="seats-table"><thead><tr><th>${escape(t('seats'))}</th><th></th><th></th></tr></thead><tbody>
        ${view.seats.map((entry) => `<tr data-key="seat-${entry.index}" data-seat="${entry.index}"><td>${escape(t('seat', { n: entry.index + 1 }))}</td>
          <td>${seat(entry)}</td><td>${entry.muted ? escape(t('console.muted')) : ''}</td></tr>`).join('')}
      </tbody></table>
      <h2>${escape(t('members'))}</h2>
      ${view.members.length === 0 ? `<p class="empty">${escape(t('console.nobody'))}</p>` : `
      <table class="members-table"><tbody>
        ${view.members.map((member) => `<tr data-key="member-${escape(member.id)}" data-member="${escape(member.id)}"><td><bdi>${escape(member.name)}</bdi></td><td class="dim">${escape(member.id)}</td>
          <td>${member.role === 'member' ? '' : escape(t(member.role === 'owner' ? 'owner' : 'admin'))}</td>
          <td>${member.seat === undefined ? '' : escape(t('seat', { n: member.seat + 1 }))}</td>
          <td class="actions"><button data-action="kick" data-user="${escape(member.id)}">${escape(t('console.remove'))}</button>
            <button class="danger" data-action="ban" data-user="${escape(member.id)}">${escape(t('console.ban'))}</button></td></tr>`).join('')}
      </tbody></table>`}
      <form class="say" data-form="say"><input name="text" required maxlength="500" autocomplete="off" placeholder="${escape(t('console.systemMessage'))}">
        <button type="submit">${escape(t('send'))}</button></form>
      <h2>${escape(t('console.bans'))}</h2>
      ${state.bans.length === 0 ? `<p class="empty">${escape(t('console.noBans'))}</p>` : `
      <table class="bans-table"><tbody>
        ${state.bans.map((ban) => `<tr data-key="ban-${escape(ban.user)}" data-ban="${escape(ban.user)}"><td>${person(ban.user, ban.name)}</td><td class="dim">${escape(ban.user)}</td>
          <td>${escape(t('console.until', { time: time(ban.until) }))}</td>
          <td class="actions"><button data-action="unban" data-user="${escape(ban.user)}">${escape(t('console.unban'))}</button></td></tr>`).join('')}
      </tbody></table>`}
    </section>`;
}

function renderHooks() {
  const hooks = state.hooks;
  if (!hooks) return '';
  // Undelivered first, then the newest.
  const order = { failed: 0, pending: 1, delivered: 2 };
  const events = [...hooks.events].sort((a, b) => order[a.state] - order[b.state] || b.cursor - a.cursor).slice(0, 50);
  return `
    <section class="hooks">
      <h2>${escape(t('console.webhooks'))}<span class="count">${escape(t('console.queue', { n: hooks.queueDepth }))}</span></h2>
      ${events.length === 0 ? `<p class="empty">${escape(t('console.noWebhooks'))}</p>` : `
      <table><thead><tr><th>${escape(t('console.event'))}</th><th>${escape(t('roomId'))}</th><th>#</th><th>${escape(t('console.state'))}</th>
        <th>${escape(t('console.attempts'))}</th><th>${escape(t('console.when'))}</th><th></th></tr></thead><tbody>
        ${events.map((event) => `<tr data-key="event-${escape(event.id)}" data-event="${escape(event.id)}"><td>${escape(event.type)}</td><td>${escape(event.room)}</td><td>${event.seq}</td>
          <td class="wrap state-${escape(event.state)}">${escape(t(`console.${event.state}`))}${event.lastError ? ` (${escape(event.lastError)})` : ''}</td>
          <td>${event.attempts}</td><td>${escape(time(event.createdAt))}</td>
          <td><button data-action="replay" data-event="${escape(event.id)}">${escape(t('console.replay'))}</button></td></tr>`).join('')}
      </tbody></table>`}
    </section>`;
}

// The nodes of the cluster, with their load; nothing for a lone server (its counts are the
// room list's).
function renderNodes() {
  const nodes = state.nodes;
  if (!nodes || (!nodes.error && nodes.nodes.length < 2)) return '';
  if (nodes.error) {
    return `<section class="nodes"><h2>${escape(t('console.nodes'))}</h2><p class="empty" role="status">${escape(t('console.noRegistry'))}: ${escape(nodes.error)}</p></section>`;
  }
  return `
    <section class="nodes">
      <h2>${escape(t('console.nodes'))}<span class="count">${escape(t('console.nodeCount', { n: nodes.nodes.length }))}</span></h2>
      <table><thead><tr><th>${escape(t('console.node'))}</th><th>${escape(t('console.state'))}</th><th>${escape(t('console.rooms'))}</th>
        <th>${escape(t('members'))}</th><th>${escape(t('console.packets'))}</th><th>${escape(t('console.cpu'))}</th><th>${escape(t('console.address'))}</th></tr></thead><tbody>
        ${nodes.nodes.map((node) => `<tr data-key="node-${escape(node.id)}" data-node="${escape(node.id)}" class="${node.id === nodes.node ? 'selected' : ''}">
          <td><bdi>${escape(node.id)}</bdi></td><td>${escape(t(`console.node.${node.state}`))}</td><td>${node.rooms}</td><td>${node.members}</td>
          <td>${Math.round(node.packetsPerSecond)}</td><td>${Math.round(node.cpu * 100)}%</td><td class="dim"><bdi>${escape(node.signaling)}</bdi></td></tr>`).join('')}
      </tbody></table>
    </section>`;
}

// MARK: Actions

root.addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.target;
  if (form.dataset.form === 'sign-in') signIn(new FormData(form).get('token').trim());
  if (form.dataset.form === 'say') {
    const text = new FormData(form).get('text');
    act(async () => {
      await api('POST', `/rooms/${encodeURIComponent(state.room.room.id)}/chat`, { text });
      form.elements.text.value = '';
    }, ['console.said']);
  }
});

root.addEventListener('change', (event) => {
  if (event.target.dataset.action !== 'language') return;
  language = event.target.value;
  t = translator(language);
  localStorage.setItem('majlis.language', language);
  applyLanguage();
  render();
});

root.addEventListener('click', (event) => {
  const button = event.target.closest('button[data-action]');
  if (!button) return;
  const room = button.dataset.room || state.room?.room.id;
  const path = `/rooms/${encodeURIComponent(room || '')}`;
  switch (button.dataset.action) {
    case 'development':
      developmentToken().then(signIn).catch((error) => renderSignIn(error.message));
      break;
    case 'sign-out':
      clearInterval(timer);
      sessionStorage.removeItem('majlis.console.token');
      Object.assign(state, { token: '', room: null, rooms: [], hooks: null, error: '', notice: null });
      render();
      break;
    case 'open':
      act(() => loadRoom(room));
      break;
    case 'end':
      ask(['console.confirmEnd', { room }], () => act(() => api('DELETE', path), ['console.ended', { room }]));
      break;
    case 'confirm-yes': {
      const then = state.confirm?.then;
      state.confirm = null;
      render();
      then?.();
      break;
    }
    case 'confirm-no':
      state.confirm = null;
      render();
      break;
    case 'unban':
      act(() => api('DELETE', `${path}/bans/${encodeURIComponent(button.dataset.user)}`), ['console.unbanned', { name: nameOf(button.dataset.user) }]);
      break;
    case 'mute-all':
      act(() => api('POST', `${path}/mute-all`, { muted: true }));
      break;
    case 'unmute-all':
      act(() => api('POST', `${path}/mute-all`, { muted: false }));
      break;
    case 'kick': {
      const name = nameOf(button.dataset.user);
      ask(['console.confirmRemove', { name }], () =>
        act(() => api('POST', `${path}/members/${encodeURIComponent(button.dataset.user)}/kick`, {}), ['console.removed', { name }]));
      break;
    }
    case 'ban': {
      const name = nameOf(button.dataset.user);
      ask(['console.confirmBan', { name }], () =>
        act(() => api('POST', `${path}/members/${encodeURIComponent(button.dataset.user)}/kick`, { banSeconds: 86400 }), ['console.banned', { name }]));
      break;
    }
    case 'replay':
      act(() => api('POST', `/webhooks/events/${encodeURIComponent(button.dataset.event)}/replay`), ['console.replayed']);
      break;
  }
});

// Asks in the page first (`text`: [key, values]); `then` runs on yes.
function ask(text, then) {
  state.confirm = { text, then };
  render();
}

function applyLanguage() {
  document.documentElement.lang = language;
  document.documentElement.dir = direction(language);
  document.title = t('console.title');
}

// For tests and the curious.
window.majlisConsole = { state, refresh };

applyLanguage();
// The development key's button only where there is one (GET /v1/web/config).
fetch('/v1/web/config').then((answer) => answer.json()).then((config) => { state.development = Boolean(config.development); }).catch(() => {})
  .finally(() => { if (state.token) signIn(state.token); else render(); });
