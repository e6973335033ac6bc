"""Shelf's scrobbling against a real scrobble server and a Last.fm stand-in, all on loopback.

    scrobble_test.py MODE SHELF LIBRARY MALOJA

MODE `maloja`: Maloja (PyPI malojaserver) runs here with its own temporary data folder and an
API key. ann links ListenBrainz through Maloja's ListenBrainz-compatible API; 50 plays arrive
while Maloja is killed, Shelf restarted, and Maloja started again; every listen must reach Maloja
exactly once, in order, with its own timestamp. bob links Last.fm through Maloja's
Audioscrobbler-compatible API; a Maloja restart drops its session keys, so bob's queue pauses with
the service's reason, keeps the listen, and sends it after bob links again.

MODE `lastfm`: a loopback Last.fm stand-in (below) that checks every call's api_sig by Last.fm's
documented algorithm: ann links through the web authentication flow as a browser does (sign in,
Shelf's authorize link, Last.fm's page sending the browser back with a token), bob with
auth.getMobileSession from the command line; a play is announced (updateNowPlaying) and scrobbled.

Every wait is for a condition (a port that answers, a count reached), bounded only against a
hang. Prints one line per check; exits 1 if any failed.
"""

import hashlib
import http.cookiejar
import http.server
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from check_kit import HANG, ShelfServe, check, failures, free_port, wait_until

MODE, SHELF, LIBRARY, MALOJA = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
PASSWORDS = {"ann": "ann's secret", "bob": "bob-pass"}


