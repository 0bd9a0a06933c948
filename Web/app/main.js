// The Majlis web app: join a room, take a seat or ask to speak, hear and be heard, chat, and run
// the room as its host. The room's state and its changes are in state.js; sign-in in identity.js;
// this file draws the page from them (morph.js changes only what differs) and carries out actions.

import { Signal, SignalError } from './signal.js';
import { RoomRecovery, roomRetryEvery, roomWaitFor } from './connection.js';
import { Media } from './media.js';
import { Precall } from './precall.js';
import { effects } from './sound.js';
import { morph } from './morph.js';
import { icon } from './icons.js';
import { Identity } from './identity.js';
import { Packs } from './packs.js';
import { drawFrame, frameAt } from './lottie.js';
import { ClientLog } from './clientlog.js';
import {
  initialState, applySnapshot, applyEvent, addChat, expectOwnChange, mySeat, isModerator, nameOf, micLive, roomIdFor, nodePage,
} from './state.js';
import { languages, pickLanguage, translator, direction, missingKeys } from './i18n.js';

const params = new URLSearchParams(location.search);
const app = document.getElementById('app');
let language = pickLanguage(params.get('lang'));
let t = translator(language);

const state = initialState();
// What only the page has: the join form's step, banners, notices, menus, the dialog, media.
const page = {
  step: 'loading', // 'loading' (until the sign-in ways are known), 'join', 'precall' (the check before joining), 'create' (the room does not exist: make it?), 'connecting', 'room', 'ended'
  error: '',
  joinTitle: null, // the title typed, when the room id was made from it
  banner: null,
  notices: [],
  menu: null,
  confirm: null, // {text: [key, values], action, value}
  tab: 'chat', // 'chat', 'members', 'sound'
  leaders: null, // {givers, receivers}: today's gift leaderboard, read when the members tab opens
  sound: { processing: true, effect: 'none', pitch: null, spatial: false, music: null, musicPlaying: false, send: 100, local: 100 },
  mediaState: 'new',
  mic: 'unknown', // 'ok', 'none', 'denied'
  // The check before joining: its microphone, echo test ('idle', 'starting', 'running') and
  // network check (null, 'running', or its figures {roundTrip, loss, jitter, grade}).
  check: { mic: 'unknown', echo: 'idle', network: null, error: '' },
  resumes: 0,
  sessionEnded: null, // why the server ended the session ({reason, message}), when it said
  emoji: new Map(), // seat index -> {images, frame, text, item, until}: seat emoji showing now
  picker: null, // {items: [{pack, item, label, image}]} while the emoji picker is open
  draws: 0, // how often the page was drawn (for tests)
  log: [], // the connection's last steps, for tests and for a person who asks why (window.majlis.page.log)
};

// The page's log: every line kept for the app's support (`clientLog`, section 20 of the
// protocol), the last hundred on the page too.
const clientLog = new ClientLog();
function log(text) {
  clientLog.record(text);
  page.log.push(`${new Date().toISOString().slice(11, 23)} ${text}`);
  if (page.log.length > 100) page.log.shift();
}
let signal = null;
let media = null;
let precall = null; // {signal, check: Precall} while the check before joining is open
let roomId = params.get('room') || 'majlis';
// The title of a room whose id was made from it, kept for the tab: "Join again" after the room
// ended offers to make it again under its title, not its id.
page.joinTitle = sessionStorage.getItem(`majlis.title.${roomId}`);
const identity = new Identity();
const packs = new Packs();

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

// Takes the name, room and token typed into the join form.
function readJoinForm(form) {
  const data = new FormData(form);
  if (data.get('name') !== null) identity.setName(String(data.get('name')).trim());
  if (data.get('room') !== null) {
    const typed = roomIdFor(data.get('room'));
    roomId = typed.id;
    page.joinTitle = typed.title;
  }
  if (data.get('token')) identity.useToken(String(data.get('token')).trim());
}

async function join(form, create = null) {
  readJoinForm(form);
  await closeCheck();
  page.step = 'connecting';
  page.error = '';
  render();
  try {
    await connect(create);
  } catch (error) {
    // Left while the room was still starting (its media): what failed was cut short by leaving.
    if (state.ended) return;
    signal?.close();
    signal = null;
    if (goToRoomsNode(error)) return;
    if (error instanceof SignalError && error.code === 'room_not_found' && !create) {
      page.step = 'create';
    } else {
      page.step = 'join';
      page.error = describe(error);
    }
    render();
  }
}

// `room.join`; a room between nodes of a cluster (`conflict`: its node cannot be reached, as when
// it has just died and its lease has not lapsed) is asked for again every quarter second, for up
// to 15 s, before the page gives up on this node.
async function joinRoom(args) {
  const until = Date.now() + roomWaitFor;
  for (;;) {
    try {
      return await signal.request('room.join', args);
    } catch (error) {
      if (!(error instanceof SignalError && error.code === 'conflict') || Date.now() > until) throw error;
      await new Promise((resolve) => setTimeout(resolve, roomRetryEvery));
    }
  }
}

// Where the room is on another node of the cluster (refused with `conflict` naming it): goes to
// the room's page there, which joins it; false where it is not so.
function goToRoomsNode(error) {
  const there = error instanceof SignalError && error.code === 'conflict' && error.host?.signaling
    ? nodePage(error.host.signaling, roomId, { lang: params.get('lang') ? language : null, name: identity.name }) : null;
  if (!there || new URL(there).origin === location.origin) return false;
  signal?.close();
  location.assign(there);
  return true;
}

