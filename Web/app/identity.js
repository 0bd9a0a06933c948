// Who the page signs in as, and where its token comes from (docs/web.md):
// - development mode (`majlis serve` without --keys): the server mints tokens; the page keeps the
//   user id it was given (localStorage), so a reload, or Join again, is the same member, with the
//   same seat and role, and a ban stays with this browser;
// - otherwise the app that runs the server hands the page a token: in the address's fragment
//   (`#token=...`, never sent to any server), by `postMessage({type: 'majlis:token', token})` from
//   the page that embeds it (one of `--allow-origin`), from the app's own token URL
//   (`majlis serve --token-url`, called with the app's cookies), or pasted.
// A token given is kept for this tab (sessionStorage), so a reload keeps working.

import { SignalError } from './signal.js';

const identityKey = 'majlis.identity';
const tokenKey = 'majlis.token';
const roomKey = 'majlis.inRoom';

export class Identity {
  constructor() {
    const saved = JSON.parse(localStorage.getItem(identityKey) || 'null') || {};
    this.user = saved.user || null;
    this.name = saved.name || localStorage.getItem('majlis.name') || '';
    this.given = sessionStorage.getItem(tokenKey);
    this.config = { development: false, tokenUrl: null, embedOrigins: [] };
    this.onGiven = null;
  }

  async load() {
    const answer = await fetch('/v1/web/config').catch(() => null);
    if (answer?.ok) this.config = { ...this.config, ...(await answer.json().catch(() => ({}))) };
    // From the fragment only: a token in the query has been sent to the server, and sits in
    // request lines, proxies' logs and the Referer of whatever the page loads. One there is not
    // used (a link that puts it there is a mistake to fix), but it is taken out of the address.
    const fragment = new URLSearchParams(location.hash.slice(1));
    const query = new URLSearchParams(location.search);
    const handed = fragment.get('token');
    if (query.has('token')) console.warn('majlis: a token in the query (?token=) is not used; put it in the fragment (#token=)');
    if (handed || query.has('token')) {
      if (handed) {
        this.useToken(handed);
        this.handed = true;
      }
      // Out of the address bar (and of history): the token is a secret.
      query.delete('token');
      history.replaceState(null, '', `${location.pathname}${query.toString() ? `?${query}` : ''}`);
    }
    window.addEventListener('message', (event) => {
      const allowed = this.config.embedOrigins || [];
      if (!(allowed.includes('*') || allowed.includes(event.origin)) || event.data?.type !== 'majlis:token') return;
      if (typeof event.data.token !== 'string' || !event.data.token) return;
      this.useToken(event.data.token);
      this.handed = true;
      this.onGiven?.();
    });
    if (window.parent !== window) window.parent.postMessage({ type: 'majlis:ready' }, '*');
  }

  // How the join form signs in: 'development' (a name), 'signedIn' (a token is at hand or the
  // app's token URL gives one), or 'token' (paste one).
  signInKind() {
    if (this.given || this.config.tokenUrl) return 'signedIn';
    return this.config.development ? 'development' : 'token';
  }

  setName(name) {
    if (!name) return;
    this.name = name;
    this.save();
  }

  useToken(token) {
    this.given = token;
    sessionStorage.setItem(tokenKey, token);
  }

  // A token to say hello with.
  async token() {
    if (this.given) return this.given;
    if (this.config.tokenUrl) {
      const answer = await fetch(this.config.tokenUrl, { credentials: 'include', headers: { Accept: 'application/json' } }).catch(() => null);
      const body = answer?.ok ? await answer.json().catch(() => null) : null;
      if (!body?.token) throw new SignalError('sign_in_failed', `the app's token URL answered ${answer?.status ?? 'nothing'}`);
      return body.token;
    }
    if (!this.config.development) throw new SignalError('token_needed', 'a token is needed');
    const query = new URLSearchParams({ name: this.name });
    if (this.user) query.set('user', this.user);
    const answer = await fetch(`/v1/dev/token?${query}`);
    if (!answer.ok) throw new SignalError('token_needed', (await answer.json().catch(() => ({}))).error || 'a token is needed');
    const minted = await answer.json();
    this.user = minted.user;
    this.save();
    return minted.token;
  }

  // The token runs out soon (`token.expiring`): renews `signal`'s session with a new one where
  // the page can get one (development mode, the app's token URL); a token that was handed over
  // is renewed by reopening the app. A failure is quiet: the session ends when the old token
  // does, and the page says so then.
  async renew(signal) {
    if (this.given) return;
    try {
      const token = await this.token();
      await signal.request('session.renew', { token });
      signal.token = token;
    } catch {
      // As above.
    }
  }

  // The user the server says we are.
  remember(user) {
    this.user = user.id;
    if (user.name) this.name = user.name;
    this.save();
  }

  save() {
    localStorage.setItem(identityKey, JSON.stringify({ user: this.user, name: this.name }));
  }

  enteredRoom(room) {
    sessionStorage.setItem(roomKey, room);
  }

  leftRoom() {
    sessionStorage.removeItem(roomKey);
  }

  // Whether to go into `room` at once: this tab was in it (a reload), or the app handed a token.
  shouldEnter(room) {
    if (this.handed) return true;
    if (sessionStorage.getItem(roomKey) !== room) return false;
    return Boolean(this.given || this.config.tokenUrl || (this.config.development && this.user));
  }
}
