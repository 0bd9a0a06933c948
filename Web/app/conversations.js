// The conversations page's state (docs/protocol.md section 17), without a page or a connection:
// the user's conversations and their messages without gaps, what it sent that the server has not
// stored, who types, who has read what. Each function changes the state and says what to ask the
// server next; messages.js draws it and asks. Tested with `node --test Tests/Web`.

// How long a `msg.typing` shows (the server's 6 s), on this page's clock.
export const typingFor = 6000;

export function initialConversations() {
  return {
    me: null,
    conversations: new Map(), // id -> ConversationSummary
    messages: new Map(), // id -> messages, oldest first, without gaps
    pending: [], // {clientMsgId, conversation?, to?, draft, status: 'sending'|'failed'|'held'|'rejected', error?}
    typing: new Map(), // id -> Map(user -> until, the page's ms)
    reads: new Map(), // id -> Map(user -> readSeq), the other members'
    members: new Map(), // id -> [user], from conv.get
    presence: new Map(), // user -> {user, online, lastSeen?, hidden?}: contacts, from presence.get and presence.changed
    synced: false,
  };
}

// The newest seq held for `id` (0: none).
export function lastSeq(state, id) {
  const list = state.messages.get(id);
  return list?.length ? list[list.length - 1].seq : 0;
}

// The conversations as a list shows them: pinned first, then the newest first.
export function ordered(state) {
  return [...state.conversations.values()].sort((a, b) => {
    if (a.pinned !== b.pinned) return a.pinned ? -1 : 1;
    if (a.updatedAt !== b.updatedAt) return b.updatedAt - a.updatedAt;
    return a.id < b.id ? -1 : 1;
  });
}

// Messages not read, in conversations not muted.
export function totalUnread(state) {
  let total = 0;
  for (const summary of state.conversations.values()) if (!summary.muted) total += summary.unread;
  return total;
}

// What a list shows for a conversation: a group's title, else the other user.
export function titleOf(summary) {
  return summary.kind === 'group' ? summary.title || summary.id : summary.peer || summary.id;
}

// A page of `conv.list`.
export function applyList(state, page) {
  for (const summary of page.conversations) state.conversations.set(summary.id, summary);
}

// One conversation as `conv.get` gives it: its summary, its members' read marks.
export function applyDetails(state, details) {
  const summary = details.conversation;
  state.conversations.set(summary.id, summary);
  const reads = new Map();
  for (const member of details.members) if (member.user !== state.me) reads.set(member.user, member.readSeq);
  state.reads.set(summary.id, reads);
  state.members.set(summary.id, details.members.map((member) => member.user));
}

// Messages of `id` (a `msg.sync` page, or one message): put in order, once each; the summary
// follows the newest; the user's own messages are read, and pending no more.
export function addMessages(state, id, messages) {
  const list = state.messages.get(id) ?? [];
  for (const message of messages) {
    const at = list.findIndex((held) => held.seq >= message.seq);
    if (at === -1) list.push(message);
    else if (list[at].seq === message.seq) list[at] = message;
    else list.splice(at, 0, message);
    const summary = state.conversations.get(id);
    if (summary && message.seq >= summary.lastSeq) {
      summary.lastSeq = message.seq;
      summary.lastMessage = message;
      summary.updatedAt = Math.max(summary.updatedAt, message.ts);
    }
    if (message.from.id === state.me) {
      if (summary) summary.readSeq = Math.max(summary.readSeq, message.seq);
      state.pending = state.pending.filter((pending) => pending.clientMsgId !== message.clientMsgId);
    }
    if (summary) summary.unread = Math.max(0, summary.lastSeq - summary.readSeq);
  }
  state.messages.set(id, list);
}

// The user has read `id` up to `seq`.
export function markRead(state, id, seq) {
  const summary = state.conversations.get(id);
  if (!summary) return;
  summary.readSeq = Math.max(summary.readSeq, seq);
  summary.unread = Math.max(0, summary.lastSeq - summary.readSeq);
}

// A message the user writes: pending at once, under its client id.
export function addPending(state, pending) {
  state.pending.push({ ...pending, status: 'sending' });
}

