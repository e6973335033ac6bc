"""Shelf behind real reverse proxies from Debian, started here on loopback with their own
temporary configuration: nginx and Caddy.

    proxy_test.py MODE SHELF_PORT USER PASSWORD WORKDIR [WEB_PYTHON WEB_ARGS…]

MODE `root`: Shelf (trusted-proxies 127.0.0.1, auth-header Remote-User) behind nginx at `/`, with and
without upstream keep-alive, and behind a second nginx server that signs people in itself
(auth_basic) and passes the name in Remote-User. MODE `subpath`: Shelf (base-path /music) behind
nginx at `/music/` (the prefix passed on) and Caddy's `handle_path /music/*` (the prefix stripped);
then, when WEB_PYTHON is given, the page in Chromium through nginx's sub-path.

Clients that must look like different people connect from their own loopback addresses
(127.0.1.N), which the proxy forwards. Every wait is for a condition (a port that answers, an event
that arrives), bounded only against a hang. Prints one line per check; exits 1 if any failed.
"""

import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.parse

MODE, SHELF_PORT, USER, PASSWORD, WORKDIR = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
WEB = sys.argv[6:]
HANG = 60  # seconds: a bound for a hung proxy or server, not a synchronization
failures = []


def check(name, body, *args):
    try:
        body(*args)
        print(f"ok   {name}", flush=True)
    except Exception as error:  # noqa: BLE001 (any failure of a check is reported; the rest still run)
        failures.append(name)
        print(f"FAIL {name}: {error}", flush=True)
        print("".join(traceback.format_tb(error.__traceback__)[-2:]), flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, process, log):
    deadline = time.monotonic() + HANG
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the proxy exited with {process.returncode}: {open(log).read()[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.02)  # polling a port that is not listening yet; the loop ends when it does
    raise RuntimeError(f"nothing listens on {port}: {open(log).read()[-2000:]}")


class Proxy:
    """A running proxy: nginx or Caddy, stopped at the end."""

    def __init__(self, kind, config_text, ports):
        # A port picked free can be taken by another test before the proxy binds it: the proxy is
        # then started again on fresh ports (`self.ports` are the ones it listens on).
        for attempt in range(5):
            try:
                self.start(kind, config_text, ports)
                self.ports = ports
                return
            except RuntimeError as error:
                if "address already in use" not in str(error).lower() or attempt == 4:
                    raise
                fresh = [free_port() for _ in ports]
                for old, new in zip(ports, fresh):
                    config_text = config_text.replace(f"127.0.0.1:{old}", f"127.0.0.1:{new}")
                ports = fresh

    def start(self, kind, config_text, ports):
        self.directory = tempfile.mkdtemp(prefix=f"shelf-{kind}-", dir=WORKDIR)
        os.chmod(self.directory, 0o755)
        self.log = os.path.join(self.directory, "proxy.log")
        config = os.path.join(self.directory, "proxy.conf")
        with open(config, "w") as f:
            f.write(config_text.replace("@DIR@", self.directory))
        if kind == "nginx":
            command = ["/usr/sbin/nginx", "-p", self.directory, "-c", config, "-g", "daemon off;"]
            environment = os.environ
        else:
            command = ["/usr/bin/caddy", "run", "--config", config, "--adapter", "caddyfile"]
            environment = dict(os.environ, HOME=self.directory, XDG_DATA_HOME=self.directory, XDG_CONFIG_HOME=self.directory)
        self.process = subprocess.Popen(command, stdout=open(self.log, "w"), stderr=subprocess.STDOUT, env=environment)
        for port in ports:
            wait_for_port(port, self.process, self.log)

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=HANG)
        except subprocess.TimeoutExpired:
            self.process.kill()


