// The page's own log, for when the app's support asks for it (docs/protocol.md section 20): the
// newest lines (at most `capacity` bytes), each with its time, credentials taken out before a line
// is kept. `answer` uploads the lines a `log.requested` asks for and hands them over, once per
// request however often it is told.
import { upload } from './uploads.js';

const jwt = /eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g;
const named = /((?:[a-z_]*token|secret|password|api_?key)(?:=|:\s*|"\s*:\s*"))[^\s,&"]+/gi;

// `text` with access tokens and secrets replaced by [redacted].
export function redact(text) {
  return String(text).replace(jwt, '[redacted]').replace(named, '$1[redacted]');
}

export class ClientLog {
  constructor(capacity = 256 * 1024, now = () => Date.now()) {
    this.capacity = capacity;
    this.now = now;
    this.lines = []; // {at, line}
    this.bytes = 0;
    this.answered = new Set();
  }

  // Keeps one line (its own line breaks become spaces); returns it as kept.
  record(text, level = 'info') {
    const at = this.now();
    const line = `${new Date(at).toISOString()} ${level} ${redact(text).replace(/\n/g, ' ')}\n`;
    this.lines.push({ at, line });
    this.bytes += line.length;
    while (this.bytes > this.capacity && this.lines.length > 1) this.bytes -= this.lines.shift().line.length;
    return line;
  }

  // The lines of since..until (Unix ms; no until: up to now), oldest first.
  text(since, until = null) {
    return this.lines.filter(({ at }) => at >= since && (until == null || at < until)).map(({ line }) => line).join('');
  }

  // Answers `request` ({id, since, until?}): the lines go up as text/plain through `signal`'s
  // user and are handed over with `log.deliver`. Nothing when it was answered (or is being).
  async answer(request, signal) {
    if (!request?.id || this.answered.has(request.id)) return;
    this.answered.add(request.id);
    try {
      const text = this.text(request.since, request.until) || `(no log lines from ${request.since} to ${request.until ?? 'now'})\n`;
      const blob = new Blob([text], { type: 'text/plain' });
      const media = await upload({ blob, type: 'text/plain', name: 'majlis-web.log', length: blob.size, upload: null, offset: 0 }, () => signal.token);
      await signal.request('log.deliver', { id: request.id, media });
      this.record(`log ${request.id} delivered (${blob.size} bytes)`);
    } catch (error) {
      this.answered.delete(request.id); // told again (the next connection), it is tried again
      this.record(`log ${request.id} not delivered: ${error?.code ?? ''} ${error?.message ?? error}`, 'warning');
    }
  }
}