// What the server answered a send: stored (`{conversation, seq}`: the message is added), held
// for review (`{held}`), or refused (an error).
export function settlePending(state, clientMsgId, answer, error = null) {
  const pending = state.pending.find((entry) => entry.clientMsgId === clientMsgId);
  if (!pending) return;
  if (error) {
    pending.status = 'failed';
    pending.error = error;
  } else if (answer.held) {
    pending.status = 'held';
    pending.conversation = answer.conversation;
  } else {
    pending.conversation = answer.conversation;
  }
}

// One messaging event (a frame without `room`): returns what to ask the server next,
// `{sync: id}` (a gap, or a conversation not held yet: `{refresh: true}`), `{details: id}`, or null.
export function applyEvent(state, frame, now) {
  const data = frame.data;
  switch (frame.ev) {
    case 'msg.new': {
      if (!state.conversations.has(data.conversation)) return { refresh: true };
      const gap = data.seq > lastSeq(state, data.conversation) + 1 && lastSeq(state, data.conversation) > 0;
      addMessages(state, data.conversation, [data]);
      state.typing.get(data.conversation)?.delete(data.from.id);
      return gap ? { sync: data.conversation } : null;
    }
    case 'msg.updated': {
      const list = state.messages.get(data.conversation);
      const at = list?.findIndex((held) => held.seq === data.seq) ?? -1;
      if (at >= 0) list[at] = data;
      const summary = state.conversations.get(data.conversation);
      if (summary?.lastSeq === data.seq) summary.lastMessage = data;
      return null;
    }
    case 'msg.read':
      if (data.user === state.me) {
        markRead(state, data.conversation, data.seq);
      } else {
        const reads = state.reads.get(data.conversation) ?? new Map();
        reads.set(data.user, Math.max(reads.get(data.user) ?? 0, data.seq));
        state.reads.set(data.conversation, reads);
      }
      return null;
    case 'msg.typing': {
      const typing = state.typing.get(data.conversation) ?? new Map();
      typing.set(data.user, now + typingFor);
      state.typing.set(data.conversation, typing);
      return null;
    }
    case 'msg.rejected': {
      const pending = state.pending.find((entry) => entry.clientMsgId === data.clientMsgId);
      if (pending) {
        pending.status = 'rejected';
        pending.error = data.reason;
      }
      return null;
    }
    case 'conv.updated': {
      const summary = state.conversations.get(data.conversation);
      if (!summary) return { refresh: true };
      if (data.muted !== undefined) summary.muted = data.muted;
      if (data.pinned !== undefined) summary.pinned = data.pinned;
      return { details: data.conversation };
    }
    case 'presence.changed':
      applyPresence(state, [data]);
      return null;
    case 'conv.removed':
      state.conversations.delete(data.conversation);
      state.messages.delete(data.conversation);
      state.typing.delete(data.conversation);
      state.reads.delete(data.conversation);
      return null;
    default:
      return null;
  }
}

// The peers of the newest direct conversations (100 at most: what one `presence.get` asks).
export function directPeers(state) {
  return ordered(state).filter((summary) => summary.kind === 'direct' && summary.peer).slice(0, 100).map((summary) => summary.peer);
}

// Contacts' presence as `presence.get` or `presence.changed` tells it.
export function applyPresence(state, entries) {
  for (const entry of entries ?? []) if (typeof entry?.user === 'string') state.presence.set(entry.user, entry);
}

// How a contact shows: 'online', 'offline' (with `lastSeen`, Unix ms, when known) or null
// (not a contact, or hidden).
export function presenceOf(state, user) {
  const entry = state.presence.get(user);
  if (!entry || entry.hidden) return null;
  return entry.online ? { status: 'online' } : { status: 'offline', lastSeen: entry.lastSeen ?? null };
}

// Who types in `id` at `now`.
export function typingIn(state, id, now) {
  return [...(state.typing.get(id) ?? new Map())].filter(([, until]) => until > now).map(([user]) => user).sort();
}

// How many of the other members have read message `seq` of `id`.
export function readersOf(state, id, seq) {
  let readers = 0;
  for (const readSeq of (state.reads.get(id) ?? new Map()).values()) if (readSeq >= seq) readers += 1;
  return readers;
}