def nginx(servers):
    user = "user root root;\n" if os.geteuid() == 0 else ""
    return f"""{user}worker_processes 1;
pid @DIR@/nginx.pid;
error_log @DIR@/error.log warn;
events {{ worker_connections 2048; }}
http {{
  access_log off;
  client_body_temp_path @DIR@/body; proxy_temp_path @DIR@/proxy; fastcgi_temp_path @DIR@/fastcgi;
  uwsgi_temp_path @DIR@/uwsgi; scgi_temp_path @DIR@/scgi;
  {servers}
}}
"""


def forwarding():
    return ("proxy_set_header Host $http_host; proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for; "
            "proxy_set_header X-Forwarded-Proto $scheme; proxy_read_timeout 1h;")


def request(port, method, path, body=None, headers=None, source=None):
    """One request on its own connection, from `source` (a loopback address) when given."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=HANG, source_address=(source, 0) if source else None)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, dict((k.lower(), v) for k, v in response.getheaders()), response.read()
    finally:
        connection.close()


def sign_in(port, prefix, user=USER, password=PASSWORD, source=None):
    status, headers, body = request(port, "POST", prefix + "/api/session", json.dumps({"name": user, "password": password}),
                                    {"Content-Type": "application/json"}, source)
    assert status == 200, f"sign-in: {status} {body[:200]}"
    return headers["set-cookie"].split(";")[0], headers["set-cookie"]


def subsonic(port, prefix, name, params, raw=False):
    query = urllib.parse.urlencode([("u", USER), ("p", PASSWORD), ("v", "1.16.1"), ("c", "proxy-test"), ("f", "json")] + params)
    status, headers, body = request(port, "GET", f"{prefix}/rest/{name}?{query}")
    if raw:
        return status, headers, body
    assert status == 200, f"{name}: {status}"
    answer = json.loads(body)["subsonic-response"]
    assert answer["status"] == "ok", f"{name}: {answer}"
    return answer


# MARK: Checks that hold behind any proxy

def streams_and_ranges(port, prefix):
    _, _, direct = subsonic(SHELF_PORT, "", "stream", [("id", "tr-1")], raw=True)
    status, _, whole = subsonic(port, prefix, "stream", [("id", "tr-1")], raw=True)
    assert status == 200 and whole == direct and len(whole) > 1000, f"{status}, {len(whole)} of {len(direct)} bytes"
    query = urllib.parse.urlencode([("u", USER), ("p", PASSWORD), ("v", "1.16.1"), ("c", "t"), ("id", "tr-1")])
    status, headers, part = request(port, "GET", f"{prefix}/rest/stream?{query}", headers={"Range": "bytes=100-299"})
    assert status == 206 and part == direct[100:300], f"{status} {headers.get('content-range')} {len(part)}"


def a_client_syncs(port, prefix):
    """An OpenSubsonic client's whole sync: search3 with an empty query, page by page."""
    seen, offset = [], 0
    while True:
        page = subsonic(port, prefix, "search3", [("query", ""), ("songCount", "5"), ("songOffset", str(offset)),
                                                  ("artistCount", "0"), ("albumCount", "0")])
        songs = page["searchResult3"].get("song", [])
        seen += [song["id"] for song in songs]
        if len(songs) < 5:
            break
        offset += 5
    direct = subsonic(SHELF_PORT, "", "search3", [("query", ""), ("songCount", "500"), ("artistCount", "0"), ("albumCount", "0")])
    expected = [song["id"] for song in direct["searchResult3"]["song"]]
    assert seen == expected and len(set(seen)) == len(seen), f"{len(seen)} songs through the proxy, {len(expected)} direct"


def events_arrive(port, prefix):
    cookie, _ = sign_in(port, prefix)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=HANG)
    connection.request("GET", prefix + "/api/events", headers={"Cookie": cookie, "Accept": "text/event-stream"})
    response = connection.getresponse()
    assert response.status == 200, response.status

    def until(word):
        while True:
            line = response.fp.readline()
            assert line, "the stream ended"
            if line.decode().strip() == f"event: {word}":
                return

    until("ready")  # the stream is open end to end before anything changes
    status, _, body = request(port, "POST", prefix + "/api/playlists", json.dumps({"name": f"through {port}"}),
                              {"Cookie": cookie, "Content-Type": "application/json", "X-Shelf-Request": "1"})
    assert status == 201, f"{status} {body[:200]}"
    until("change")  # a buffering proxy would hold it back: the read would hang to its bound
    connection.close()