function signalingURL() {
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/v1/signal`;
}

async function connect(create) {
  const token = await identity.token();
  signal = new Signal(signalingURL(), token, { event: onEvent, state: onConnection });
  const hello = await signal.start();
  state.me = hello.user;
  identity.remember(hello.user);
  const snapshot = await joinRoom({ room: roomId, ...(create ? { create } : {}) });
  applySnapshot(state, snapshot);
  signal.setUsable();
  state.chat = [];
  await loadChat();
  identity.enteredRoom(roomId);
  if (state.room.title && roomIdFor(state.room.title).id === roomId) sessionStorage.setItem(`majlis.title.${roomId}`, state.room.title);
  history.replaceState(null, '', `?room=${encodeURIComponent(roomId)}${params.get('lang') ? `&lang=${language}` : ''}`);
  page.step = 'room';
  render();
  media = new Media(signal, roomId, (mediaState) => {
    page.mediaState = mediaState;
    render();
  });
  page.sound.processing = params.get('processing') !== 'off';
  page.mic = await media.start(state.seats.length, page.sound.processing);
  if (state.ended) return;
  media.setMic(micLive(state));
  render();
  page.sound.pitch = await media.sound.canShiftPitch();
  render();
}

function describe(error) {
  const code = error?.code;
  if (code) {
    const known = t(`error.${code}`);
    if (known !== `error.${code}`) return known;
    return t('error.generic', { code });
  }
  return t('error', { message: error?.message || String(error) });
}

// MARK: The check before joining

// Opens the check: signs in (without joining a room) and opens the microphone for its meter.
async function openCheck() {
  const form = document.querySelector('[data-form=join]');
  if (form) readJoinForm(form);
  page.step = 'precall';
  page.check = { mic: 'unknown', echo: 'idle', network: null, error: '' };
  render();
  try {
    const checkSignal = new Signal(signalingURL(), await identity.token(), { event: () => {}, state: () => {} });
    precall = { signal: checkSignal, check: null };
    await checkSignal.start();
    precall.check = new Precall(checkSignal);
    page.check.mic = await precall.check.openMicrophone();
  } catch (error) {
    page.check.error = describe(error);
  }
  render();
}

async function closeCheck() {
  if (!precall) return;
  const { signal: checkSignal, check } = precall;
  precall = null;
  await check?.close().catch(() => {});
  checkSignal.close();
}

// MARK: State

// The latest messages (what was said before joining, or while the connection was down).
async function loadChat() {
  const answer = await signal.request('chat.history', { room: roomId, limit: 50 }).catch(() => null);
  if (answer) addChat(state, answer.messages);
}

// Events were missed: a fresh snapshot (the membership gone meanwhile: the room got back).
async function resync() {
  try {
    applySnapshot(state, await signal.request('room.sync', { room: roomId }));
  } catch (error) {
    if (error.code === 'not_in_room') recover();
    return;
  }
  await loadChat();
  media?.setMic(micLive(state));
  render();
}

// Back after a reconnect (a server restart, the room's node dead or drained, a network cut):
// the room again (synced, joined again, or waited for while it is between nodes), the seat and
// microphone as they were, a new media transport to whichever process now serves the room, and
// what was said meanwhile. What to do at each step is RoomRecovery's (connection.js); a newer
// reconnect takes over from an older recovery.
let recoveries = 0;
async function recover() {
  const generation = ++recoveries;
  const seat = mySeat(state);
  const recovery = new RoomRecovery(seat ? { index: seat.index, micOn: seat.micOn } : null, Date.now());
  for (;;) {
    try {
      applySnapshot(state, await signal.request(recovery.next(), { room: roomId }));
      break;
    } catch (error) {
      if (generation !== recoveries) return;
      const op = recovery.next();
      const step = recovery.failed(error.code, Date.now());
      log(`${op}: ${error.code} (${error.message}): ${JSON.stringify(step)}`);
      if (step.give === 'later') return;
      if (step.give === 'move' && goToRoomsNode(error)) return;
      if (step.give) {
        finish(['closed', { reason: describe(error) }], { keepRoom: error.code !== 'room_not_found' });
        render();
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, step.retry));
      if (generation !== recoveries) return;
    }
  }
  page.banner = null;
  render();
  for (const [op, args] of recovery.seatSteps(state, state.me.id)) {
    log(`${op} ${JSON.stringify(args)}`);
    if (!(await signal.request(op, { room: roomId, ...args }).catch((error) => log(`${op}: ${error.code}`)))) break;
  }
  log('room back');
  if (generation !== recoveries) return;
  signal.setUsable();
  media?.renew(state.seats.length).catch((error) => log(`media: ${error.code || ''} ${error.message}`));
  media?.setMic(micLive(state));
  await loadChat();
  render();
}

function onConnection(name, detail) {
  log(`${name} ${detail?.code ?? ''} ${signal?.url ?? ''}`);
  if (name === 'reconnecting') page.banner = 'reconnecting';
  if (name === 'resumed') {
    page.resumes += 1;
    if (page.step === 'room') recover();
  }
  if (name === 'closed' && page.step === 'room') {
    // Told why first (`session.ended`: signed out by the app, or signed in on another device).
    const ended = page.sessionEnded;
    if (ended) finish([`session.${ended.reason}`, { message: ended.message ?? '' }], { keepRoom: ended.reason === 'elsewhere' });
    else finish(detail.code === 4004 ? ['replaced'] : ['closed', { reason: detail.reason || detail.code || '' }], { keepRoom: detail.code !== 4003 });
  }
  render();
}

function notice(key, values) {
  const entry = { key, values, id: `${Date.now()}-${Math.random()}` };
  page.notices.push(entry);
  setTimeout(() => {
    page.notices = page.notices.filter((item) => item !== entry);
    render();
  }, 6000);
}

// The room is over for us: say why, stop the media; unless `keepRoom`, a reload does not come back.
function finish(reason, { keepRoom = false } = {}) {
  state.ended = reason;
  page.step = 'ended';
  page.menu = null;
  page.confirm = null;
  media?.stop();
  if (!keepRoom) identity.leftRoom();
}

function onEvent(frame) {
  if (frame.ev === 'token.expiring') {
    identity.renew(signal);
    return;
  }
  if (frame.ev === 'log.requested') {
    clientLog.answer(frame.data, signal);
    return;
  }
  if (frame.ev === 'session.ended') {
    if (['revoked', 'elsewhere'].includes(frame.data?.reason)) page.sessionEnded = frame.data;
    return;
  }
  if (frame.ev === 'seat.emoji' && frame.room === roomId) {
    showEmoji(frame.data);
    return;
  }
  if (frame.ev === 'gift.sent' && frame.room === roomId) {
    showGift(frame.data);
    return;
  }
  const out = applyEvent(state, frame, roomId, Date.now());
  if (out.resync) {
    resync();
    return;
  }
  if (!out.changed) return;
  for (const [key, values] of out.notices) notice(key, values);
  if (out.negotiate) media?.negotiate(out.negotiate).catch(() => {});
  if (state.ended && page.step !== 'ended') finish(state.ended);
  if (page.menu?.seat !== undefined && !isModerator(state)) page.menu = null;
  media?.setMic(micLive(state));
  render();
}

// Shows a seat emoji on its seat for its length: its pack fetched and checked first (once a
// page); frames advance at their rate. One the page cannot show (a damaged pack) is left out.
async function showEmoji({ index, pack, item }) {
  let shown;
  try {
    shown = await packs.show(pack, item);
  } catch (error) {
    log(`emoji ${item}: ${error.message}`);
    return;
  }
  if (shown.reason) log(`emoji ${item}: ${shown.reason}`);
  const showing = { ...shown, frame: 0, started: Date.now(), until: Date.now() + shown.duration };
  page.emoji.set(index, showing);
  render();
  // A Lottie animation is drawn at its own rate, up to 30 frames a second.
  const rate = shown.lottie ? Math.min(30, shown.lottie.rate) : (shown.fps ?? 12);
  const timer = setInterval(() => {
    if (page.emoji.get(index) !== showing || Date.now() >= showing.until) {
      clearInterval(timer);
      if (page.emoji.get(index) === showing) page.emoji.delete(index);
    } else if (showing.images?.length > 1) {
      showing.frame = (showing.frame + 1) % showing.images.length;
    }
    render();
  }, 1000 / rate);
}

// Shows a gift the app's backend sent: its animation on the receiver's seat (the seat it was sent
// to, or the one the receiver sits on), and a note of who gave what to whom.
async function showGift({ from, fromName, to, index, pack, item, count }) {
  const seat = index ?? seatOf(to)?.index;
  if (seat !== undefined) showEmoji({ index: seat, pack, item });
  let label = item;
  try {
    const shown = await packs.show(pack, item);
    label = shown.item.names?.[language] ?? shown.item.names?.en ?? item;
  } catch {
    // The note still says who gave what.
  }
  const name = (user) => state.members.get(user)?.name ?? user;
  notice('notice.gift', { from: fromName || name(from), to: name(to), item: count > 1 ? `${label} ×${count}` : label });
  if (page.tab === 'members') loadLeaders();
  render();
}

// The room's top givers and receivers of gifts today (UTC), shown under the members.
async function loadLeaders() {
  try {
    page.leaders = await roomOp('gift.leaders', { day: new Date().toISOString().slice(0, 10), limit: 5 });
  } catch (error) {
    log(`gift leaders: ${error.message}`);
  }
  render();
}

function leadersHTML() {
  const board = page.leaders;
  if (!board || (board.givers.length === 0 && board.receivers.length === 0)) return '';
  const name = (user) => state.members.get(user)?.name ?? user;
  const list = (entries) => entries.map((entry) => `<li><bdi>${escape(name(entry.user))}</bdi> <span class="count">${entry.count}</span></li>`).join('');
  return `<section class="leaders" data-key="leaders"><h3>${escape(t('giftsToday'))}</h3>
    <h4>${escape(t('topGivers'))}</h4><ol class="givers">${list(board.givers)}</ol>
    <h4>${escape(t('topReceivers'))}</h4><ol class="receivers">${list(board.receivers)}</ol></section>`;
}

function emojiHTML(index) {
  const showing = page.emoji.get(index);
  if (!showing) return '';
  const inner = showing.images
    ? `<img src="${escape(showing.images[showing.frame])}" alt="${escape(showing.item.id)}">`
    : showing.lottie ? `<canvas width="${animationSize}" height="${animationSize}"></canvas>` : `<span>${escape(showing.text)}</span>`;
  return `<span class="emoji" data-item="${escape(showing.item.id)}" aria-hidden="true">${inner}</span>`;
}

// The canvases' size, px: twice the seat's 64 CSS px, sharp on a phone's screen.
const animationSize = 128;

// Draws each Lottie emoji's frame for now on its seat's canvas (after the page is drawn).
function drawAnimations() {
  for (const [index, showing] of page.emoji) {
    if (!showing.lottie) continue;
    const canvas = app.querySelector(`.seat[data-seat="${index}"] .emoji canvas`);
    const context = canvas?.getContext('2d');
    try {
      if (context) drawFrame(showing.lottie, context, frameAt(showing.lottie, Date.now() - showing.started), animationSize, animationSize);
    } catch (error) {
      // An animation the page cannot draw shows its name for the rest of its time.
      log(`emoji ${showing.item.id}: ${error.message}`);
      showing.lottie = null;
      showing.text = showing.item.names?.[language] ?? showing.item.names?.en ?? showing.item.id;
    }
  }
}

// A Lottie animation's first frame as an image, for the picker (none, and its name shows, where
// the page cannot draw it).
function poster(animation) {
  const canvas = document.createElement('canvas');
  canvas.width = animationSize;
  canvas.height = animationSize;
  try {
    drawFrame(animation, canvas.getContext('2d'), animation.first, animationSize, animationSize);
  } catch (error) {
    log(`emoji picture: ${error.message}`);
    return null;
  }
  return canvas.toDataURL('image/png');
}

// The emoji of the server's current emoji packs, each with its first image (packs fetched once).
async function pickerItems() {
  const catalogue = await packs.list();
  const items = [];
  for (const pack of catalogue.packs.filter((candidate) => candidate.kind === 'emoji')) {
    for (const item of pack.items) {
      try {
        const shown = await packs.show(pack.sha256, item.id);
        items.push({ pack: pack.sha256, item: item.id, label: item.names?.[language] ?? item.names?.en ?? item.id, image: shown.images?.[0] ?? (shown.lottie ? poster(shown.lottie) : null) });
      } catch (error) {
        log(`emoji ${item.id}: ${error.message}`);
      }
    }
  }
  return items;
}

// MARK: Actions

// A room op: made at once, or (while the connection is down) once the room is back, for up to
// 15 s; a member the server let go meanwhile gets the room back first.
async function roomOp(op, args = {}) {
  try {
    return await signal.send(op, { room: roomId, ...args });
  } catch (error) {
    if (error.code !== 'not_in_room' || state.ended) throw error;
    await recover();
    return signal.send(op, { room: roomId, ...args });
  }
}

// A room op whose refusal is said to the person (and answered null).
async function act(op, args = {}) {
  try {
    return await roomOp(op, args);
  } catch (error) {
    notice('plain', { text: describe(error) });
    render();
    return null;
  }
}

function seatOf(user) {
  return state.seats.find((seat) => seat.user === user) || null;
}

// Asks first (in the page's own dialog) for what cannot be undone.
function confirmFirst(text, action, value) {
  page.confirm = { text, action, value };
  page.menu = null;
}

const actions = {
  // A host's click on another seat opens its menu; anyone else's click on an empty seat sits there.
  seat: async (index) => {
    const seat = state.seats[index];
    if (seat.user === state.me.id) return;
    if (isModerator(state)) {
      page.menu = page.menu?.seat === index ? null : { seat: index };
      return;
    }
    if (seat.state === 'empty') return actions.sit(index);
  },
  sit: async (index) => {
    page.menu = null;
    expectOwnChange(state, 'seat', Date.now());
    if (mySeat(state)) return act('seat.switch', { to: index });
    if (state.room.mode === 'request' && !isModerator(state)) return actions.ask(index);
    return act('seat.take', { index });
  },
  ask: async (index) => {
    const answer = await act('request.create', index === undefined ? {} : { index });
    if (answer) state.request = { id: answer.requestId, index };
  },
  cancel: () => act('request.cancel', { requestId: state.request.id }).then(() => { state.request = null; }),
  take: () => {
    expectOwnChange(state, 'seat', Date.now());
    return state.room.mode === 'request' && !isModerator(state) ? actions.ask() : act('seat.take');
  },
  leaveSeat: () => {
    expectOwnChange(state, 'seat', Date.now());
    return act('seat.leave');
  },
  mic: () => {
    expectOwnChange(state, 'mic', Date.now());
    return act('mic.set', { on: !mySeat(state).micOn });
  },
  emojiPicker: async () => {
    if (page.picker) {
      page.picker = null;
      return;
    }
    try {
      page.picker = { items: await pickerItems() };
    } catch (error) {
      notice('plain', { text: error.message });
    }
  },
  emoji: (value) => {
    const [pack, item] = value.split(':');
    page.picker = null;
    const seat = mySeat(state);
    return seat ? act('seat.emoji', { index: seat.index, pack, item }) : null;
  },
  accept: (id) => act('request.accept', { requestId: id }),
  reject: (id) => act('request.reject', { requestId: id }),
  lock: (index) => {
    const seat = state.seats[index];
    if (seat.state === 'occupied') return confirmFirst(['confirm.lock', { n: index + 1, name: nameOf(state, seat.user) }], 'lockNow', index);
    return actions.lockNow(index);
  },
  lockNow: (index) => {
    page.menu = null;
    return act('seat.lock', { index, locked: state.seats[index].state !== 'locked', kick: true });
  },
  mute: (index) => {
    page.menu = null;
    return act('seat.mute', { index, muted: !state.seats[index].muted });
  },
  kickSeat: (index) => {
    page.menu = null;
    return act('seat.kick', { index });
  },
  member: (user) => { page.menu = page.menu?.user === user ? null : { user }; },
  admin: (user) => {
    page.menu = null;
    return act('member.role', { user, role: state.members.get(user)?.role === 'admin' ? 'member' : 'admin' });
  },
  transfer: (user) => confirmFirst(['confirm.transfer', { name: nameOf(state, user) }], 'transferNow', user),
  transferNow: (user) => act('member.transferOwner', { user }),
  kick: (user) => confirmFirst(['confirm.kick', { name: nameOf(state, user) }], 'kickNow', user),
  kickNow: (user) => act('member.kick', { user, banSeconds: 3600 }),
  invite: (user) => {
    page.menu = null;
    return act('seat.invite', { user });
  },
  inviteReply: async (accept) => {
    const invite = state.invite;
    state.invite = null;
    if (accept === 'yes') expectOwnChange(state, 'seat', Date.now());
    await act('seat.inviteReply', { inviteId: invite.inviteId, accept: accept === 'yes' });
  },
  confirmYes: async () => {
    const { action, value } = page.confirm;
    page.confirm = null;
    await actions[action](value);
  },
  confirmNo: () => { page.confirm = null; },
  tab: (name) => {
    page.tab = name;
    if (name === 'members') loadLeaders();
  },
  playMusic: async () => {
    await media?.playMusic();
    page.sound.musicPlaying = true;
  },
  pauseMusic: async () => {
    await media?.pauseMusic();
    page.sound.musicPlaying = false;
  },
  stopMusic: async () => {
    await media?.stopMusic();
    page.sound.musicPlaying = false;
  },
  audio: () => media?.resumeAudio(),
  check: () => openCheck(),
  checkBack: async () => {
    await closeCheck();
    page.step = 'join';
  },
  echoStart: async () => {
    if (!precall?.check) return;
    page.check.echo = 'starting';
    page.check.network = null;
    page.check.error = '';
    render();
    try {
      await precall.check.startEcho(3000);
      page.check.echo = 'running';
    } catch (error) {
      page.check.echo = 'idle';
      page.check.error = describe(error);
    }
  },
  echoStop: async () => {
    await precall?.check?.stop();
    page.check.echo = 'idle';
  },
  networkCheck: async () => {
    if (!precall?.check) return;
    page.check.echo = 'idle';
    page.check.network = 'running';
    page.check.error = '';
    render();
    try {
      page.check.network = await precall.check.checkNetwork();
    } catch (error) {
      page.check.network = null;
      page.check.error = describe(error);
    }
  },
  leave: async () => {
    await act('room.leave');
    signal.close();
    finish(['youLeft']);
  },
  end: () => confirmFirst(['confirm.end'], 'endNow'),
  endNow: async () => {
    if (await act('room.end')) media?.stop();
  },
  back: () => {
    page.step = 'join';
    page.error = '';
  },
  // The join form, for a room of the person's choosing.
  otherRoom: () => {
    identity.leftRoom();
    location.assign(`${location.pathname}${params.get('lang') ? `?lang=${language}` : ''}`);
  },
  rejoin: () => {
    identity.enteredRoom(roomId);
    location.reload();
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

app.addEventListener('change', async (event) => {
  const { name, value, checked } = event.target;
  if (name === 'language') setLanguage(value);
  if (!media) return;
  if (name === 'processing') {
    page.sound.processing = checked;
    await media.setProcessing(checked);
  } else if (name === 'effect') {
    page.sound.effect = value;
    await media.setEffect(value);
  } else if (name === 'spatial') {
    page.sound.spatial = checked;
    media.setSpatial(checked);
  } else if (name === 'music' && event.target.files?.[0]) {
    const file = event.target.files[0];
    try {
      await media.loadMusic(file);
      page.sound.music = file.name;
      page.sound.musicPlaying = false;
    } catch {
      notice('musicUnreadable', { name: file.name });
    }
  } else if (name === 'musicSend' || name === 'musicLocal') {
    page.sound[name === 'musicSend' ? 'send' : 'local'] = Number(value);
    media.sound.setMusicVolumes(page.sound.send / 100, page.sound.local / 100);
  } else {
    return;
  }
  render();
});

// The microphone's level on the sound tab and the check, ten times a second (outside the
// page's drawing).
setInterval(() => {
  const meter = document.querySelector('meter[data-meter="mic"]');
  const level = media ? media.micLevel() : precall?.check ? precall.check.level() : null;
  if (meter && level !== null) meter.value = Math.min(1, level * 4);
}, 100);

app.addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.target;
  if (form.dataset.form === 'join') return join(form);
  if (form.dataset.form === 'create') {
    const mode = new FormData(form).get('mode');
    return join(form, { mode, ...(page.joinTitle ? { title: page.joinTitle } : {}) });
  }
  if (form.dataset.form === 'chat') {
    const input = form.elements.text;
    const text = input.value.trim();
    if (!text) return;
    input.value = '';
    // Typed while the connection is down, it goes when the room is back; else it is said that
    // it was not sent, and the text is put back to send again.
    try {
      await roomOp('chat.send', { text, clientMsgId: `${Date.now()}-${Math.random().toString(36).slice(2, 8)}` });
    } catch (error) {
      notice(...(error.code === 'disconnected' ? ['chat.notSent', { text }] : ['plain', { text: describe(error) }]));
      const field = document.querySelector('[data-form=chat] input');
      if (field && !field.value) field.value = text;
      render();
    }
  }
});

document.addEventListener('keydown', (event) => {
  if (event.key !== 'Escape' || (!page.menu && !page.confirm)) return;
  page.menu = null;
  page.confirm = null;
  render();
});

// MARK: Drawing

function languagePicker() {
  return `<select name="language" aria-label="${escape(t('language'))}">${Object.entries(languages)
    .map(([code, label]) => `<option value="${code}" ${code === language ? 'selected' : ''}>${escape(label)}</option>`).join('')}</select>`;
}

function joinPage() {
  const busy = page.step === 'connecting';
  if (page.step === 'create') {
    const shown = page.joinTitle || roomId;
    return `
      <form class="join" data-form="create" data-key="create">
        <h1>${escape(t('title'))}</h1>
        <p>${escape(t('createRoom.ask', { room: shown }))}</p>
        <label>${escape(t('createAs'))}
          <select name="mode"><option value="request">${escape(t('request'))}</option><option value="free">${escape(t('free'))}</option></select></label>
        <button type="submit" class="primary" data-action="create-room">${escape(t('createRoom.button'))}</button>
        <button type="button" data-action="back">${escape(t('back'))}</button>
      </form>`;
  }
  const signIn = identity.signInKind();
  return `
    <form class="join" data-form="join" data-key="join">
      <h1>${escape(t('title'))}</h1>
      ${languagePicker()}
      ${signIn === 'development' ? `<label>${escape(t('yourName'))}<input name="name" required maxlength="64" value="${escape(params.get('name') || identity.name || '')}" autocomplete="nickname"></label>` : ''}
      <label>${escape(t('roomId'))}<input name="room" required maxlength="128" value="${escape(page.joinTitle || roomId)}" autocomplete="off"></label>
      ${signIn === 'token' ? `<p class="hint">${escape(t('token.explain'))}</p>
        <label>${escape(t('token'))}<input name="token" required autocomplete="off"></label>` : ''}
      ${signIn === 'signedIn' ? `<p class="hint">${escape(t(identity.given ? 'token.signedIn' : 'token.viaApp', { name: identity.name || identity.user || '' }))}</p>` : ''}
      <button type="submit" class="primary" data-action="join" ${busy ? 'disabled' : ''}>${escape(t(busy ? 'joining' : 'join'))}</button>
      <button type="button" data-action="check" ${busy ? 'disabled' : ''}>${escape(t('check.open'))}</button>
      <p class="error" role="alert">${escape(page.error)}</p>
    </form>`;
}

// The check before joining: the microphone's level, the echo test, the network's figures.
function checkPage() {
  const check = page.check;
  const ready = Boolean(precall?.check);
  const network = check.network;
  let figures = '';
  if (network === 'running') {
    figures = `<p class="hint" role="status">${escape(t('check.networkRunning'))}</p>`;
  } else if (network) {
    const value = (number, unit) => (number === null ? '–' : `${number.toLocaleString(language)} ${t(unit)}`);
    figures = `<dl class="figures" data-grade="${network.grade}">
        <dt>${escape(t('check.grade'))}</dt><dd class="grade ${network.grade}">${escape(t(`check.grade.${network.grade}`))}</dd>
        <dt>${escape(t('check.roundTrip'))}</dt><dd>${escape(value(network.roundTrip, 'check.ms'))}</dd>
        <dt>${escape(t('check.loss'))}</dt><dd>${escape(value(network.loss, 'check.percent'))}</dd>
        <dt>${escape(t('check.jitter'))}</dt><dd>${escape(value(network.jitter, 'check.ms'))}</dd></dl>`;
  }
  const mic = check.mic === 'denied' ? 'micDenied' : check.mic === 'none' ? 'noMic' : null;
  return `
    <section class="join check" data-key="check">
      <h1>${escape(t('check.title'))}</h1>
      ${languagePicker()}
      <label>${escape(t('sound.micLevel'))} <meter data-meter="mic" min="0" max="1" low="0.05" high="0.8" value="0"></meter></label>
      ${mic ? `<p class="hint">${escape(t(mic))}</p>` : ''}
      <h2>${escape(t('check.echo'))}</h2>
      <p class="hint">${escape(t(check.echo === 'running' ? 'check.echoRunning' : 'check.echoExplain'))}</p>
      ${check.echo === 'running'
    ? `<button data-action="echoStop">${escape(t('check.echoStop'))}</button>`
    : `<button data-action="echoStart" class="primary" ${ready && check.mic === 'ok' && check.echo === 'idle' && network !== 'running' ? '' : 'disabled'}>${escape(t('check.echoStart'))}</button>`}
      <h2>${escape(t('check.network'))}</h2>
      <p class="hint">${escape(t('check.networkExplain'))}</p>
      <button data-action="networkCheck" ${ready && network !== 'running' ? '' : 'disabled'}>${escape(t('check.networkStart'))}</button>
      ${figures}
      <p class="error" role="alert">${escape(check.error)}</p>
      <button data-action="checkBack">${escape(t('back'))}</button>
    </section>`;
}

function endedPage() {
  const [key, values = {}] = state.ended || ['ended'];
  const shown = key === 'kickedUntil' ? { until: new Date(values.until).toLocaleString(language) } : values;
  return `<div class="ended" data-key="ended"><h1>${escape(t('title'))}</h1><p role="alert">${escape(t(key, shown))}</p>
    <button class="primary" data-action="rejoin">${escape(t('joinAgain'))}</button>
    <button data-action="otherRoom">${escape(t('otherRoom'))}</button></div>`;
}

function roleMark(user) {
  const role = state.members.get(user)?.role || (user === state.room.owner ? 'owner' : 'member');
  if (role === 'owner') return `<span class="mark owner">${escape(t('owner'))}</span>`;
  if (role === 'admin') return `<span class="mark admin">${escape(t('admin'))}</span>`;
  return '';
}

function seatItem(seat) {
  const level = seat.user ? state.levels.get(seat.user) || 0 : 0;
  const mine = seat.user && seat.user === state.me.id;
  const classes = ['seat', seat.state, level > 5 ? 'speaking' : '', mine ? 'mine' : ''].filter(Boolean).join(' ');
  const label = seat.user ? nameOf(state, seat.user) : t(seat.state === 'locked' ? 'locked' : 'empty');
  const marks = [
    seat.muted ? `<span class="icon" title="${escape(t('mutedByHost'))}">${icon('speakerOff')}</span>` : '',
    seat.user && !seat.micOn && !seat.muted ? `<span class="icon" title="${escape(t('micOff'))}">${icon('micOff')}</span>` : '',
    seat.state === 'locked' ? `<span class="icon" title="${escape(t('locked'))}">${icon('lock')}</span>` : '',
  ].join('');
  let menu = '';
  if (page.menu?.seat === seat.index && isModerator(state)) {
    menu = `<div class="menu" role="menu">
      ${seat.state === 'empty' ? `<button data-action="sit" data-value="${seat.index}" class="primary">${escape(t(mySeat(state) ? 'moveHere' : 'takeSeat'))}</button>` : ''}
      <button data-action="lock" data-value="${seat.index}">${escape(t(seat.state === 'locked' ? 'unlock' : 'lock'))}</button>
      <button data-action="mute" data-value="${seat.index}">${escape(t(seat.muted ? 'unmute' : 'mute'))}</button>
      ${seat.user ? `<button data-action="kickSeat" data-value="${seat.index}">${escape(t('kickFromSeat'))}</button>` : ''}</div>`;
  }
  return `<li class="${classes}" data-key="seat-${seat.index}" data-seat="${seat.index}" data-user="${escape(seat.user || '')}" style="--level:${level}">
    <button class="avatar" data-action="seat" data-value="${seat.index}" aria-label="${escape(t('seat', { n: seat.index + 1 }))}">${escape(seat.user ? Array.from(label)[0] : seat.index + 1)}</button>
    <span class="name"><bdi>${escape(label)}</bdi></span>${seat.user ? roleMark(seat.user) : ''}${marks}${menu}${emojiHTML(seat.index)}</li>`;
}

function controls() {
  const seat = mySeat(state);
  const buttons = [];
  if (seat) {
    if (seat.muted && isModerator(state)) {
      // Muted before this member could moderate (by the previous host, say): its own to undo.
      buttons.push(`<button data-action="mute" data-value="${seat.index}" class="off unmute-mine">${icon('speakerOff')}${escape(t('unmuteMine'))}</button>`);
    } else if (seat.muted) {
      buttons.push(`<button data-action="mic" class="off" disabled>${icon('speakerOff')}${escape(t('mutedByHost'))}</button>`);
    } else {
      buttons.push(`<button data-action="mic" class="${seat.micOn ? 'on' : 'off'}" aria-pressed="${seat.micOn}">${icon(seat.micOn ? 'mic' : 'micOff')}${escape(t(seat.micOn ? 'micOn' : 'micOff'))}</button>`);
    }
    buttons.push(`<button data-action="leaveSeat">${escape(t('leaveSeat'))}</button>`);
    if (!state.room.emojiOff || isModerator(state)) {
      buttons.push(`<button data-action="emojiPicker" aria-expanded="${page.picker ? 'true' : 'false'}">${escape(t('emoji'))}</button>`);
    }
    if (page.picker) {
      const items = page.picker.items.map((entry) => `<button data-action="emoji" data-value="${escape(`${entry.pack}:${entry.item}`)}" title="${escape(entry.label)}">${
        entry.image ? `<img src="${escape(entry.image)}" alt="${escape(entry.label)}">` : escape(entry.label)}</button>`).join('');
      buttons.push(`<div class="picker" role="menu">${items || escape(t('emojiNone'))}</div>`);
    }
  } else if (state.request) {
    buttons.push(`<span class="pending">${escape(t('requestPending'))}</span><button data-action="cancel">${escape(t('cancelRequest'))}</button>`);
  } else {
    const ask = state.room.mode === 'request' && !isModerator(state);
    buttons.push(`<button data-action="take" class="primary">${escape(t(ask ? 'askToSpeak' : 'takeSeat'))}</button>`);
  }
  if (page.mic === 'none') buttons.push(`<span class="hint">${escape(t('noMic'))}</span>`);
  if (page.mic === 'denied') buttons.push(`<span class="hint">${escape(t('micDenied'))}</span>`);
  return `<div class="controls">${buttons.join('')}</div>`;
}

function requestList() {
  if (!isModerator(state) || state.requests.length === 0) return '';
  return `<section class="requests"><h2>${escape(t('requests'))}</h2><ul>${state.requests.map((request) => `
    <li data-key="request-${escape(request.id)}" data-request="${escape(request.id)}"><bdi>${escape(nameOf(state, request.user))}</bdi>
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

function messages() {
  let lastDay = null;
  return state.chat.map((message) => {
    const day = dayLabel(message.ts);
    const separator = day !== lastDay ? `<li class="day" data-key="day-${escape(day)}">${escape(day)}</li>` : '';
    lastDay = day;
    const time = new Date(message.ts).toLocaleTimeString(language, { hour: '2-digit', minute: '2-digit' });
    const system = message.from.id === 'system';
    const sender = system ? `<b class="system">${escape(t('system'))}</b>` : `<b><bdi>${escape(message.from.name)}</bdi></b>`;
    const classes = ['message', message.from.id === state.me.id ? 'mine' : '', system ? 'from-system' : ''].filter(Boolean).join(' ');
    return `${separator}<li class="${classes}" data-key="m-${message.msgId}">${sender}
      <bdi>${escape(message.text ?? '')}</bdi><time>${escape(time)}</time></li>`;
  }).join('');
}

function memberList() {
  const owner = state.role === 'owner';
  return [...state.members.values()].map((member) => {
    const mine = member.id === state.me.id;
    let menu = '';
    if (page.menu?.user === member.id && isModerator(state) && !mine) {
      const items = [];
      if (!seatOf(member.id)) items.push(['invite', 'invite']);
      if (owner) items.push(['admin', member.role === 'admin' ? 'removeAdmin' : 'makeAdmin'], ['transfer', 'transfer']);
      if (member.role !== 'owner' && (owner || member.role === 'member')) items.push(['kick', 'kick']);
      menu = `<div class="menu" role="menu">${items.map(([action, label]) => `<button data-action="${action}" data-value="${escape(member.id)}">${escape(t(label))}</button>`).join('')}</div>`;
    }
    return `<li data-key="member-${escape(member.id)}" data-member="${escape(member.id)}"><button class="who" data-action="member" data-value="${escape(member.id)}" title="${escape(member.id)}">
      <bdi>${escape(member.name)}</bdi>${mine ? ` (${escape(t('you'))})` : ''}</button>${roleMark(member.id)}${menu}</li>`;
  }).join('');
}

// The sound tab: the microphone's level, the browser's clean-up, a voice effect, music from a
// file, and seats placed around the listener.
function soundPanel() {
  const sound = page.sound;
  return `
    <div class="sound">
      <label>${escape(t('sound.micLevel'))} <meter data-meter="mic" min="0" max="1" low="0.05" high="0.8" value="0"></meter></label>
      <label><input type="checkbox" name="processing" ${sound.processing ? 'checked' : ''}> ${escape(t('sound.processing'))}</label>
      <label>${escape(t('sound.effect'))} <select name="effect">${Object.keys(effects)
        .filter((name) => !effects[name]?.pitch || sound.pitch)
        .map((name) => `<option value="${name}" ${name === sound.effect ? 'selected' : ''}>${escape(t(`sound.effect.${name}`))}</option>`).join('')}</select></label>
      ${sound.pitch === false ? `<p class="hint">${escape(t('sound.noPitch'))}</p>` : ''}
      <label>${escape(t('sound.music'))} <input type="file" name="music" accept="audio/*"></label>
      ${sound.music ? `<p><bdi>${escape(sound.music)}</bdi>
        ${sound.musicPlaying ? `<button data-action="pauseMusic">${escape(t('sound.pause'))}</button>` : `<button data-action="playMusic" class="primary">${escape(t('sound.play'))}</button>`}
        <button data-action="stopMusic">${escape(t('sound.stop'))}</button></p>
      <label>${escape(t('sound.musicSend'))} <input type="range" name="musicSend" min="0" max="200" value="${sound.send}"></label>
      <label>${escape(t('sound.musicLocal'))} <input type="range" name="musicLocal" min="0" max="200" value="${sound.local}"></label>` : ''}
      <label><input type="checkbox" name="spatial" ${sound.spatial ? 'checked' : ''}> ${escape(t('sound.spatial'))}</label>
    </div>`;
}

function roomPage() {
  const banners = [];
  if (page.banner === 'reconnecting') banners.push(t('reconnecting'));
  if (state.quality === 'poor') banners.push(t('poorNetwork'));
  // While the connection is down, voice is too: "Reconnecting…" says both.
  if (page.mediaState === 'failed' && page.banner !== 'reconnecting') banners.push(t('mediaFailed'));
  const you = state.role === 'owner' ? 'youAreHost' : state.role === 'admin' ? 'youAreAdmin' : null;
  const muted = state.chatMuted || (state.room.chatMutedAll && !isModerator(state));
  return `
    <header data-key="header">
      <h1><bdi>${escape(state.room.title || state.room.id)}</bdi></h1>
      <span class="count">${escape(t('memberCount', { n: state.room.memberCount }))}</span>
      <span class="mode">${escape(t(`modeLabel.${state.room.mode}`))}</span>
      ${you ? `<span class="mark owner you">${escape(t(you))}</span>` : ''}
      ${languagePicker()}
      ${state.role === 'owner' ? `<button data-action="end" class="danger">${escape(t('endRoom'))}</button>` : ''}
      <button data-action="leave">${escape(t('leaveRoom'))}</button>
    </header>
    <div class="banners" data-key="banners">${banners.map((text) => `<div class="banner" role="status">${escape(text)}</div>`).join('')}
    ${state.invite ? `<div class="banner invite" role="alertdialog">${escape(t('invited', { name: nameOf(state, state.invite.from) }))}
      <button data-action="inviteReply" data-value="yes" class="primary">${escape(t('yes'))}</button><button data-action="inviteReply" data-value="no">${escape(t('no'))}</button></div>` : ''}</div>
    <main data-key="main">
      <section class="stage">
        ${state.room.announcement ? `<p class="announcement"><bdi>${escape(state.room.announcement)}</bdi></p>` : ''}
        <ol class="seats">${state.seats.map(seatItem).join('')}</ol>
        ${controls()}
        ${requestList()}
      </section>
      <section class="side">
        <nav class="tabs"><button data-action="tab" data-value="chat" class="${page.tab === 'chat' ? 'active' : ''}">${escape(t('chat'))}</button>
          <button data-action="tab" data-value="members" class="${page.tab === 'members' ? 'active' : ''}">${escape(t('members'))} (${state.room.memberCount})</button>
          <button data-action="tab" data-value="sound" class="${page.tab === 'sound' ? 'active' : ''}">${escape(t('sound'))}</button></nav>
        <div class="panel" data-key="chat" ${page.tab === 'chat' ? '' : 'hidden'}>
          <ul class="messages" aria-live="polite">${messages()}</ul>
          <form data-form="chat" class="compose"><input name="text" maxlength="500" autocomplete="off" placeholder="${escape(t(muted ? 'chatMuted' : 'typeMessage'))}" ${muted ? 'disabled' : ''}>
            <button type="submit" ${muted ? 'disabled' : ''}>${escape(t('send'))}</button></form>
        </div>
        <div class="panel" data-key="members" ${page.tab === 'members' ? '' : 'hidden'}><ul class="members">${memberList()}</ul>${leadersHTML()}</div>
        <div class="panel" data-key="sound" ${page.tab === 'sound' ? '' : 'hidden'}>${soundPanel()}</div>
      </section>
    </main>
    <div class="notices" role="status" data-key="notices">${page.notices.map((entry) => `<p data-key="${escape(entry.id)}">${escape(entry.key === 'plain' ? entry.values.text : t(entry.key, entry.values))}</p>`).join('')}</div>
    ${page.confirm ? `<div class="dialog" role="alertdialog" data-key="dialog"><div class="box"><p>${escape(t(...page.confirm.text))}</p>
      <button class="danger" data-action="confirmYes">${escape(t('confirm.yes'))}</button><button data-action="confirmNo">${escape(t('cancel'))}</button></div></div>` : ''}`;
}

let drawing = false;
function render() {
  if (drawing) return;
  drawing = true;
  requestAnimationFrame(() => {
    drawing = false;
    draw();
  });
}

function draw() {
  page.draws += 1;
  if (page.step === 'loading') return morph(app, '<p class="loading">…</p>');
  if (page.step === 'ended') return morph(app, endedPage());
  if (page.step === 'precall') return morph(app, checkPage());
  if (page.step !== 'room' || !state.room) return morph(app, joinPage());
  const list = app.querySelector('.messages');
  const atBottom = !list || list.scrollTop + list.clientHeight >= list.scrollHeight - 8;
  morph(app, roomPage());
  drawAnimations();
  const messagesNow = app.querySelector('.messages');
  if (messagesNow && atBottom) messagesNow.scrollTop = messagesNow.scrollHeight;
}

// Hooks for tests and for debugging from the console.
window.majlis = {
  state, page, level: (seat) => media?.level(seat) ?? 0,
  packetsReceived: async (seat) => (await media?.packetsReceived(seat)) ?? 0, media: () => media, signal: () => signal,
  echoPackets: async () => (await precall?.check?.echoPackets()) ?? 0, echoLevel: () => precall?.check?.level(true) ?? 0,
  t: (key, values) => t(key, values), missingKeys,
};

setLanguage(language);
// A token posted by the page that embeds this one: go in with it.
identity.onGiven = () => {
  if (page.step === 'join') join(document.createElement('form'));
};
identity.load().then(() => {
  page.step = 'join';
  // Back in a room this tab was in (a reload), or signed in by the app with a room to go to.
  if (identity.shouldEnter(roomId)) join(document.createElement('form'));
  else render();
});
