#!/usr/bin/env python3
"""A small app backend that signs its people into the Majlis web app (docs/web.md).

It stands for your app: people sign in to it (here: /login?user=ID&name=NAME sets a cookie; your
app has its own accounts), and it mints Majlis tokens for them with PyJWT, with the key and secret
that `majlis serve --keys KEY:SECRET` holds. It hands the web app a token two ways:

- GET /majlis-token answers {"token": ...} to a signed-in browser (its cookie), with CORS for the
  Majlis server's origin: run `majlis serve --keys KEY:SECRET --token-url http://THIS/majlis-token`
  and the web app fetches its token there by itself;
- GET /?room=ROOM is a page of the app that embeds the web app in an iframe and posts it the token
  (`--allow-origin http://THIS` lets this page embed Majlis and post to it).

Usage: token-backend.py --majlis http://127.0.0.1:7880 --key KEY --secret SECRET [--listen 127.0.0.1:8080]
Needs PyJWT (pip install PyJWT).
"""

import argparse, hashlib, hmac, html, http.cookies, http.server, json, time, urllib.parse
import jwt

parser = argparse.ArgumentParser(description="Mints Majlis tokens for the people signed in to this app.")
parser.add_argument("--majlis", required=True, help="the Majlis server's address, e.g. https://voice.example.com")
parser.add_argument("--key", required=True, help="an API key of the Majlis server (--keys KEY:SECRET)")
parser.add_argument("--secret", required=True, help="that key's secret")
parser.add_argument("--listen", default="127.0.0.1:8080", help="HOST:PORT to serve on")
options = parser.parse_args()
majlis = options.majlis.rstrip("/")
cookie_secret = hashlib.sha256(b"cookie:" + options.secret.encode()).digest()


def mint(user: str, name: str) -> str:
    """A Majlis access token (docs/protocol.md section 3) for one hour."""
    now = int(time.time())
    claims = {"sub": user, "name": name, "iat": now, "exp": now + 3600,
              "grants": {"join": True, "create": True, "publish": True, "chat": True}}
    return jwt.encode(claims, options.secret, algorithm="HS256", headers={"kid": options.key})


def sign(value: str) -> str:
    return value + "." + hmac.new(cookie_secret, value.encode(), hashlib.sha256).hexdigest()


def signed_in(headers) -> tuple[str, str] | None:
    """The (user, name) of this app's own session cookie, if it is genuine."""
    cookie = http.cookies.SimpleCookie(headers.get("Cookie", "")).get("session")
    if not cookie or "." not in cookie.value:
        return None
    value, _ = cookie.value.rsplit(".", 1)
    if not hmac.compare_digest(sign(value), cookie.value):
        return None
    user, _, name = urllib.parse.unquote(value).partition(":")
    return user, name


EMBEDDING_PAGE = """<!doctype html>
<meta charset="utf-8"><title>An app with a Majlis room</title>
<iframe id="majlis" src="{src}" allow="microphone; autoplay" style="width:100%;height:90vh;border:0"></iframe>
<script>
const majlis = new URL({origin});
window.addEventListener('message', async (event) => {{
  if (event.origin !== majlis.origin || event.data?.type !== 'majlis:ready') return;
  const answer = await fetch('/majlis-token', {{ credentials: 'same-origin' }});
  if (!answer.ok) return;
  const {{ token }} = await answer.json();
  document.getElementById('majlis').contentWindow.postMessage({{ type: 'majlis:token', token }}, majlis.origin);
}});
</script>"""


class App(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        if url.path == "/login":
            user, name = query.get("user", ""), query.get("name", "")
            if not user:
                return self.answer(400, {"error": "user is needed"})
            self.send_response(303)
            value = urllib.parse.quote(f"{user}:{name or user}")
            self.send_header("Set-Cookie", f"session={sign(value)}; Path=/; HttpOnly; SameSite=Lax")
            self.send_header("Location", "/")
            self.end_headers()
        elif url.path == "/majlis-token":
            person = signed_in(self.headers)
            if not person:
                return self.answer(401, {"error": "sign in to the app first"})
            self.answer(200, {"token": mint(*person)})
        elif url.path == "/":
            room = query.get("room", "majlis")
            page = EMBEDDING_PAGE.format(src=html.escape(f"{majlis}/?room={urllib.parse.quote(room)}"), origin=json.dumps(majlis))
            self.answer(200, page.encode(), "text/html; charset=utf-8")
        else:
            self.answer(404, {"error": "not found"})

    def answer(self, status, body, content_type="application/json"):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        # The Majlis web app (another origin) may read the token with this app's cookie.
        self.send_header("Access-Control-Allow-Origin", majlis)
        self.send_header("Access-Control-Allow-Credentials", "true")
        self.send_header("Vary", "Origin")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


host, port = options.listen.rsplit(":", 1)
server = http.server.ThreadingHTTPServer((host, int(port)), App)
print(f"app backend on http://{host}:{server.server_port}", flush=True)
server.serve_forever()