def many_clients(port, prefix, clients=200, each=10):
    """`clients` people at once, each from its own address through the proxy, none refused."""
    errors, lock = [], threading.Lock()

    def client(n):
        source = f"127.0.1.{n + 1}"
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=HANG, source_address=(source, 0))
        try:
            for _ in range(each):
                connection.request("GET", prefix + "/app/icon.svg")
                response = connection.getresponse()
                response.read()
                if response.status != 200:
                    with lock:
                        errors.append(f"{source}: {response.status}")
        except Exception as error:  # noqa: BLE001 (counted as a failed client)
            with lock:
                errors.append(f"{source}: {error}")
        finally:
            connection.close()

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, f"{len(errors)} failures, e.g. {errors[:3]}"


def through_the_proxy(label, port, prefix):
    """What every proxy must pass: a stream and a range, a whole sync, the live events."""
    check(f"{label}: a stream and a range", streams_and_ranges, port, prefix)
    check(f"{label}: an OpenSubsonic client syncs", a_client_syncs, port, prefix)
    check(f"{label}: events arrive", events_arrive, port, prefix)


# MARK: MODE root

def wrk_through(port):
    """wrk's 200 connections from one address (the proxy's own, trusted): no error at all."""
    if not shutil.which("wrk"):
        print("skip wrk: not installed (make deps-test)", flush=True)
        return
    out = subprocess.run(["wrk", "-t2", "-c200", "-d2s", f"http://127.0.0.1:{port}/app/icon.svg"], capture_output=True, text=True,
                         timeout=HANG).stdout
    assert "Non-2xx" not in out and "Socket errors" not in out, out
    assert "requests in" in out, out


def the_throttle_is_per_client(port):
    wrong = json.dumps({"name": USER, "password": "not it"})
    statuses = [request(port, "POST", "/api/session", wrong, {"Content-Type": "application/json"}, "127.0.2.1")[0] for _ in range(11)]
    assert statuses[:10] == [401] * 10 and statuses[10] == 429, statuses
    # Even the right password is refused from that address for now …
    right = json.dumps({"name": USER, "password": PASSWORD})
    assert request(port, "POST", "/api/session", right, {"Content-Type": "application/json"}, "127.0.2.1")[0] == 429
    # … and not from the next person's.
    sign_in(port, "", source="127.0.2.2")


def requests_in_flight_are_limited_per_client(port, limit=64):
    """Behind the proxy the per-address limit counts each client's requests: open event streams
    from one address up to the limit, and the next request from it is refused while another
    address is served."""
    cookie, _ = sign_in(port, "", source="127.0.3.9")
    streams = []
    try:
        for _ in range(limit):
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=HANG, source_address=("127.0.3.1", 0))
            connection.request("GET", "/api/events", headers={"Cookie": cookie})
            response = connection.getresponse()
            assert response.status == 200, response.status
            response.fp.readline()  # the stream is open at Shelf
            streams.append(connection)
        status, headers, _ = request(port, "GET", "/app/icon.svg", source="127.0.3.1")
        assert status == 429 and headers.get("retry-after"), f"{status} {headers}"
        assert request(port, "GET", "/app/icon.svg", source="127.0.3.2")[0] == 200
    finally:
        for connection in streams:
            connection.close()


