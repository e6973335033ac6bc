import Foundation

/// A request as the router sees it: the method, the percent-decoded path and query, headers with
/// lower-case names, and the whole body (bounded by the server's limits before it gets here).
public struct HTTPRequest: Sendable {
    /// `GET`, `HEAD`, `POST`, … as the client sent it.
    public var method: String
    /// The decoded path, always starting with `/`; never holds NUL, `..` segments or bad UTF-8.
    public var path: String
    /// The decoded query parameters in the order sent (a name may repeat).
    public var query: [(name: String, value: String)]
    /// Header values by lower-case name (repeated headers joined with ", ").
    public var headers: [String: String]
    /// The request body.
    public var body: Data
    /// The client's address, for rate limits, the sign-in throttle and the log: the socket's peer,
    /// or behind a trusted proxy the address it forwarded.
    public var remoteAddress: String
    /// Whether the request came over TLS to Shelf itself.
    public var isTLS: Bool
    /// The address of the socket's other end: the client, or the trusted proxy in front of it.
    public var peerAddress: String
    /// `http` or `https` as the client reached the first hop (cookies are `Secure` over `https`).
    public var scheme: String
    /// The host (and port) the client asked for, from `Host` or a trusted proxy's header.
    public var host: String?
    /// Whether the request came through a trusted proxy (its headers were believed).
    public var proxied = false
    /// The server's `base-path` (`/music`, or empty); `path` is already without it.
    public var basePath = ""
    /// `public-url` without its trailing `/`, when set: the start of every absolute link.
    public var publicURL: String?

    /// A request from its parts; `path` and `query` are taken as already decoded.
    public init(
        method: String, path: String, query: [(name: String, value: String)] = [], headers: [String: String] = [:],
        body: Data = Data(), remoteAddress: String = "127.0.0.1", isTLS: Bool = false
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
        self.isTLS = isTLS
        peerAddress = remoteAddress
        scheme = isTLS ? "https" : "http"
        host = headers["host"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The absolute URL a client uses for `path` (which starts with `/`, below the base path):
    /// `public-url` when set, else the scheme and host the client used and the base path.
    public func absoluteURL(_ path: String) -> String {
        (publicURL ?? "\(scheme)://\(host ?? "localhost")\(basePath)") + path
    }

    /// `path` (below the base path) as the client must ask for it: with the base path in front.
    public func link(_ path: String) -> String { basePath + path }

    /// Parses the raw request target (`/a%20b?x=1&y`) into path and query; nil path pieces, bad
    /// escapes, bad UTF-8, NUL and `..` segments are `HTTPError.badRequest` naming what is wrong.
    public static func parseTarget(_ target: String) throws(HTTPError) -> (path: String, query: [(name: String, value: String)]) {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let rawPath = String(parts.first ?? "")
        guard rawPath.hasPrefix("/") else { throw .badRequest("the request path must start with '/'") }
        let path = try percentDecode(rawPath, plusIsSpace: false, what: "path")
        for segment in path.split(separator: "/", omittingEmptySubsequences: false) where segment == ".." || segment == "." {
            throw .badRequest("the path may not contain '\(segment)' segments")
        }
        var query: [(name: String, value: String)] = []
        if parts.count == 2 { query = try parseForm(String(parts[1]), what: "query") }
        return (path, query)
    }

    /// Parses `a=1&b=x%20y` (a query string or an `application/x-www-form-urlencoded` body).
    public static func parseForm(_ text: String, what: String = "form") throws(HTTPError) -> [(name: String, value: String)] {
        var pairs: [(name: String, value: String)] = []
        for piece in text.split(separator: "&", omittingEmptySubsequences: true) {
            let kv = piece.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = try percentDecode(String(kv[0]), plusIsSpace: true, what: what)
            let value = kv.count == 2 ? try percentDecode(String(kv[1]), plusIsSpace: true, what: what) : ""
            pairs.append((name, value))
        }
        return pairs
    }

    /// Decodes `%XX` escapes strictly: a broken escape, NUL or bytes that are not UTF-8 are errors.
    public static func percentDecode(_ text: String, plusIsSpace: Bool, what: String) throws(HTTPError) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = Array(text.utf8)[...]
        while let byte = iterator.popFirst() {
            switch byte {
            case UInt8(ascii: "%"):
                guard iterator.count >= 2, let high = hexValue(iterator.removeFirst()), let low = hexValue(iterator.removeFirst()) else {
                    throw .badRequest("malformed percent-encoding in the \(what)")
                }
                bytes.append(high << 4 | low)
            case UInt8(ascii: "+") where plusIsSpace: bytes.append(UInt8(ascii: " "))
            default: bytes.append(byte)
            }
        }
        if bytes.contains(0) { throw .badRequest("the \(what) contains a NUL byte") }
        guard let decoded = String(validating: bytes, as: UTF8.self) else { throw .badRequest("the \(what) is not valid UTF-8") }
        return decoded
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The last value of query parameter `name`, if sent.
    public func queryValue(_ name: String) -> String? { query.last(where: { $0.name == name })?.value }

    /// Every value of query parameter `name`, in order.
    public func queryValues(_ name: String) -> [String] { query.filter { $0.name == name }.map(\.value) }

    /// The value of the `name` cookie, if sent.
    public func cookie(_ name: String) -> String? {
        guard let header = headers["cookie"] else { return nil }
        for piece in header.split(separator: ";") {
            let kv = piece.split(separator: "=", maxSplits: 1)
            if kv.count == 2, kv[0].trimmingCharacters(in: .whitespaces) == name { return kv[1].trimmingCharacters(in: .whitespaces) }
        }
        return nil
    }
}

/// A failure that becomes an HTTP error response: its status, a machine-readable code and a
/// message for people. Every error a handler throws is turned into one of these in one place.
public struct HTTPError: Error, Sendable, CustomStringConvertible {
    /// The HTTP status (400, 401, 403, 404, 405, 413, 416, 429, 500, 501, …).
    public var status: Int
    /// The `error.code` of the JSON error body.
    public var code: String
    /// The `error.message`: names the value or parameter at fault; never SQL or a stack trace.
    public var message: String
    /// Extra headers (`Retry-After`, `Allow`, `WWW-Authenticate`).
    public var headers: [(String, String)] = []

    /// An error with its status, code and message.
    public init(status: Int, code: String, message: String, headers: [(String, String)] = []) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    public var description: String { "\(status) \(code): \(message)" }

    /// 400: the request itself is malformed.
    public static func badRequest(_ message: String, code: String = "badRequest") -> HTTPError {
        HTTPError(status: 400, code: code, message: message)
    }
    /// 401: no or wrong credentials.
    public static func unauthorized(_ message: String = "sign in first: a session cookie or an Authorization: Bearer API key") -> HTTPError {
        HTTPError(status: 401, code: "unauthorized", message: message)
    }
    /// 403: signed in, but not allowed.
    public static func forbidden(_ message: String) -> HTTPError { HTTPError(status: 403, code: "forbidden", message: message) }
    /// 404: nothing at that path or with that ID.
    public static func notFound(_ message: String) -> HTTPError { HTTPError(status: 404, code: "notFound", message: message) }
}

/// What a response sends after its headers.
public enum HTTPBody: Sendable {
    /// Bytes held in memory.
    case data(Data)
    /// `length` bytes of an open file from `offset`, sent by the server from the descriptor (it
    /// closes it), never read into memory.
    case file(descriptor: Int32, offset: UInt64, length: UInt64)
    /// Bytes produced as the response goes (server-sent events, a transcode), of unknown length.
    case stream(ByteStream)
}

/// A status, headers and a body.
public struct HTTPResponse: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// Header names and values, in order.
    public var headers: [(String, String)]
    /// What follows the headers.
    public var body: HTTPBody

    /// A response from its parts.
    public init(status: Int = 200, headers: [(String, String)] = [], body: HTTPBody = .data(Data())) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The value of header `name` (case-insensitive), if set.
    public func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }

