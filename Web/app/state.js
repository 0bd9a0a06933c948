// The room as the page knows it, and how each snapshot and event changes it (docs/protocol.md
// sections 5 and 10). Pure: no page, no network, no clock of its own (`now` is passed in), so it
// runs under `node --test` as it runs in the browser. The page draws from it and carries out the
// effects it asks for.

// How long after one of our own seat ops a change to our seat is taken as ours (no notice).
export const ownChangeWindow = 5000;

export function initialState() {
  return {
    me: null, // {id, name}
    room: null, // RoomInfo
    seats: [],
    members: new Map(),
    role: 'member',
    chatMuted: false,
    request: null, // our pending request to speak
    requests: [], // pending requests (moderators only)
    chat: [],
    seq: 0,
    levels: new Map(), // user -> 0..100
    invite: null, // a pending seat.invited
    ended: null, // [key, values] of why the room is over for us
    quality: null, // 'poor' when our network is
    ownSeatChangeUntil: 0,
    ownMicChangeUntil: 0,
  };
}

// What the page must do after a change: `notices` ([key, values] to show, translated when
// shown), `resync` (the event stream has a gap: ask for a snapshot), `negotiate` (the seat count
// changed: offer media again for this many seats), `stopMedia` (the room is over for us).
function outcome() {
  return { notices: [], resync: false, negotiate: null, stopMedia: false, changed: false };
}

export function applySnapshot(state, snapshot) {
  state.room = snapshot.room;
  state.seats = snapshot.seats;
  state.members = new Map(snapshot.members.map((member) => [member.id, member]));
  state.role = snapshot.me.role;
  state.chatMuted = snapshot.me.chatMuted;
  state.request = snapshot.me.request || null;
  state.requests = snapshot.requests;
  state.seq = snapshot.seq;
  state.ended = null;
}

// Messages newest last, without duplicates (history and live messages may overlap).
export function addChat(state, messages) {
  const seen = new Set(state.chat.map((message) => message.msgId));
  for (const message of messages) {
    if (!seen.has(message.msgId)) {
      state.chat.push(message);
      seen.add(message.msgId);
    }
  }
  state.chat.sort((a, b) => a.msgId - b.msgId);
  if (state.chat.length > 500) state.chat.splice(0, state.chat.length - 500);
}

export function mySeat(state) {
  return state.seats.find((seat) => seat.user && seat.user === state.me?.id) || null;
}

export function isModerator(state) {
  return state.role === 'owner' || state.role === 'admin';
}

export function nameOf(state, user) {
  return state.members.get(user)?.name || user;
}

// Whether our microphone should send: seated, switched on, not muted by the host.
export function micLive(state) {
  const seat = mySeat(state);
  return Boolean(seat && seat.micOn && !seat.muted);
}

// Marks that we are about to change our own seat or mic (so the change is not told to us as
// someone else's doing).
export function expectOwnChange(state, kind, now) {
  if (kind === 'seat') state.ownSeatChangeUntil = now + ownChangeWindow;
  if (kind === 'mic') state.ownMicChangeUntil = now + ownChangeWindow;
}