def forged_headers_are_ignored():
    """Straight to Shelf from an address that is not a trusted proxy (127.0.5.5; the proxy is
    127.0.0.1): the headers a proxy would set mean nothing."""
    stranger = "127.0.5.5"
    status, _, _ = request(SHELF_PORT, "GET", "/api/me", headers={"Remote-User": USER, "X-Forwarded-For": "127.0.0.1"}, source=stranger)
    assert status == 401, status
    forged = urllib.parse.urlencode([("u", USER), ("p", PASSWORD), ("v", "1.16.1"), ("c", "t"), ("f", "json"), ("id", "tr-2")])
    _, _, body = request(SHELF_PORT, "GET", f"/rest/createShare?{forged}", source=stranger,
                         headers={"X-Forwarded-Proto": "https", "X-Forwarded-Host": "evil.example", "X-Forwarded-For": "203.0.113.66"})
    url = json.loads(body)["subsonic-response"]["shares"]["share"][0]["url"]
    assert url.startswith(f"http://127.0.0.1:{SHELF_PORT}/share/"), url


def single_sign_on(port):
    """nginx authenticates (auth_basic) and names the person in Remote-User: Shelf signs them in."""
    import base64
    basic = {"Authorization": "Basic " + base64.b64encode(b"carol:carol-pass").decode()}
    assert request(port, "GET", "/api/me")[0] == 401  # nginx asks for credentials
    status, _, body = request(port, "GET", "/api/me", headers=basic)
    assert status == 200, f"{status} {body[:200]}"
    user = json.loads(body)["user"]
    assert user["name"] == "carol" and user["admin"] is True, user
    # The page's own Subsonic calls are signed in the same way; a forged Remote-User is replaced by nginx's.
    query = urllib.parse.urlencode([("v", "1.16.1"), ("c", "web"), ("f", "json")])
    status, _, body = request(port, "GET", f"/rest/ping?{query}", headers=dict(basic, **{"X-Shelf-Request": "1", "Remote-User": USER}))
    assert json.loads(body)["subsonic-response"]["status"] == "ok", body
    status, _, body = request(port, "GET", "/api/me", headers=dict(basic, **{"Remote-User": USER}))
    assert json.loads(body)["user"]["name"] == "carol", body
    # A local user still signs in with a password, through the same proxy.
    status, _, _ = request(port, "POST", "/api/session", json.dumps({"name": USER, "password": PASSWORD}),
                           dict(basic, **{"Content-Type": "application/json"}))
    assert status == 200, status


def root_mode():
    for keepalive in (False, True):
        port = free_port()
        upstream = (f"upstream shelf {{ server 127.0.0.1:{SHELF_PORT}; keepalive 32; }}" if keepalive
                    else f"upstream shelf {{ server 127.0.0.1:{SHELF_PORT}; }}")
        extra = 'proxy_http_version 1.1; proxy_set_header Connection "";' if keepalive else ""
        config = nginx(f"""{upstream}
  server {{ listen 127.0.0.1:{port}; location / {{ proxy_pass http://shelf; {forwarding()} {extra} }} }}""")
        proxy = Proxy("nginx", config, [port])
        port = proxy.ports[0]
        label = "nginx with keep-alive" if keepalive else "nginx"
        try:
            check(f"{label}: 200 clients, each from its own address, none refused", many_clients, port, "")
            check(f"{label}: wrk's 200 connections, no error", wrk_through, port)
            through_the_proxy(label, port, "")
            if keepalive:
                check("nginx: the sign-in throttle locks out one client, not the next", the_throttle_is_per_client, port)
                check("nginx: requests in flight are limited per client", requests_in_flight_are_limited_per_client, port)
        finally:
            proxy.stop()
    check("direct: forged forwarding and sign-in headers are ignored", forged_headers_are_ignored)
    port = free_port()
    directory = tempfile.mkdtemp(prefix="shelf-htpasswd-", dir=WORKDIR)
    os.chmod(directory, 0o755)
    htpasswd = os.path.join(directory, "htpasswd")
    with open(htpasswd, "w") as f:
        f.write("carol:{PLAIN}carol-pass\n")
    os.chmod(htpasswd, 0o644)
    config = nginx(f"""upstream shelf {{ server 127.0.0.1:{SHELF_PORT}; }}
  server {{ listen 127.0.0.1:{port}; location / {{
    auth_basic "Shelf"; auth_basic_user_file {htpasswd};
    proxy_set_header Remote-User $remote_user; proxy_set_header Remote-Groups "family,admins";
    proxy_pass http://shelf; {forwarding()} }} }}""")
    proxy = Proxy("nginx", config, [port])
    port = proxy.ports[0]
    try:
        check("nginx auth_basic: the proxy's user is signed in and made", single_sign_on, port)
    finally:
        proxy.stop()


