#!/usr/bin/env python3
"""An app backend written from docs/openapi.yaml and docs/webhooks.md alone, in Python with the
standard library and PyJWT: it drives rooms through the server API and receives every webhook,
checking signatures, order and completeness, across a receiver outage and a `kill -9` of the
server. Usage: backend.py MAJLIS_BINARY. Prints "ok ..." and exits 0, or says what is wrong."""

import hashlib, hmac, http.server, json, shutil, signal, subprocess, sys, tempfile, threading, time, urllib.request
import jwt

KEY, SECRET = "backend", "backend-secret-0123456789abcdef0123456789"
binary = sys.argv[1]
data = tempfile.mkdtemp(prefix="majlis-backend-")
received, lock = [], threading.Lock()
outage = threading.Event()
outage.set()


def verify(headers, body: bytes, secret: bytes, tolerance=300) -> bool:  # as docs/webhooks.md shows
    fields = dict(part.split("=", 1) for part in headers["Majlis-Signature"].split(","))
    t = fields.get("t", "")
    if not t.isdigit() or abs(time.time() - int(t)) > tolerance:
        return False
    expected = hmac.new(secret, t.encode() + b"." + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, fields.get("v1", ""))


class Hooks(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if outage.is_set():
            self.send_response(503)
            self.end_headers()
            return
        if not verify(self.headers, body, SECRET.encode()) or self.headers["Majlis-Key"] != KEY:
            sys.exit("a webhook with a bad signature")
        event = json.loads(body)
        if event["id"] != self.headers["Majlis-Event-Id"]:
            sys.exit("Majlis-Event-Id differs from the body's id")
        with lock:
            received.append(event)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


receiver = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hooks)
threading.Thread(target=receiver.serve_forever, daemon=True).start()


def start():
    process = subprocess.Popen(
        [binary, "serve", "--listen", "127.0.0.1:0", "--media-listen", "127.0.0.1:0", "--data", data, "--keys", f"{KEY}:{SECRET}",
         "--webhook", f"http://127.0.0.1:{receiver.server_address[1]}/hooks", "--webhook-chat", "--log-level", "error"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for line in process.stdout:
        if line.startswith("majlis ready:"):
            return process, line.split()[2].replace("ws://", "http://").replace("/v1/signal", "")
    sys.exit("the server did not start")


def call(base, method, path, body=None, key=None):
    token = jwt.encode({"sub": "backend", "exp": int(time.time()) + 300, "grants": {"admin": True}}, SECRET, algorithm="HS256",
                       headers={"kid": KEY})
    request = urllib.request.Request(base + path, method=method, data=None if body is None else json.dumps(body).encode(),
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                                              **({"Idempotency-Key": key} if key else {})})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return answer.status, json.loads(answer.read() or b"{}")


server, base = start()
status, room = call(base, "POST", "/v1/rooms", {"id": "bazaar", "title": "Bazaar", "seatCount": 4, "owner": "host"})
assert status == 201 and room["seatCount"] == 4, room
for text in ["one", "two", "three"]:
    call(base, "POST", "/v1/rooms/bazaar/chat", {"text": text}, key=f"msg-{text}")
assert call(base, "POST", "/v1/rooms/bazaar/chat", {"text": "one"}, key="msg-one")[1]["msgId"] == 1  # a retry posts once
call(base, "POST", "/v1/rooms/bazaar/mute-all", {"muted": True})
call(base, "POST", "/v1/rooms", {"id": "souk"})
call(base, "POST", "/v1/rooms/souk/members/pest/kick", {"banSeconds": 600})
assert [ban["user"] for ban in call(base, "GET", "/v1/rooms/souk/bans")[1]["bans"]] == ["pest"]
call(base, "DELETE", "/v1/rooms/souk/bans/pest")
call(base, "DELETE", "/v1/rooms/souk")
pending = call(base, "GET", "/v1/webhooks/events?state=pending")[1]
assert pending["queueDepth"] == 1 + 3 + 4 + 1 + 1 + 1, pending["queueDepth"]

# The server dies without a word while the receiver is still down; it comes back on the same data.
server.send_signal(signal.SIGKILL)
server.wait()
server, base = start()
call(base, "POST", "/v1/rooms/bazaar/chat", {"text": "after the restart", "from": {"id": "crier", "name": "Crier"}})
call(base, "DELETE", "/v1/rooms/bazaar")
outage.clear()  # the receiver is back

expected = {
    "bazaar": ["room.started", "chat.message", "chat.message", "chat.message"] + ["seat.muted"] * 4 + ["chat.message", "room.ended"],
    "souk": ["room.started", "member.unbanned", "room.ended"],
}
deadline = time.time() + 90
while time.time() < deadline:
    with lock:
        rooms = {name: [e for e in received if e["room"] == name] for name in expected}
    if all(len({e["id"] for e in rooms[name]}) >= len(types) for name, types in expected.items()):
        break
    time.sleep(0.2)
server.send_signal(signal.SIGTERM)
server.wait()
shutil.rmtree(data, ignore_errors=True)
for name, types in expected.items():
    firsts, seen = [], set()
    for event in rooms[name]:
        if event["id"] not in seen:
            seen.add(event["id"])
            firsts.append(event)
    got = [event["type"] for event in firsts]
    if got != types:
        sys.exit(f"room {name}: events {got}, expected {types}")
    if [event["seq"] for event in firsts] != list(range(1, len(types) + 1)):
        sys.exit(f"room {name}: seq {[event['seq'] for event in firsts]}")
    repeats = [event for event in rooms[name] if event not in firsts]
    if any(event != next(f for f in firsts if f["id"] == event["id"]) for event in repeats):
        sys.exit(f"room {name}: a repeated id with another body")
chat = [e["data"] for e in rooms["bazaar"] if e["type"] == "chat.message"]
assert [m["text"] for m in chat] == ["one", "two", "three", "after the restart"] and chat[-1]["from"]["name"] == "Crier", chat
print(f"ok: {sum(len(t) for t in expected.values())} events in order across an outage and kill -9, "
      f"{len(received) - sum(len(t) for t in expected.values())} repeats by id")
