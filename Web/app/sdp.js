// Changes the page makes to its own offers (docs/web.md, "Stereo").

// The offer with `stereo=1` on every Opus format: the page asks to receive stereo, so a
// speaker's stereo music plays in stereo (RFC 7587 section 6.1; a browser decodes mono without
// it). What the page sends stays as the server's answer says: mono, unless it asks for stereo.
export function receiveStereo(sdp) {
  const eol = sdp.includes('\r\n') ? '\r\n' : '\n';
  const lines = sdp.split(eol);
  const opus = new Set();
  for (const line of lines) {
    const match = /^a=rtpmap:(\d+) opus\/48000\/2$/i.exec(line);
    if (match) opus.add(match[1]);
  }
  const withParameters = new Set();
  const changed = lines.map((line) => {
    const match = /^a=fmtp:(\d+) (.*)$/.exec(line);
    if (!match || !opus.has(match[1])) return line;
    withParameters.add(match[1]);
    const parameters = match[2].split(';').filter((parameter) => !/^\s*stereo=/.test(parameter));
    return `a=fmtp:${match[1]} ${[...parameters, 'stereo=1'].join(';')}`;
  });
  // An Opus format without parameters gets a line of its own, after its rtpmap.
  return changed
    .flatMap((line) => {
      const match = /^a=rtpmap:(\d+) opus\/48000\/2$/i.exec(line);
      return match && !withParameters.has(match[1]) ? [line, `a=fmtp:${match[1]} stereo=1`] : [line];
    })
    .join(eol);
}