    /// The body's size when it is known before sending.
    public var knownLength: UInt64? {
        switch body {
        case .data(let data): UInt64(data.count)
        case .file(_, _, let length): length
        case .stream: nil
        }
    }
}

/// One finished request, for the access log: everything but credentials.
public struct AccessLogEntry: Sendable {
    /// The request method.
    public var method: String
    /// The raw request target with credential parameters (`p`, `t`, `s`, `apiKey`, `password`,
    /// `token`) replaced by `***`.
    public var target: String
    /// The status sent.
    public var status: Int
    /// The body bytes sent.
    public var bytes: UInt64
    /// From the request's first byte to its last byte sent.
    public var milliseconds: Double
    /// The client's address.
    public var remoteAddress: String

    /// An entry from its parts.
    public init(method: String, target: String, status: Int, bytes: UInt64, milliseconds: Double, remoteAddress: String) {
        self.method = method
        self.target = target
        self.status = status
        self.bytes = bytes
        self.milliseconds = milliseconds
        self.remoteAddress = remoteAddress
    }

    /// The query parameters whose values never reach a log.
    public static let secretParameters: Set<String> = ["p", "t", "s", "apikey", "password", "token", "key"]

    /// `target` with secret parameter values masked.
    public static func redact(_ target: String) -> String {
        guard let mark = target.firstIndex(of: "?") else { return target }
        let pieces = target[target.index(after: mark)...].split(separator: "&", omittingEmptySubsequences: false).map { piece -> String in
            let name = piece.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
            return secretParameters.contains(name.lowercased()) ? "\(name)=***" : String(piece)
        }
        return String(target[..<mark]) + "?" + pieces.joined(separator: "&")
    }

    /// The log line: `GET /api/tracks?limit=50 200 1234 B 0.8 ms 127.0.0.1`.
    public var line: String {
        "\(method) \(Self.redact(target)) \(status) \(bytes) B \(String(format: "%.1f", milliseconds)) ms \(remoteAddress)"
    }
}

/// Bounds that keep a slow or hostile client from exhausting the server.
public struct HTTPLimits: Sendable {
    /// Bytes a connection may use for its request line and headers (libmicrohttpd's connection
    /// memory limit); beyond it the client gets 431 (or 414 for the URL alone).
    public var headerBytes: Int = 32 * 1024
    /// The longest request target accepted (414 beyond it).
    public var urlBytes: Int = 8 * 1024
    /// The largest body accepted unless a route says otherwise (413 beyond it).
    public var bodyBytes: Int = 1 << 20
    /// Connections open at once; more are refused at accept.
    public var connections: Int = 256
    /// Connections open at once from one address.
    public var connectionsPerAddress: Int = 64
    /// Seconds a connection may sit idle (no byte received or sent) before it is closed.
    public var idleSeconds: Int = 30
    /// The worker threads of libmicrohttpd's pool.
    public var threads: Int = max(2, ProcessInfo.processInfo.activeProcessorCount * 2)

    /// The defaults.
    public init() {}
}
