"""A small HTTP server for the podcast tests: serves the files of a folder on loopback, with
`{BASE}` in .xml files replaced by its own address, and a few misbehaving routes:

  /missing.xml     404
  /redirect-loop   302 to itself, for ever
  /truncated/NAME  declares NAME's whole length, sends half of it, and closes

Prints its port on the first line of stdout, then serves until killed."""
import http.server
import os
import sys
import urllib.parse


class Handler(http.server.BaseHTTPRequestHandler):
    root = "."

    def log_message(self, format, *args):
        pass

    def do_GET(self):
        path = urllib.parse.unquote(self.path.split("?", 1)[0])
        if path == "/missing.xml":
            self.send_error(404, "not here")
            return
        if path == "/redirect-loop":
            self.send_response(302)
            self.send_header("Location", "/redirect-loop")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        truncated = path.startswith("/truncated/")
        name = os.path.basename(path[len("/truncated/"):] if truncated else path)
        full = os.path.join(self.root, name)
        if not name or not os.path.isfile(full):
            self.send_error(404, "not here")
            return
        with open(full, "rb") as handle:
            body = handle.read()
        if name.endswith(".xml"):
            body = body.replace(b"{BASE}", ("http://127.0.0.1:%d" % self.server.server_port).encode())
        self.send_response(200)
        kind = {"xml": "application/rss+xml", "mp3": "audio/mpeg", "png": "image/png", "jpg": "image/jpeg"}
        self.send_header("Content-Type", kind.get(name.rsplit(".", 1)[-1], "application/octet-stream"))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if truncated:
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body)


def main():
    Handler.root = sys.argv[1]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_port, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
