// Resource packs in the page (Web/app/packs.js): a zip made by Python's zipfile read entry by
// entry (stored and deflated), checked by its SHA-256, and shown as images, or as its
// name for a Lottie file that is no animation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { zipEntries, entryBytes, sha256, Packs } from '../../Web/app/packs.js';

// manifest.json (deflated), wave/1.png (300 bytes of 1, deflated), wave/2.png (2, 3 fifty times,
// stored), heart.json (stored).
const archive = Uint8Array.from(atob('UEsDBBQAAAAIAAAAIQAJTCn8fQAAAMMAAAANAAAAbWFuaWZlc3QuanNvbk2MMQ7CMAxF7+I5KgIx5Q6coOpgCRdcsFOlFgxR7o4TqMTm9/T8C/AVIggrQ4AHayOStDRUFNogFiB1e2lNDcBG4nYs39c3vsjbOWVBc55z/wr7EceeHI7DqjfXHU4dJo9WL841/MbuhNn+157JjNs+KrvhpHs1LJtDneoHUEsDBBQAAAAIAAAAIQB3Z87fBwAAACwBAAAKAAAAd2F2ZS8xLnBuZ2NkHAXEAgBQSwMEFAAAAAAAAAAhAOcYeo1kAAAAZAAAAAoAAAB3YXZlLzIucG5nAgMCAwIDAgMCAwIDAgMCAwIDAgMCAwIDAgMCAwIDAgMCAwIDAgMCAwIDAgMCAwIDAgMCAwIDAgMCAwIDAgMCAwIDAgMCAwIDAgMCAwIDAgMCAwIDAgMCAwIDAgMCAwIDAgMCA1BLAwQUAAAAAAAAACEA6cZ8oAkAAAAJAAAACgAAAGhlYXJ0Lmpzb257InYiOiI1In1QSwECFAMUAAAACAAAACEACUwp/H0AAADDAAAADQAAAAAAAAAAAAAAgAEAAAAAbWFuaWZlc3QuanNvblBLAQIUAxQAAAAIAAAAIQB3Z87fBwAAACwBAAAKAAAAAAAAAAAAAACAAagAAAB3YXZlLzEucG5nUEsBAhQDFAAAAAAAAAAhAOcYeo1kAAAAZAAAAAoAAAAAAAAAAAAAAIAB1wAAAHdhdmUvMi5wbmdQSwECFAMUAAAAAAAAACEA6cZ8oAkAAAAJAAAACgAAAAAAAAAAAAAAgAFjAQAAaGVhcnQuanNvblBLBQYAAAAABAAEAOMAAACUAQAAAAA='), (c) => c.charCodeAt(0));
const name = '4e18496fdeed42d417d201418489eb8981c94d9df17356ab62528a25b898d932';

test('entries are read, stored or deflated, and the archive hashes to its name', async () => {
  const entries = zipEntries(archive);
  assert.deepEqual(entries.map((entry) => entry.name), ['manifest.json', 'wave/1.png', 'wave/2.png', 'heart.json']);
  assert.deepEqual([...await entryBytes(archive, entries[1])], Array(300).fill(1));
  assert.deepEqual([...await entryBytes(archive, entries[2])], Array(50).fill([2, 3]).flat());
  assert.equal(JSON.parse(new TextDecoder().decode(await entryBytes(archive, entries[0]))).id, 'mini');
  assert.equal(await sha256(archive), name);
});

test('damaged or hostile archives are refused', () => {
  assert.throws(() => zipEntries(new TextEncoder().encode('not a zip at all, not at all')), /not a zip archive/);
  const cut = archive.slice(0, archive.length - 30);
  assert.throws(() => zipEntries(cut));
});

test('a pack is fetched, checked and shown; one that does not hash to its name is not', async () => {
  const urls = [];
  globalThis.fetch = async (url) => {
    urls.push(url);
    if (url.endsWith(name)) return new Response(archive);
    const damaged = archive.slice();
    damaged[200] ^= 0xff;
    return new Response(damaged);
  };
  const packs = new Packs();
  const wave = await packs.show(name, 'wave');
  assert.equal(wave.images.length, 2);
  assert.equal(wave.fps, 4);
  assert.equal(wave.duration, 500);
  assert.ok(wave.images.every((url) => url.startsWith('blob:')));
  // heart.json is a JSON object but no animation: the item's name shows, and why.
  assert.deepEqual(await packs.show(name, 'heart'), {
    item: { id: 'heart', format: 'lottie', animation: 'heart.json' }, text: 'heart', duration: 2500, reason: 'heart.json: a Lottie animation needs its size (w, h)',
  });
  assert.equal(urls.length, 1, 'fetched once');
  const other = 'f'.repeat(64);
  await assert.rejects(packs.show(other, 'wave'), /came damaged/);
  await assert.rejects(packs.show(other, 'wave'), /came damaged/);
  assert.equal(urls.length, 3, 'a damaged pack is fetched again next time');
  await assert.rejects(packs.show(name, 'dance'), /no item dance/);
});