// Applies one event frame (`{ev, room?, seq?, data}`) of room `roomId` at time `now`.
export function applyEvent(state, frame, roomId, now) {
  const out = outcome();
  if (frame.room && frame.room !== roomId) return out;
  if (!state.room) return out;
  if (frame.seq !== undefined) {
    if (frame.seq <= state.seq) return out;
    if (frame.seq !== state.seq + 1) {
      out.resync = true;
      return out;
    }
    state.seq = frame.seq;
  }
  const data = frame.data || {};
  const me = state.me?.id;
  out.changed = true;
  switch (frame.ev) {
    case 'room.updated': {
      const before = state.room;
      state.room = data.room;
      if (data.room.seatCount !== before.seatCount) {
        state.seats = Array.from({ length: data.room.seatCount }, (_, index) => state.seats[index] || { index, state: 'empty', muted: false, micOn: false });
        out.negotiate = data.room.seatCount;
      }
      if (data.room.chatMutedAll !== before.chatMutedAll && !isModerator(state)) {
        out.notices.push([data.room.chatMutedAll ? 'notice.chatOffForAll' : 'notice.chatOnForAll']);
      }
      if (data.room.owner !== before.owner && data.room.owner === me) out.notices.push(['notice.youAreOwner']);
      break;
    }
    case 'room.ended':
      state.ended = ['ended'];
      out.stopMedia = true;
      break;
    case 'member.joined':
      if (!state.members.has(data.member.id)) {
        state.room.memberCount += 1;
        out.notices.push(['joined', { name: data.member.name }]);
      }
      state.members.set(data.member.id, data.member);
      break;
    case 'member.left':
      if (state.members.has(data.user)) {
        state.room.memberCount = Math.max(1, state.room.memberCount - 1);
        // Said as it happened: removed by a moderator, gone with its connection, or left.
        const how = { kicked: 'leftKicked', timeout: 'leftTimeout' }[data.reason] || 'left';
        out.notices.push([how, { name: nameOf(state, data.user) }]);
        state.members.delete(data.user);
      }
      state.requests = state.requests.filter((request) => request.user !== data.user);
      break;
    case 'member.updated': {
      const before = state.members.get(data.member.id);
      state.members.set(data.member.id, data.member);
      if (data.member.id === me) {
        const was = state.role;
        state.role = data.member.role;
        state.chatMuted = data.member.chatMuted;
        if (was !== state.role) {
          if (state.role === 'admin' && was === 'member') out.notices.push(['notice.youAreAdmin']);
          if (state.role === 'member' && was === 'admin') out.notices.push(['notice.youAreNoLongerAdmin']);
          if (state.role === 'owner') out.notices.push(['notice.youAreOwner']);
        }
      } else if (before && before.role !== data.member.role && data.member.role === 'owner') {
        out.notices.push(['notice.newOwner', { name: data.member.name }]);
      }
      break;
    }
    case 'members.changed':
      for (const member of data.joined) state.members.set(member.id, member);
      for (const user of data.left) state.members.delete(user);
      state.room.memberCount = data.memberCount;
      break;
    case 'seat.updated':
      for (const seat of data.seats) {
        const before = state.seats[seat.index];
        state.seats[seat.index] = seat;
        if (!before || !me) continue;
        const wasMine = before.user === me;
        const isMine = seat.user === me;
        if (wasMine && !isMine && now > state.ownSeatChangeUntil && !state.seats.some((other) => other.user === me)) {
          out.notices.push([seat.state === 'locked' ? 'notice.seatLockedUnderYou' : 'notice.offSeat']);
        }
        if (wasMine && isMine) {
          if (!before.muted && seat.muted) out.notices.push(['notice.hostMuted']);
          if (before.muted && !seat.muted) out.notices.push(['notice.hostUnmuted']);
          if (before.micOn && !seat.micOn && !seat.muted && now > state.ownMicChangeUntil) out.notices.push(['notice.micTurnedOff']);
        }
        if (!wasMine && isMine && now > state.ownSeatChangeUntil) out.notices.push(['notice.seated', { n: seat.index + 1 }]);
      }
      break;
    case 'request.received':
      if (!state.requests.some((request) => request.id === data.request.id)) state.requests.push(data.request);
      break;
    case 'request.cancelled':
      state.requests = state.requests.filter((request) => request.id !== data.requestId);
      if (state.request?.id === data.requestId) {
        state.request = null;
        if (data.reason && data.reason !== 'cancelled') out.notices.push(['notice.requestWithdrawn']);
      }
      break;
    case 'request.accepted':
      state.requests = state.requests.filter((request) => request.id !== data.requestId);
      if (state.request?.id === data.requestId) {
        state.request = null;
        state.ownSeatChangeUntil = 0;
        out.notices.push(['accepted']);
      }
      break;
    case 'request.rejected':
      state.requests = state.requests.filter((request) => request.id !== data.requestId);
      if (state.request?.id === data.requestId) {
        state.request = null;
        out.notices.push(['rejected']);
      }
      break;
    case 'seat.invited':
      state.invite = data;
      break;
    case 'you.kicked':
      state.ended = data.until ? ['kickedUntil', { until: data.until }] : ['kicked'];
      out.stopMedia = true;
      break;
    case 'you.chatMuted':
      state.chatMuted = data.until !== undefined;
      out.notices.push([state.chatMuted ? 'notice.chatMuted' : 'notice.chatUnmuted']);
      break;
    case 'chat.message':
      addChat(state, [data]);
      break;
    case 'speaker.levels':
      state.levels = new Map(data.levels.map((level) => [level.user, level.level]));
      break;
    case 'network.quality':
      if (data.user === me) state.quality = [data.up, data.down].some((level) => ['poor', 'bad', 'down'].includes(level)) ? 'poor' : null;
      break;
    default:
      out.changed = false;
  }
  return out;
}

// The web app's page for `roomId` on the node of a cluster whose signaling is at `signaling`
// (ws://HOST:PORT/v1/signal, or wss://), or null when that is not such an address: a room on
// another node is joined there. `extra`: more of the page's query (lang, name), where given.
export function nodePage(signaling, roomId, extra = {}) {
  let url;
  try {
    url = new URL(String(signaling));
  } catch {
    return null;
  }
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') return null;
  const scheme = url.protocol === 'wss:' ? 'https:' : 'http:';
  const query = new URLSearchParams({ room: roomId });
  for (const [key, value] of Object.entries(extra)) if (value) query.set(key, value);
  return `${scheme}//${url.host}/?${query}`;
}

// A room id from what a person typed: as it is when it is already a valid id, else one made
// from the title (the same title always gives the same id, so others who type it meet there;
// letter case and runs of spaces do not count: "friday  salon" is "Friday Salon").
export function roomIdFor(text) {
  const trimmed = String(text || '').trim();
  if (/^[A-Za-z0-9_.@-]{1,64}$/.test(trimmed)) return { id: trimmed, title: null };
  let hash = 0x811c9dc5;
  let second = 0x01000193;
  for (const byte of new TextEncoder().encode(trimmed.normalize('NFC').toLowerCase().replace(/\s+/g, ' '))) {
    hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
    second = Math.imul(second ^ byte, 0x85ebca6b) >>> 0;
  }
  return { id: `r-${hash.toString(16).padStart(8, '0')}${second.toString(16).padStart(8, '0')}`, title: Array.from(trimmed).slice(0, 128).join('') };
}