def http_call(url, data=None, headers=None, method=None, opener=None):
    request = urllib.request.Request(url, data=data, headers=headers or {}, method=method)
    try:
        with (opener or urllib.request.build_opener()).open(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def cli(args, stdin=None, env=None):
    return subprocess.run(
        [SHELF, "--library", LIBRARY, *args], input=stdin, capture_output=True, text=True, timeout=HANG,
        env={**os.environ, "XDG_CONFIG_HOME": "/nonexistent-shelf-test-config", **(env or {})})


def cli_json(args, env=None):
    result = cli([*args, "--json"], env=env)
    assert result.returncode == 0, f"shelf {' '.join(args)}: {result.stderr}"
    return json.loads(result.stdout)


class Shelf(ShelfServe):
    """`shelf serve` on a free loopback port, its log kept."""

    def __init__(self, env):
        self.env = env
        self.keys = {}
        self.start()

    def start(self):
        self.serve(SHELF, LIBRARY, {**os.environ, "XDG_CONFIG_HOME": "/nonexistent-shelf-test-config", **self.env})

    def scrobbling(self, user):
        """The user's links as `/api/me/scrobbling` shows them (signed in by an API key made once)."""
        if user not in self.keys:
            self.keys[user] = cli_json(["user", "key", user])["key"]
        status, body = http_call(f"{self.base}/api/me/scrobbling", headers={"Authorization": f"Bearer {self.keys[user]}"})
        assert status == 200, body
        return json.loads(body)["services"]

    def subsonic(self, name, user="ann", **params):
        query = urllib.parse.urlencode({"u": user, "p": PASSWORDS[user], "v": "1.16.1", "c": "scrobble-test", "f": "json", **params})
        status, body = http_call(f"{self.base}/rest/{name}?{query}")
        document = json.loads(body)["subsonic-response"]
        assert status == 200 and document["status"] == "ok", f"{name}: {body}"
        return document


def track_ids():
    tracks = cli_json(["tracks", "--limit", "100"])["items"]
    return [(track["id"], track["title"]) for track in tracks]


# MARK: Maloja


class Maloja:
    """Maloja on a free loopback port with everything in a temporary folder and one API key."""

    KEY = "shelf-test-key-0123456789abcdef"

    def __init__(self):
        self.directory = tempfile.mkdtemp(prefix="maloja-")
        with open(os.path.join(self.directory, "apikeys.yml"), "w") as f:
            f.write(f"shelf: {self.KEY}\n")
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.start()

    def start(self):
        env = {**os.environ, "MALOJA_DATA_DIRECTORY": self.directory, "MALOJA_HOST": "127.0.0.1", "MALOJA_PORT": str(self.port),
               "MALOJA_SKIP_SETUP": "yes", "MALOJA_FORCE_PASSWORD": "maloja-admin"}
        log = open(os.path.join(self.directory, "maloja.log"), "ab")
        self.process = subprocess.Popen([MALOJA, "run"], env=env, cwd=self.directory, stdin=subprocess.DEVNULL, stdout=log,
                                        stderr=subprocess.STDOUT, start_new_session=True)

        def ready():
            if self.process.poll() is not None:
                raise RuntimeError(f"maloja exited with {self.process.returncode}")
            try:
                status, body = http_call(f"{self.base}/apis/mlj_1/serverinfo")
                info = json.loads(body)["db_status"]
                return status == 200 and info["healthy"] and info["complete"]
            except (OSError, ValueError, KeyError):
                return False

        wait_until("Maloja to start", ready)

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(HANG)

    def scrobbles(self):
        # `from` and `until` both: without them Maloja's "all time" begins at its own start.
        status, body = http_call(f"{self.base}/apis/mlj_1/scrobbles?from=1970&until=2100&reverse=no")
        assert status == 200, body
        return [(item["time"], item["track"]["title"], item["track"]["artists"]) for item in json.loads(body)["list"]]

    def remove(self):
        # SIGKILL: its data is thrown away, and Maloja may not heed SIGTERM under some parents.
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(HANG)
        shutil.rmtree(self.directory, ignore_errors=True)


def maloja_mode():
    maloja = Maloja()
    shelf = None
    lastfm_env = {"SHELF_LASTFM_API_KEY": "maloja-ignores-keys", "SHELF_LASTFM_SECRET": "and-signatures"}
    env = {"SHELF_SCROBBLE_RETRY_MS": "100", **lastfm_env}
    tracks = track_ids()
    now = int(time.time())
    # 50 plays, 400 s apart, all in the past; Maloja keys a scrobble by its second.
    played = [(now - (50 - n) * 400, tracks[n % len(tracks)]) for n in range(50)]
    try:
        check_link = cli(["user", "link", "ann", "listenbrainz", "--token-stdin", "--url", maloja.base + "/apis/listenbrainz", "--json"],
                         Maloja.KEY + "\n")

        def link_checked():
            refused = cli(["user", "link", "ann", "listenbrainz", "--token-stdin", "--url", maloja.base + "/apis/listenbrainz"], "not-the-key\n")
            assert refused.returncode != 0 and "refused" in refused.stderr.lower(), refused.stderr
            assert check_link.returncode == 0, check_link.stderr
            state = json.loads(check_link.stdout)["scrobbling"]
            assert state["service"] == "listenbrainz" and state["state"] == "linked" and state["queued"] == 0, state
        check("maloja: a ListenBrainz token is checked with the service before it is kept", link_checked)

        shelf = Shelf(env)

        def send(plays):
            for at, (track, _) in plays:
                shelf.subsonic("scrobble", id=f"tr-{track}", time=str(at * 1000), submission="true")

        def ann_state():
            return shelf.scrobbling("ann")[0]

        def through_an_outage():
            send(played[:15])
            # Maloja is read only once Shelf says it has sent: Maloja's own cache can keep the answer
            # of a read that raced a scrobble's insert.
            wait_until("the first 15 listens sent", lambda: ann_state()["sent"] == 15)
            assert len(maloja.scrobbles()) == 15
            maloja.kill()
            send(played[15:30])
            waiting = wait_until("a failed send", lambda: (lambda s: s if s["lastError"] and s["queued"] > 0 else None)(ann_state()))
            assert waiting["state"] == "linked", waiting
            # Shelf restarts during the outage: the queue is on disk.
            shelf.stop()
            shelf.start()
            send(played[30:40])
            maloja.start()
            send(played[40:])
            wait_until("every listen sent", lambda: ann_state()["queued"] == 0)
            got = maloja.scrobbles()
            expected = [(at, title) for at, (_, title) in played]
            assert [(t, title) for t, title, _ in got] == expected, \
                f"Maloja has {len(got)}: first differences {[pair for pair in zip(got, expected) if pair[0][:2] != pair[1]][:3]}"
            state = ann_state()
            assert state["sent"] == 50 and state["refused"] == 0 and state["lastError"] is None, state
        check("maloja: 50 plays through an outage and a restart arrive exactly once, in order, with their own times", through_an_outage)

        def history_kept():
            listens = cli_json(["history", "--user", "ann", "--limit", "100"])["listens"]
            assert len(listens) == 50 and all(listen["source"] == "scrobble" and listen["client"] == "scrobble-test" for listen in listens)
            assert [int(time.mktime(time.strptime(listen["playedAt"], "%Y-%m-%dT%H:%M:%SZ"))) - time.timezone
                    for listen in reversed(listens)] == [at for at, _ in played]
        check("maloja: shelf history lists the 50 listens", history_kept)

        def audioscrobbler_pause_and_relink():
            scrobbler_url = maloja.base + "/apis/audioscrobbler/2.0"
            linked = cli(["user", "link", "bob", "lastfm", "--username", "bob", "--password-stdin", "--url", scrobbler_url, "--json"],
                         Maloja.KEY + "\n", env=lastfm_env)
            assert linked.returncode == 0, linked.stderr
            first = [(now - 7 - n * 400, tracks[n]) for n in range(3)]
            for at, (track, _) in first:
                shelf.subsonic("scrobble", user="bob", id=f"tr-{track}", time=str(at * 1000), submission="true")
            wait_until("bob's 3 listens sent", lambda: shelf.scrobbling("bob")[0]["sent"] == 3)
            assert len(maloja.scrobbles()) == 53
            # A Maloja restart forgets its session keys (error 9): bob's queue pauses and keeps the listen.
            maloja.kill()
            maloja.start()
            later = now - 3
            shelf.subsonic("scrobble", user="bob", id=f"tr-{tracks[3][0]}", time=str(later * 1000), submission="true")

            def paused():
                state = shelf.scrobbling("bob")[0]
                return state if state["state"] == "paused" else None
            wait_until("bob's queue to pause", paused)
            state = cli_json(["user", "show", "bob"])["user"]["scrobbling"][0]
            assert state["state"] == "paused" and state["queued"] == 1 and "9" in (state["pauseReason"] or ""), state
            text = cli(["user", "show", "bob"]).stdout
            assert "Last.fm: paused" in text, text
            relinked = cli(["user", "link", "bob", "lastfm", "--username", "bob", "--password-stdin", "--url", scrobbler_url],
                           Maloja.KEY + "\n", env=lastfm_env)
            assert relinked.returncode == 0, relinked.stderr
            # The CLI wrote beside the running server; the next write wakes its sender.
            shelf.subsonic("star", user="bob", id=f"tr-{tracks[0][0]}")
            wait_until("the kept listen sent after relinking", lambda: shelf.scrobbling("bob")[0]["queued"] == 0)
            times = [t for t, _, _ in maloja.scrobbles()]
            assert later in times and len(times) == 54 and len(set(times)) == 54, f"{len(times)} scrobbles in Maloja, {len(set(times))} times"
        check("maloja: Audioscrobbler scrobbles, a refused session pauses the queue, relinking sends what was kept",
              audioscrobbler_pause_and_relink)
    finally:
        if shelf:
            shelf.stop()
        maloja.remove()


# MARK: Last.fm stand-in


class LastfmStandIn(http.server.ThreadingHTTPServer):
    """The parts of Last.fm's API Shelf uses, checking each call's signature as Last.fm does."""

    KEY, SECRET = "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"

    def __init__(self):
        super().__init__(("127.0.0.1", 0), LastfmHandler)
        self.calls = []
        self.bad_signatures = 0
        self.tokens = set()
        self.sessions = {}
        self.lock = threading.Lock()
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def base(self):
        return f"http://127.0.0.1:{self.server_address[1]}/2.0"

    @staticmethod
    def signature(params, secret):
        text = "".join(f"{key}{params[key]}" for key in sorted(params) if key not in ("format", "callback", "api_sig")) + secret
        return hashlib.md5(text.encode()).hexdigest()


class LastfmHandler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, document, headers=()):
        body = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/2.0/auth/":
            # The authorisation page: the user says yes; the browser goes back with a token.
            query = dict(urllib.parse.parse_qsl(url.query))
            if query.get("api_key") != LastfmStandIn.KEY or not query.get("cb"):
                return self.answer(400, {"error": 10, "message": "Invalid API key"})
            token = hashlib.sha1(os.urandom(8)).hexdigest()
            with self.server.lock:
                self.server.tokens.add(token)
            back = query["cb"] + ("&" if "?" in query["cb"] else "?") + "token=" + token
            return self.answer(302, {}, [("Location", back)])
        self.answer(404, {"error": 3, "message": "Invalid Method"})

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        params = dict(urllib.parse.parse_qsl(self.rfile.read(length).decode(), keep_blank_values=True))
        server = self.server
        with server.lock:
            server.calls.append(params)
            if params.get("api_key") != LastfmStandIn.KEY:
                return self.answer(403, {"error": 10, "message": "Invalid API key"})
            if params.get("api_sig") != LastfmStandIn.signature(params, LastfmStandIn.SECRET):
                server.bad_signatures += 1
                return self.answer(403, {"error": 13, "message": "Invalid method signature supplied"})
            method = params.get("method")
            if method == "auth.getMobileSession":
                if params.get("password") != "right password":
                    return self.answer(403, {"error": 4, "message": "Authentication Failed"})
                server.sessions["sk-mobile"] = params["username"]
                return self.answer(200, {"session": {"name": params["username"] + "_fm", "key": "sk-mobile", "subscriber": 0}})
            if method == "auth.getSession":
                if params.get("token") not in server.tokens:
                    return self.answer(403, {"error": 4, "message": "Invalid authentication token supplied"})
                server.tokens.discard(params["token"])
                server.sessions["sk-web"] = "ann"
                return self.answer(200, {"session": {"name": "ann_fm", "key": "sk-web", "subscriber": 0}})
            if method in ("track.scrobble", "track.updateNowPlaying"):
                if params.get("sk") not in server.sessions:
                    return self.answer(403, {"error": 9, "message": "Invalid session key - Please re-authenticate"})
                if method == "track.scrobble":
                    return self.answer(200, {"scrobbles": {"@attr": {"accepted": 1, "ignored": 0}}})
                return self.answer(200, {"nowplaying": {}})
            self.answer(400, {"error": 3, "message": "Invalid Method"})


class NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def hop(browser, url):
    """One step of a browser's way: the status and where it is sent next."""
    try:
        with browser.open(url, timeout=30) as response:
            return response.status, None
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Location")


def lastfm_mode():
    standin = LastfmStandIn()
    env = {"SHELF_LASTFM_API_KEY": LastfmStandIn.KEY, "SHELF_LASTFM_SECRET": LastfmStandIn.SECRET, "SHELF_LASTFM_URL": standin.base,
           "SHELF_SCROBBLE_RETRY_MS": "100"}
    shelf = Shelf(env)
    tracks = track_ids()
    try:
        def web_flow():
            jar = http.cookiejar.CookieJar()
            browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), NoRedirects)
            status, _ = http_call(shelf.base + "/api/session", json.dumps({"name": "ann", "password": PASSWORDS["ann"]}).encode(),
                                  {"Content-Type": "application/json"}, opener=browser)
            assert status == 200
            status, body = http_call(shelf.base + "/api/me/scrobbling/lastfm/authorize", opener=browser)
            assert status == 200, body
            authorize = json.loads(body)["url"]
            assert authorize.startswith(standin.base + "/auth/?api_key=" + LastfmStandIn.KEY), authorize
            # Last.fm's page sends the browser back to Shelf with a token; Shelf links and shows the settings.
            status, location = hop(browser, authorize)
            assert status == 302 and location.startswith(shelf.base + "/api/me/scrobbling/lastfm/callback?state="), (status, location)
            # A callback with a state this user's flow did not make links nothing (someone else's link).
            forged = location.split("?state=")[0] + "?state=forged&token=" + location.rsplit("token=", 1)[1]
            assert hop(browser, forged) == (303, "/#settings/lastfm-refused")
            status, back = hop(browser, location)
            assert (status, back) == (303, "/#settings/lastfm-linked"), (status, back)
            # A state is good once.
            assert hop(browser, location) == (303, "/#settings/lastfm-refused")
            status, body = http_call(shelf.base + "/api/me/scrobbling", opener=browser)
            document = json.loads(body)
            assert document["lastfm"] is True and document["services"][0]["account"] == "ann_fm", document
        check("lastfm: the web authentication flow links a user from the page", web_flow)

        def plays_are_signed_and_sent():
            track = tracks[0][0]
            shelf.subsonic("reportPlayback", mediaId=f"tr-{track}", mediaType="song", positionMs="0", state="starting")
            at = int(time.time()) - 120
            shelf.subsonic("scrobble", id=f"tr-{track}", time=str(at * 1000), submission="true")

            def sent(method):
                with standin.lock:
                    return [c for c in standin.calls if c.get("method") == method and c.get("sk") == "sk-web"]
            scrobbles = wait_until("the scrobble", lambda: sent("track.scrobble"))
            assert len(scrobbles) == 1 and scrobbles[0]["timestamp"] == str(at) and scrobbles[0]["track"] == tracks[0][1], scrobbles
            wait_until("the now-playing notice", lambda: sent("track.updateNowPlaying"))
            assert standin.bad_signatures == 0
        check("lastfm: now playing and a scrobble, every call signed as Last.fm documents", plays_are_signed_and_sent)

        def mobile_session():
            wrong = cli(["user", "link", "bob", "lastfm", "--username", "bob", "--password-stdin"], "wrong\n", env=env)
            assert wrong.returncode != 0 and "Authentication Failed" in wrong.stderr, wrong.stderr
            right = cli(["user", "link", "bob", "lastfm", "--username", "bob", "--password-stdin", "--json"], "right password\n", env=env)
            assert right.returncode == 0, right.stderr
            assert json.loads(right.stdout)["scrobbling"]["account"] == "bob_fm"
            assert standin.bad_signatures == 0
            # What is stored is the session key, encrypted: neither it nor the password is in the store.
            with open(os.path.join(LIBRARY, "library.sqlite"), "rb") as f:
                store = f.read()
            wal = os.path.join(LIBRARY, "library.sqlite-wal")
            if os.path.exists(wal):
                with open(wal, "rb") as f:
                    store += f.read()
            assert b"sk-mobile" not in store and b"right password" not in store and b"sk-web" not in store
            unlinked = cli(["user", "unlink", "bob", "lastfm"])
            assert unlinked.returncode == 0 and cli_json(["user", "show", "bob"])["user"]["scrobbling"] == []
        check("lastfm: auth.getMobileSession from the command line, the session key stored encrypted", mobile_session)
    finally:
        shelf.stop()
        standin.shutdown()


if MODE == "maloja":
    maloja_mode()
elif MODE == "lastfm":
    lastfm_mode()
else:
    sys.exit(f"unknown mode {MODE}")
sys.exit(1 if failures else 0)
