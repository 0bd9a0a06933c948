// The page's changes to its own offers (Web/app/sdp.js) under Node's own test runner.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { receiveStereo } from '../../Web/app/sdp.js';

const offer = [
  'v=0',
  'm=audio 9 UDP/TLS/RTP/SAVPF 111 63 9',
  'a=mid:0',
  'a=rtpmap:111 opus/48000/2',
  'a=rtcp-fb:111 transport-cc',
  'a=fmtp:111 minptime=10;useinbandfec=1',
  'a=rtpmap:63 red/48000/2',
  'a=fmtp:63 111/111',
  'a=rtpmap:9 G722/8000',
  'm=audio 9 UDP/TLS/RTP/SAVPF 111',
  'a=mid:1',
  'a=rtpmap:111 opus/48000/2',
  'a=fmtp:111 minptime=10;stereo=0;useinbandfec=1',
  '',
].join('\r\n');

test('every Opus format asks for stereo; the other formats and lines stay as they were', () => {
  const lines = receiveStereo(offer).split('\r\n');
  assert.deepEqual(lines.filter((line) => line.startsWith('a=fmtp:')), [
    'a=fmtp:111 minptime=10;useinbandfec=1;stereo=1',
    'a=fmtp:63 111/111',
    'a=fmtp:111 minptime=10;useinbandfec=1;stereo=1',
  ]);
  assert.equal(lines.length, offer.split('\r\n').length);
  assert.equal(lines.at(-1), '');
  assert.equal(receiveStereo(receiveStereo(offer)), receiveStereo(offer));
});

test('an Opus format without parameters gets them after its rtpmap', () => {
  const sdp = 'm=audio 9 UDP/TLS/RTP/SAVPF 96\na=rtpmap:96 OPUS/48000/2\na=rtcp-fb:96 nack\n';
  assert.equal(receiveStereo(sdp), 'm=audio 9 UDP/TLS/RTP/SAVPF 96\na=rtpmap:96 OPUS/48000/2\na=fmtp:96 stereo=1\na=rtcp-fb:96 nack\n');
});
