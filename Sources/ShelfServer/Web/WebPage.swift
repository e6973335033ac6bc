import Foundation

/// The web page's files (`Web/files`, embedded in the binary by SwiftPM's `embedInCode`, so the
/// one installed `shelf` serves them with nothing beside it): `/` is the page, `/app/NAME` its
/// modules, style sheet and icon. They need no sign-in; the page signs in through `/api/session`.
struct WebPage: Sendable {
    /// One file: its bytes, its media type, and a strong ETag from its content.
    struct File: Sendable {
        let bytes: Data
        let type: String
        let etag: String
    }

    /// The files by the name they are served under.
    let files: [String: File]

    /// The policy every page response carries: nothing inline, nothing from elsewhere.
    static let contentSecurityPolicy = [
        "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data: blob:", "connect-src 'self'",
        "media-src 'self'", "font-src 'self'", "manifest-src 'self'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
    ].joined(separator: "; ")

    /// The service worker as served at `/sw.js`: `sw.js` with the shell's file list, the base path
    /// and a version from every file's ETag written in, so a changed file makes a changed worker.
    let serviceWorker: File

    /// The page as served under `basePath` (`base-path`: empty, or `/music`). The page's own links
    /// are relative, so only the service worker, which sees absolute paths, is told the base.
    init(basePath: String = "") {
        var files: [String: File] = [:]
        for (name, bytes) in WebFiles.all {
            files[name] = File(bytes: Data(bytes), type: Self.mediaType(of: name), etag: Self.etag(bytes))
        }
        self.files = files
        let shell = [basePath + "/"] + files.keys.filter { $0 != "sw.js" }.sorted().map { "\(basePath)/app/\($0)" }
        let version = Self.etag(Array(files.keys.sorted().map { files[$0]?.etag ?? "" }.joined().utf8)).filter { $0 != "\"" }
        let list = "[" + shell.map { "'\($0)'" }.joined(separator: ", ") + "]"
        let source = String(decoding: files["sw.js"]?.bytes ?? Data(), as: UTF8.self)
            .replacingOccurrences(of: "__SHELF_VERSION__", with: version)
            .replacingOccurrences(of: "__SHELF_FILES__", with: list)
            .replacingOccurrences(of: "__SHELF_BASE__", with: basePath)
        serviceWorker = File(bytes: Data(source.utf8), type: Self.mediaType(of: "sw.js"), etag: Self.etag(Array(source.utf8)))
    }

    /// The page's routes: `/`, `/app/{name}` and the service worker at `/sw.js` (at the root, so
    /// its scope is the whole page), open to anyone.
    var routes: [Route] {
        [
            Route("GET", "/", access: .anyone) { request in respond("index.html", request) },
            Route("GET", "/app/{name}", access: .anyone) { request in respond(request.parameters["name"] ?? "", request) },
            Route("GET", "/sw.js", access: .anyone) { request in respond(serviceWorker, request) },
        ]
    }

    /// A file with its type, ETag and the policy; 304 when the client's copy is current, 404 for
    /// a name that is not one of the files.
    func respond(_ name: String, _ request: RouteRequest) -> HTTPResponse {
        guard let file = files[name] else {
            return Router.errorResponse(HTTPError.notFound("the page has no file '\(name)'"))
        }
        return respond(file, request)
    }

    /// `file` with its headers, or 304 when the client's copy is current.
    func respond(_ file: File, _ request: RouteRequest) -> HTTPResponse {
        // `no-cache`: keep the file but ask each time, so a new build is picked up on the next load
        // while an unchanged file costs a 304.
        let headers = [
            ("ETag", file.etag), ("Cache-Control", "no-cache"), ("Content-Security-Policy", Self.contentSecurityPolicy),
            ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer"),
        ]
        if let match = request.http.headers["if-none-match"],
            match == "*" || match.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == file.etag })
        {
            return HTTPResponse(status: 304, headers: headers)
        }
        return HTTPResponse(status: 200, headers: [("Content-Type", file.type)] + headers, body: .data(file.bytes))
    }

    /// The media type of a file by its extension.
    static func mediaType(of name: String) -> String {
        switch name.split(separator: ".").last ?? "" {
        case "html": "text/html; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        case "json": "application/json; charset=utf-8"
        case "webmanifest": "application/manifest+json; charset=utf-8"
        default: "application/octet-stream"
        }
    }

    /// A strong ETag: FNV-1a over the bytes (a cache validator, not a security check).
    static func etag(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return "\"\(String(hash, radix: 16))-\(bytes.count)\""
    }
}