# MARK: MODE subpath

def the_page_lives_under_the_base(port):
    status, headers, _ = request(port, "GET", "/music")
    assert status in (301, 308) and headers["location"].endswith("/music/"), f"{status} {headers.get('location')}"
    status, _, page = request(port, "GET", "/music/")
    assert status == 200 and b'src="app/app.js"' in page, status
    assert request(port, "GET", "/music/app/app.js")[0] == 200
    status, _, worker = request(port, "GET", "/music/sw.js")
    assert status == 200 and b"const BASE = '/music';" in worker and b"'/music/app/app.js'" in worker
    cookie, whole = sign_in(port, "/music")
    assert "Path=/music;" in whole, whole
    status, _, body = request(port, "GET", "/music/api/me", headers={"Cookie": cookie})
    assert status == 200 and json.loads(body)["user"]["name"] == USER, status
    share = subsonic(port, "/music", "createShare", [("id", "tr-1")])
    url = share["shares"]["share"][0]["url"]
    assert url.startswith(f"http://127.0.0.1:{port}/music/share/"), url
    status, _, html = request(port, "GET", urllib.parse.urlparse(url).path)
    assert status == 200 and b'src="/music/share/' in html, status


def subpath_mode():
    port = free_port()
    config = nginx(f"""upstream shelf {{ server 127.0.0.1:{SHELF_PORT}; keepalive 16; }}
  server {{ listen 127.0.0.1:{port}; location /music/ {{ proxy_pass http://shelf; proxy_http_version 1.1;
    proxy_set_header Connection ""; {forwarding()} }} }}""")
    proxy = Proxy("nginx", config, [port])
    port = proxy.ports[0]
    try:
        check("nginx at /music/: the page, sign-in, cookie and links under the base", the_page_lives_under_the_base, port)
        through_the_proxy("nginx at /music/", port, "/music")
        check("nginx at /music/: 200 clients, none refused", many_clients, port, "/music")
        if WEB:
            web = subprocess.run(WEB[:1] + [WEB[1], "proxy", f"http://127.0.0.1:{port}/music"] + WEB[2:], capture_output=True, text=True)
            print(web.stdout, flush=True)
            if web.returncode != 0:
                failures.append("the page through nginx at /music/")
                print(f"FAIL the page through nginx at /music/: {web.stderr[-3000:]}", flush=True)
            else:
                print("ok   the page through nginx at /music/", flush=True)
    finally:
        proxy.stop()
    if not os.path.exists("/usr/bin/caddy"):
        print("skip caddy: not installed (make deps-test)", flush=True)
        return
    port = free_port()
    config = f"""{{
  admin off
  auto_https off
  storage file_system @DIR@/storage
}}
http://127.0.0.1:{port} {{
  handle_path /music/* {{
    reverse_proxy 127.0.0.1:{SHELF_PORT}
  }}
  redir /music /music/ 308
}}
"""
    proxy = Proxy("caddy", config, [port])
    port = proxy.ports[0]
    try:
        check("caddy handle_path /music/*: the page, sign-in, cookie and links under the base", the_page_lives_under_the_base, port)
        through_the_proxy("caddy handle_path /music/*", port, "/music")
        check("caddy handle_path /music/*: 200 clients, none refused", many_clients, port, "/music")
    finally:
        proxy.stop()


if __name__ == "__main__":
    (root_mode if MODE == "root" else subpath_mode)()
    print(f"{'FAILED: ' + ', '.join(failures) if failures else 'all passed'}", flush=True)
    sys.exit(1 if failures else 0)
