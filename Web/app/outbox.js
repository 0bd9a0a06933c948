// What the page is sending, kept in the browser (IndexedDB) until the server has it: a page
// reloaded or closed while a photo or voice message went up sends it when it opens again, its
// uploads going on from where the server stands (docs/protocol.md section 18) and the message
// posted once under its client id. Each message's files are written once, apart from its record,
// which changes with each piece sent. Kept per user; without IndexedDB (a private window that
// refuses it) nothing is kept and sending goes on as before. Knows nothing of the page.

const databaseName = 'majlis-outbox';

function openDatabase() {
  return new Promise((resolve) => {
    if (!globalThis.indexedDB) return resolve(null);
    const request = indexedDB.open(databaseName, 1);
    request.onupgradeneeded = () => {
      request.result.createObjectStore('pending', { keyPath: 'clientMsgId' });
      request.result.createObjectStore('files');
    };
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => resolve(null);
    request.onblocked = () => resolve(null);
  });
}

// A pending message as it is kept: where it goes and its draft, files left out.
function record(user, pending) {
  const uploads = (pending.draft.uploads ?? []).map(({ blob, ...item }) => item);
  return {
    user, clientMsgId: pending.clientMsgId, conversation: pending.conversation ?? null, to: pending.to ?? null,
    draft: { ...pending.draft, uploads },
  };
}

export class Outbox {
  constructor(user) {
    this.user = user;
    this.database = openDatabase();
  }

  // Runs `work` on the object stores in one transaction; resolves with what `work` returned
  // (a request's result once done), or undefined when nothing could be kept.
  async transaction(mode, work) {
    const database = await this.database;
    if (!database) return undefined;
    return new Promise((resolve) => {
      let request;
      try {
        const transaction = database.transaction(['pending', 'files'], mode);
        request = work(transaction.objectStore('pending'), transaction.objectStore('files'));
        transaction.oncomplete = () => resolve(request?.result);
        transaction.onerror = () => resolve(undefined);
        transaction.onabort = () => resolve(undefined);
      } catch {
        resolve(undefined);
      }
    });
  }

  // Keeps `pending` ({clientMsgId, conversation?, to?, draft}) as it is now; its files too, the
  // first time (`withFiles`).
  keep(pending, withFiles = false) {
    return this.transaction('readwrite', (records, files) => {
      if (withFiles) {
        for (const item of pending.draft.uploads ?? []) files.put(item.blob, `${pending.clientMsgId}/${item.field}`);
      }
      records.put(record(this.user, pending));
    });
  }

  // The server has it: forgotten, files and all.
  drop(clientMsgId) {
    return this.transaction('readwrite', (records, files) => {
      records.delete(clientMsgId);
      files.delete(IDBKeyRange.bound(`${clientMsgId}/`, `${clientMsgId}/\uffff`));
    });
  }

  // What this user's pages left unsent, oldest first, with their files.
  async unsent() {
    const kept = (await this.transaction('readonly', (records) => records.getAll())) ?? [];
    const mine = kept.filter((entry) => entry.user === this.user);
    for (const entry of mine) {
      for (const item of entry.draft.uploads ?? []) {
        item.blob = await this.transaction('readonly', (records, files) => files.get(`${entry.clientMsgId}/${item.field}`));
      }
    }
    // A message whose files are gone (the browser cleared them) cannot be sent again.
    const whole = mine.filter((entry) => (entry.draft.uploads ?? []).every((item) => item.blob instanceof Blob));
    for (const entry of mine) if (!whole.includes(entry)) await this.drop(entry.clientMsgId);
    return whole.sort((a, b) => a.clientMsgId.localeCompare(b.clientMsgId));
  }
}
