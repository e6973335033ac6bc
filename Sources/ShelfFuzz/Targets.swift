import CFuzzDriver
import Foundation
import ShelfCore

@testable import Shelf
@testable import ShelfServer

// The fuzz targets: one per parser of outside input, each checking what must always hold of what
// it parses, not only that nothing crashes. Globals here (not in main.swift) are initialized on
// first use, so libFuzzer's own `main` (make fuzz) can reach them without main.swift running.

/// What must hold; a failure stops the process, which libFuzzer reports with the input.
func require(_ condition: @autoclosure () -> Bool, _ what: @autoclosure () -> String) {
    if !condition() {
        FileHandle.standardError.write(Data("shelf-fuzz: invariant broken: \(what())\n".utf8))
        abort()
    }
}

/// A scratch file for the parsers that read a path (one per process, rewritten per input).
let scratch = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("shelf-fuzz-\(getpid())")

func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

/// Writes `data` to the scratch file with extension `ext`, runs `body` on it, and removes it again
/// (`removeScratch` in Fuzzing.swift knows only the `m3u` and `bin` files).
func withScratch<T>(_ data: Data, _ ext: String, _ body: (URL) -> T) -> T {
    let url = scratch.appendingPathExtension(ext)
    try? data.write(to: url)
    defer { unlink(url.path) }
    return body(url)
}

/// What `body` returns, waited for on this thread: the targets are synchronous, the engine's
/// credential checks are not. (Never called on the cooperative pool, which it would block.)
func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
    let result = Locked<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let outcome: Result<T, any Error>
        do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
        result.withLock { $0 = outcome }
        done.signal()
    }
    done.wait()
    return result.withLock { $0 }!
}

// MARK: forwarded

/// The `forwarded` target's socket peers, by the first byte's low three bits: four trusted proxies
/// (an IPv4-mapped IPv6 one among them), then four strangers.
let forwardingPeers = ["10.0.0.1", "::1", "::ffff:10.9.8.7", "fd00::17", "192.0.2.7", "2001:db8::5", "::ffff:192.0.2.8", "127.0.0.1"]
/// The `trusted-proxies` the first four peers fall in.
let forwardingProxies = TrustedProxies(["10.0.0.0/8", "::1", "fd00::/8"].map { IPNetwork($0)! })
/// The headers the `forwarded` target's lines fill, in order.
let forwardingHeaders = ["forwarded", "x-forwarded-for", "x-forwarded-proto", "x-forwarded-host", "x-real-ip", "host"]
/// The client address a trusted proxy appends in the `forwarded` target's checks (no proxy's).
let appendedClient = "198.51.100.23"

// MARK: authorization

/// A library with one user, an API key and a session: what the `authorization` target's
/// credentials are checked against.
struct FuzzCredentials: Sendable {
    let authenticator: SessionAuthenticator
    let user: UserID
    let key: String
    let session: String
}

/// The credentials, made on first use in a library beside the scratch file (removed at exit).
/// The throttle forgets each failure at once (a zero window), so wrong keys never turn into 429s
/// and every input is judged alike.
let credentials: FuzzCredentials = {
    let directory = scratch.appendingPathExtension("library")
    try? FileManager.default.removeItem(at: directory)
    atexit { try? FileManager.default.removeItem(at: scratch.appendingPathExtension("library")) }
    let library = Library(directory: directory, configuration: Library.Configuration(readerCount: 1, buildsMirrorInBackground: false))
    let made = blocking { () async throws -> (UserID, String, String) in
        let user = try await library.addUser(name: "fuzz", password: "fuzz-password", admin: true)
        let key = try await library.createAPIKey(for: user.id).key
        let session = try await library.createSession(user: user.id)
        return (user.id, key, session)
    }
    guard case .success(let (user, key, session)) = made else {
        FileHandle.standardError.write(Data("shelf-fuzz: cannot make the credentials' library: \(made)\n".utf8))
        abort()
    }
    let throttle = LoginThrottle(limit: 1_000, window: 0)
    return FuzzCredentials(authenticator: SessionAuthenticator(library: library, throttle: throttle), user: user, key: key, session: session)
}()

/// How a credential check ended.
enum FuzzSignIn: Equatable {
    /// No credentials: nobody is signed in.
    case nobody
    case user(UserID)
    /// Refused with this HTTP status.
    case refused(Int)
    /// Anything but an `HTTPError` (the store failing).
    case failed(String)
}

/// The native API's check of `request`'s credentials (`SessionAuthenticator.user(for:)`).
func signIn(_ request: HTTPRequest) -> FuzzSignIn {
    switch blocking({ try await credentials.authenticator.user(for: request) }) {
    case .success(let user?): return .user(user.id)
    case .success(nil): return .nobody
    case .failure(let error as HTTPError): return .refused(error.status)
    case .failure(let error): return .failed("\(error)")
    }
}

/// Bytes as lower-case hex digits.
func hex<S: Sequence<UInt8>>(_ bytes: S) -> String {
    let digits = Array("0123456789abcdef")
    return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
}

// MARK: if-none-match

/// A picture's ID for the `if-none-match` target's picture ETags (any fixed one).
let fuzzArtwork = ArtworkID(UUID(uuidString: "0E2F3C4D-5A6B-4C7D-8E9F-A0B1C2D3E4F5")!)
/// The web page, whose files answer `If-None-Match` by their own copy of the rule.
let webPage = WebPage()
/// A responder for track files; its library is never opened (`file(_:request:)` of a source needs none).
let streamResponder = StreamResponder(library: Library(directory: scratch.appendingPathExtension("unopened")))

// MARK: tags

/// The extensions the `tags` target names its file with, by the first byte (TagLib picks the
/// format by the extension): ASCII `0`…`7` pick them in this order.
let tagExtensions = ["mp3", "flac", "ogg", "opus", "m4a", "wav", "aiff", "wv"]

/// `TagFile.read` (audio required) or `TagFile.readTags` as a value that compares.
func tagResult(_ url: URL, requireAudio: Bool) -> Result<AudioFileTags, TagError> {
    do throws(TagError) {
        if requireAudio { return .success(try TagFile.read(url)) }
        return .success(try TagFile.readTags(url))
    } catch {
        return .failure(error)
    }
}

// MARK: import-from

/// Times a listen can have: from 1900 to the last second of a four-digit year (UTC). Nobody
/// scrobbled before, and no export format writes a later date.
let plausibleListenTimes = -2_208_988_800.0..<253_402_300_800.0

// MARK: filter

/// `filter` with every text replaced by as many `x`s as its folded form has Unicode scalars, and
/// every number by 0: what the compiled SQL's shape may depend on is kept (which bounds are given;
/// of a contains-text, whether its folded form is empty, and whether it is long enough for the
/// trigram index, `MirrorValues.indexable`), while every value itself is gone. Flags stay: a
/// `replayGain:no` or `missing:yes` is a different statement, not a different value.
func shaped(_ filter: Filter) -> Filter {
    func placeholder(_ text: String) -> String { String(repeating: "x", count: Filter.fold(text).unicodeScalars.count) }
    func placeholders(_ match: TextMatch) -> TextMatch {
        switch match {
        case .equals(let text): .equals(placeholder(text))
        case .contains(let text): .contains(placeholder(text))
        case .prefix(let text): .prefix(placeholder(text))
        }
    }
    switch filter {
    case .all, .flag, .missingText, .missingNumber: return filter
    case .text(let field, let match): return .text(field, placeholders(match))
    case .range(let field, let lower, let upper): return .range(field, lower: lower.map { _ in 0 }, upper: upper.map { _ in 0 })
    case .anyText(let text): return .anyText(placeholder(text))
    case .and(let filters): return .and(filters.map(shaped))
    case .or(let filters): return .or(filters.map(shaped))
    case .not(let inner): return .not(shaped(inner))
    }
}

let targets: [String: @Sendable (Data) -> Void] = [
    // The filter language: parsing is a function of the text; a filter survives the JSON a smart
    // playlist stores it as; and its SQL on the mirror (`MirrorFilter.compile`, no connection)
    // binds every value: the same filter with other values of the same folded length compiles
    // to the same statement, with one argument per `?`.
    "filter": { data in
        let input = text(data)
        let first = try? FilterParser.parse(input)
        let second = try? FilterParser.parse(input)
        require(first == second, "the same text parsed to two filters")
        guard let filter = first else { return }
        let rules = SmartRules(.filter(filter))
        let json = try? rules.json()
        require(json != nil, "the filter of '\(input)' cannot be stored as JSON (a bound that is not finite?)")
        require(json.flatMap { try? SmartRules(json: $0) } == rules, "the filter of '\(input)' does not survive its JSON \(json ?? "")")
        let (sql, arguments) = MirrorFilter.compile(filter, db: nil)
        let (shape, shapeArguments) = MirrorFilter.compile(shaped(filter), db: nil)
        require(sql == shape, "the SQL of '\(input)' depends on its values:\n\(sql)\n\(shape)")
        require(arguments.count == shapeArguments.count, "'\(input)' binds \(arguments.count) values, its shape \(shapeArguments.count)")
        require(sql.filter { $0 == "?" }.count == arguments.count, "'\(input)': \(arguments.count) arguments for \(sql)")
    },
    "smart-rule": { data in
        _ = try? SmartRules.parseCondition(text(data))
        _ = try? SmartRules(json: text(data))
    },
    // A cursor that decodes encodes to the same cursor, and its encoding decodes again.
    "cursor": { data in
        guard let cursor = PageCursor(text(data)) else { return }
        require(PageCursor(cursor.description) == cursor, "cursor \(cursor.description) does not decode to itself")
    },
    "token": { data in
        guard let token = ChangeToken(text(data)) else { return }
        require(ChangeToken(token.description) == token, "token \(token.description) does not decode to itself")
    },
    // A request target and a form body: every pair named, nothing invented.
    "form": { data in
        let input = text(data)
        if let pairs = try? HTTPRequest.parseForm(input) {
            require(pairs.count <= input.utf8.count + 1, "more pairs than bytes")
        }
        _ = try? HTTPRequest.parseTarget("/x?" + input)
    },
    // A Range header against a file of the first two bytes' size: a part lies inside the file.
    "range": { data in
        let size = UInt64(data.prefix(2).reduce(0) { $0 << 8 | Int($1) })
        switch StreamResponder.range(text(data.dropFirst(2)), size: size) {
        case .partial(let start, let end): require(start <= end && end < size, "range \(start)-\(end) outside \(size) bytes")
        case .whole, .unsatisfiable: break
        }
    },
    "cookie": { data in
        let request = HTTPRequest(method: "GET", path: "/", query: [], headers: ["cookie": text(data)], body: Data())
        if let value = request.cookie("shelf_session") { require(!value.contains(";"), "a cookie value holds ';'") }
    },
    "network": { data in
        guard let network = IPNetwork(text(data)) else { return }
        require(IPNetwork(network.description) != nil, "network \(network.description) does not parse again")
    },
    "config": { data in
        _ = try? ServerConfig.parse(text(data), file: "fuzz.toml")
    },
    // A CUE sheet: tracks in order of number, each starting at or after the one before in its file.
    "cue": { data in
        guard let sheet = try? CueSheet.parse(data, name: "fuzz.cue") else { return }
        for (a, b) in zip(sheet.tracks, sheet.tracks.dropFirst()) where a.file == b.file {
            require(a.start <= b.start, "track \(b.number) starts before track \(a.number)")
        }
        for track in sheet.tracks { require(track.start >= 0 && track.start.isFinite, "track \(track.number) starts at \(track.start)") }
    },
    // LRC and enhanced LRC: times are never negative, lines keep their order of time.
    "lrc": { data in
        let input = text(data)
        if let lines = SubsonicAPI.syncedLines(input) {
            for (time, _) in lines { require(time >= 0, "a line at \(time) ms") }
        }
        _ = SubsonicAPI.lrcHeader(input)
        for line in input.split(separator: "\n").prefix(50) {
            let timed = SubsonicAPI.wordTimings(String(line))
            for word in timed.words { require(word.start >= 0, "a word at \(word.start) ms") }
        }
    },
    // Text in any of the encodings Shelf reads: UTF-8 comes back unchanged.
    "legacy-text": { data in
        guard let decoded = LegacyText.decode(data) else { return }
        if let utf8 = String(validating: data, as: UTF8.self), !data.starts(with: [0xEF, 0xBB, 0xBF]), decoded.encoding == .utf8 {
            require(decoded.text == utf8, "UTF-8 text changed")
        }
    },
    "m3u": { data in
        try? data.write(to: scratch.appendingPathExtension("m3u"))
        if let playlist = try? PlaylistFile.read(scratch.appendingPathExtension("m3u").path) {
            for entry in playlist.entries { require(!entry.text.isEmpty && !entry.text.hasPrefix("#"), "entry '\(entry.text)'") }
        }
    },
    "podcast": { data in
        // Bounded whatever the feed says: at most `itemLimit` items, descriptions cut at their limit.
        guard let feed = try? PodcastFeed.parse(data) else { return }
        require(feed.items.count <= PodcastFeed.itemLimit, "\(feed.items.count) items")
        for item in feed.items {
            require(item.description.utf8.count <= PodcastFeed.descriptionLimit * 4, "a description of \(item.description.utf8.count) bytes")
        }
    },
    // The layout walkers (WAV/RF64, AIFF, MP4, Ogg, Matroska, DSF/DSDIFF) over bytes in memory.
    "layout": { data in
        _ = try? AudioLayout.detect(size: Int64(data.count)) { offset, count in
            guard offset >= 0, offset < Int64(data.count), count >= 0 else { return Data() }
            return data.subdata(in: Int(offset)..<min(data.count, Int(offset) + count))
        }
    },
    "identity": { data in
        try? data.write(to: scratch.appendingPathExtension("bin"))
        if let identity = try? AudioIdentity.identities(scratch.appendingPathExtension("bin")) {
            // A scheme and a digest (`v1:…`, `flac-md5:…`), never empty or with spaces.
            require(identity.current.contains(":") && !identity.current.contains(" "), "identity \(identity.current)")
        }
    },
    // Pictures within small limits: a decode never yields more pixels than the limits allow.
    "image": { data in
        let limits = ImageLimits(maxSide: 2_048, maxPixels: 1 << 20)
        if let image = try? ImageCodec.decode(data, maxPixelSize: 64, limits: limits) {
            require(image.width > 0 && image.height > 0 && image.width <= 2_048 && image.height <= 2_048, "\(image.width)×\(image.height)")
        }
        _ = try? ImageCodec.dimensions(of: data)
    },
    // Subsonic parameters: an ID, numbers and flags from any text.
    "subsonic-params": { data in
        let pairs = (try? HTTPRequest.parseForm(text(data))) ?? []
        let parameters = SubsonicParameters(pairs: pairs)
        _ = try? parameters.id()
        _ = try? parameters.int("size", in: 0...500)
        _ = try? parameters.bool("public")
        _ = SubsonicRenderer.isOlder(parameters.value("v"))
    },
    // Forwarding headers (`TrustedProxies.client`). The first byte picks the socket's peer
    // (`forwardingPeers`, low three bits), TLS (0x08) and no trusted proxies at all (0x40); the
    // lines after it are Forwarded, X-Forwarded-For, -Proto, -Host, X-Real-IP and Host (an empty
    // line: no such header). What must hold: the same headers give the same client; X-Real-IP is
    // never believed; a stranger's headers are ignored; behind a trusted proxy the address comes
    // from the forwarding headers and is the right-most one no trusted proxy stands for, so what
    // the client wrote to the left of the proxy's own hop never becomes its address. (The address
    // need not be an IP: `unknown` and `_hidden` are RFC 7239's, kept as sent.)
    "forwarded": { data in
        guard let first = data.first else { return }
        let peer = forwardingPeers[Int(first & 7)]
        let isTLS = first & 0x08 != 0
        let proxies = first & 0x40 != 0 ? TrustedProxies() : forwardingProxies
        let lines = text(data.dropFirst()).split(separator: "\n", omittingEmptySubsequences: false)
        var headers: [String: String] = [:]
        for (name, value) in zip(forwardingHeaders, lines) where !value.isEmpty { headers[name] = String(value) }
        func client(_ headers: [String: String]) -> ForwardedClient { proxies.client(peer: peer, headers: headers, isTLS: isTLS) }
        let found = client(headers)
        require(client(headers) == found, "the same headers gave two clients")
        var withoutRealIP = headers
        withoutRealIP["x-real-ip"] = nil
        require(client(withoutRealIP) == found, "X-Real-IP changed the client to \(found)")
        guard proxies.trusts(peer) else {
            let direct = ForwardedClient(address: peer, scheme: isTLS ? "https" : "http", host: headers["host"], proxied: false)
            require(found == direct, "\(peer) is no trusted proxy, yet its headers made \(found)")
            return
        }
        require(found.proxied && ["http", "https"].contains(found.scheme), "behind a trusted proxy: \(found)")
        let written = Set((headers["forwarded", default: ""] + headers["x-forwarded-for", default: ""]).unicodeScalars)
        require(found.address == peer || found.address.unicodeScalars.allSatisfy(written.contains), "address \(found.address) is in no forwarding header")
        // The proxy appends the address it saw (a stranger's) as a hop of its own: that is the client.
        let elements = TrustedProxies.forwardedElements(headers["forwarded"] ?? "")
        var hop = headers
        hop["forwarded"] = (headers["forwarded"].map { $0 + ", " } ?? "") + "for=" + appendedClient
        require(client(hop).address == appendedClient, "Forwarded '\(hop["forwarded"]!)' gave \(client(hop).address), not the appended \(appendedClient)")
        if elements.isEmpty {
            hop = headers
            hop["x-forwarded-for"] = (headers["x-forwarded-for"].map { $0 + ", " } ?? "") + appendedClient
            require(
                client(hop).address == appendedClient,
                "X-Forwarded-For '\(hop["x-forwarded-for"]!)' gave \(client(hop).address), not the appended \(appendedClient)")
        }
        // An address no trusted proxy stands for: whatever the client writes further left is no matter.
        if !proxies.trusts(found.address) {
            var forged = headers
            if elements.isEmpty {
                forged["x-forwarded-for"] = "203.0.113.9, " + headers["x-forwarded-for", default: ""]
            } else {
                forged["forwarded"] = "for=203.0.113.9, " + headers["forwarded", default: ""]
            }
            require(client(forged) == found, "a hop written left of \(found.address) changed the client to \(client(forged))")
        }
    },
    // Credentials: the native API's `Authorization` (Bearer API key) and session cookie through
    // `SessionAuthenticator.user(for:)` against a real library, and Subsonic's `p` (clear or
    // `enc:` hex, `SubsonicAPI.decodePassword`). The first byte's bits: 1 an Authorization header
    // (the first line), 2 a Cookie header (the rest), 4 POST instead of GET, 8 the anti-forgery
    // header; `KEY` and `SESSION` in the text stand for the real API key and session token. What
    // must hold: the same request is judged alike; an Authorization header is never ignored (it
    // signs in or is refused with 401, whatever cookie comes along) and signs in only as exactly
    // `Bearer <key>`; the cookie signs in exactly when it holds the session (403 on a POST without
    // the anti-forgery header); a decoded `enc:` password is exactly the bytes its hex spells.
    "authorization": { data in
        guard let flags = data.first else { return }
        let lines = text(data.dropFirst()).split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        if let password = try? SubsonicAPI.decodePassword(lines[0]) {
            if lines[0].hasPrefix("enc:") {
                let digits = String(decoding: lines[0].utf8.dropFirst(4), as: UTF8.self).lowercased()
                require(hex(password.utf8) == digits, "'\(lines[0])' decoded to '\(password)', which is not the bytes its hex spells")
            } else {
                require(password == lines[0], "clear password '\(lines[0])' came back as '\(password)'")
            }
        }
        func fill(_ line: String) -> String {
            line.replacingOccurrences(of: "SESSION", with: credentials.session).replacingOccurrences(of: "KEY", with: credentials.key)
        }
        let authorization = flags & 1 != 0 ? fill(lines[0]) : nil
        var headers: [String: String] = [:]
        headers["authorization"] = authorization
        if flags & 2 != 0 { headers["cookie"] = fill(lines.count > 1 ? lines[1] : "") }
        if flags & 8 != 0 { headers[SessionAuthenticator.csrfHeader] = "1" }
        let request = HTTPRequest(method: flags & 4 != 0 ? "POST" : "GET", path: "/api/tracks", headers: headers)
        let outcome = signIn(request)
        require(signIn(request) == outcome, "the same request was judged \(outcome) and then otherwise")
        if case .failed(let why) = outcome { require(false, "the credential check failed: \(why)") }
        if case .user(let id) = outcome { require(id == credentials.user, "signed in as user \(id)") }
        // Byte comparisons: the store looks credentials up by the SHA-256 of their UTF-8.
        if let authorization {
            require(outcome != .nobody, "Authorization '\(authorization)' was ignored")
            if case .refused(let status) = outcome { require(status == 401, "Authorization '\(authorization)' refused with \(status)") }
            if ["Bearer ", "bearer "].contains(where: { authorization.utf8.elementsEqual(($0 + credentials.key).utf8) }) {
                require(outcome == .user(credentials.user), "the API key itself was \(outcome)")
            }
            if case .user = outcome {
                let rest = authorization.replacingOccurrences(of: credentials.key, with: "").lowercased().trimmingCharacters(in: .whitespaces)
                require(authorization.contains(credentials.key) && rest == "bearer", "Authorization '\(authorization)' signed in")
            }
        } else {
            let token = request.cookie(SessionAuthenticator.cookieName)
            let forgeryProof = request.method == "GET" || flags & 8 != 0
            switch token {
            case nil: require(outcome == .nobody, "no session cookie, yet \(outcome)")
            case let token? where token.utf8.elementsEqual(credentials.session.utf8):
                let expected: FuzzSignIn = forgeryProof ? .user(credentials.user) : .refused(403)
                require(outcome == expected, "the session itself was \(outcome), not \(expected)")
            case let token?: require(outcome == .refused(401), "session cookie '\(token)' was \(outcome)")
            }
        }
    },
    // ETags and `If-None-Match` (the first line; `ETAG` in it stands for the ETag at hand; a
    // second line is a Range header): a picture's and a page file's ETag by the shared rule
    // (`ArtworkResponder.matches`, which the page's files copy), and a track file's
    // (`StreamResponder.file`, over the input written to a file). What must hold: a header that
    // is the ETag, or `*`, matches, and so does a list starting with it; a match names the ETag;
    // the page answers 304 exactly on a match; a track file answers 304 to its exact ETag without
    // a Range, and only when the shared rule matches too.
    "if-none-match": { data in
        let lines = text(data).split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let range = lines.count > 1 ? lines[1] : nil
        let format: ArtworkResponder.Format = data.count % 2 == 0 ? .jpeg : .png
        for etag in [ArtworkResponder.etag(fuzzArtwork, size: ArtworkResponder.step(for: data.count), format: format), WebPage.etag(Array(data))] {
            let header = lines[0].replacingOccurrences(of: "ETAG", with: etag)
            let matched = ArtworkResponder.matches(header, etag)
            require(ArtworkResponder.matches(header, etag) == matched, "If-None-Match '\(header)' matched \(etag) once only")
            require(ArtworkResponder.matches(etag, etag) && ArtworkResponder.matches("*", etag), "\(etag) or * does not match \(etag)")
            require(!ArtworkResponder.matches(nil, etag), "no If-None-Match matched")
            require(ArtworkResponder.matches(etag + ", " + header, etag), "a list starting with \(etag) does not match it")
            if matched { require(header == "*" || header.contains(etag), "If-None-Match '\(header)' matched \(etag)") }
            let request = RouteRequest(http: HTTPRequest(method: "GET", path: "/", headers: ["if-none-match": header]), parameters: [:], user: nil)
            let page = webPage.respond(WebPage.File(bytes: data, type: "text/plain", etag: etag), request)
            require(page.status == (matched ? 304 : 200), "the page answered \(page.status) to If-None-Match '\(header)' for \(etag)")
            require(page.headers.contains { $0.0 == "ETag" && $0.1 == etag }, "the page's answer names no ETag \(etag)")
        }
        withScratch(data, "etag") { url in
            let source = StreamResponder.Source(path: url.path, codec: nil, duration: nil, name: "7")
            func answer(_ headers: [String: String]) -> HTTPResponse? {
                guard let response = try? streamResponder.file(source, request: HTTPRequest(method: "GET", path: "/", headers: headers)) else { return nil }
                if case .file(let descriptor, _, _) = response.body { close(descriptor) }
                return response
            }
            let whole = answer([:])
            guard let etag = whole?.headers.first(where: { $0.0 == "ETag" })?.1 else {
                require(false, "a track file answered \(whole?.status ?? 0) without an ETag")
                return
            }
            let header = lines[0].replacingOccurrences(of: "ETAG", with: etag)
            var headers = ["if-none-match": header]
            headers["range"] = range
            guard let response = answer(headers) else { return }  // 416: a range outside the file
            require([200, 206, 304].contains(response.status), "a track file answered \(response.status)")
            if response.status == 304 {
                require(range == nil && ArtworkResponder.matches(header, etag), "a track file answered 304 to '\(header)' for \(etag)")
            }
            if header == etag && range == nil { require(response.status == 304, "a track file answered \(response.status) to its own ETag") }
        }
    },
    // A file's tags through TagLib (`TagFile.read`), the file named by the first byte
    // (`tagExtensions`). What must hold: reading twice gives the same; a file read with its
    // audio reads the same without (`readTags`), with a sample rate and channels; the track made
    // of the tags (`AudioFileTags.reading`) comes out the same twice, and holds only numbers an
    // edit could set (whole numbers ≥ 0, `MetadataChanges.problem`), positive audio figures, a
    // tempo the details allow, and ReplayGain peaks in 0..<100.
    "tags": { data in
        guard let first = data.first else { return }
        withScratch(data.dropFirst(), tagExtensions[Int(first) % tagExtensions.count]) { url in
            let read = tagResult(url, requireAudio: true)
            require(tagResult(url, requireAudio: true) == read, "reading \(url.lastPathComponent) twice gave two answers")
            guard case .success(let tags) = read else { return }
            require(tagResult(url, requireAudio: false) == read, "\(url.lastPathComponent) reads otherwise without its audio required")
            require(tags.sampleRate > 0 && tags.channels > 0, "audio of \(tags.sampleRate) Hz, \(tags.channels) channels")
            require(tags.pictureMimeType == nil || tags.picture != nil, "a picture type without a picture")
            let (track, problems) = tags.reading(path: url.path, separators: .standard)
            var again = tags.reading(path: url.path, separators: .standard)
            again.track.dateAdded = track.dateAdded
            again.track.dateModified = track.dateModified
            require(again.track == track && again.problems == problems, "the tags made two tracks")
            let numbers = [
                ("year", track.year), ("track number", track.trackNumber), ("track count", track.trackCount),
                ("disc number", track.discNumber), ("disc count", track.discCount),
            ]
            for (name, value) in numbers { if let value { require(value >= 0, "\(name) \(value)") } }
            if let duration = track.duration { require(duration > 0 && duration.isFinite, "duration \(duration)") }
            for value in [track.bitrate, track.sampleRate, track.channels] { if let value { require(value > 0, "an audio figure of \(value)") } }
            if let bpm = track.details.bpm { require((0...10_000).contains(bpm), "bpm \(bpm)") }
            if let gain = track.details.replayGain {
                for peak in [gain.trackPeak, gain.albumPeak].compactMap({ $0 }) { require(peak >= 0 && peak < 100, "ReplayGain peak \(peak)") }
                for value in [gain.trackGain, gain.albumGain].compactMap({ $0 }) { require(value.isFinite, "ReplayGain gain \(value)") }
            }
        }
    },
    // The export files `shelf import-from` reads, by the first byte (modulo 4): a ListenBrainz
    // export (JSON lines or an array) and a Last.fm CSV (`ForeignReaders.read`, through
    // `ListenChunks`), an Apple Music / iTunes Library.xml (`ITunesReader`), and the config.yaml
    // beside a beets database (`BeetsReader.directory`). What must hold: reading twice gives the
    // same; every listen lies between 1900 and the year 9999; a CSV gives at most a listen per row
    // and its fields hold no more than the text; ratings are 1…100; beets' music directory is one
    // line of text.
    "import-from": { data in
        guard let first = data.first else { return }
        let body = data.dropFirst()
        switch first % 4 {
        case 0, 1:
            let source: ForeignSource = first % 4 == 0 ? .listenbrainz : .lastfm
            withScratch(body, "export") { url in
                func listens() -> [ForeignListen]? { (try? ForeignReaders.read(source, at: url, user: nil)).map { $0.users.flatMap(\.listens) } }
                guard let found = listens() else { return }
                for listen in found {
                    let at = listen.playedAt.timeIntervalSince1970
                    require(plausibleListenTimes.contains(at), "\(source): \(listen.track.label) played at \(at) s since 1970")
                }
                let again = listens() ?? []
                let sameTracks = again.map(\.track) == found.map(\.track)
                let sameTimes = again.map(\.playedAt) == found.map(\.playedAt)
                require(sameTracks && sameTimes, "\(source): reading twice differed")
                if source == .lastfm {
                    let rows = CSV.rows(text(body))
                    require(found.count <= rows.count, "\(found.count) listens from \(rows.count) rows")
                    let scalars = rows.joined().reduce(0) { $0 + $1.unicodeScalars.count }
                    require(scalars <= text(body).unicodeScalars.count, "the CSV's fields hold more than its text")
                }
            }
        case 2:
            withScratch(body, "xml") { url in
                guard let read = try? ForeignReaders.read(.itunes, at: url, user: nil) else { return }
                require(read.users.count == 1, "\(read.users.count) users in one library")
                let tracks = read.users.flatMap(\.tracks)
                for item in tracks { if let rating = item.rating { require((1...100).contains(rating), "rating \(rating)") } }
                let again = (try? ForeignReaders.read(.itunes, at: url, user: nil))?.users ?? []
                let sameTracks = again.flatMap(\.tracks).map(\.track) == tracks.map(\.track)
                let samePlaylists = again.flatMap(\.playlists).map(\.items) == read.users.flatMap(\.playlists).map(\.items)
                require(sameTracks && samePlaylists, "the library read twice differed")
            }
        default:
            let folder = scratch.appendingPathExtension("beets")
            try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let config = folder.appendingPathComponent("config.yaml")
            try? body.write(to: config)
            defer {
                unlink(config.path)
                rmdir(folder.path)
            }
            let directory = BeetsReader.directory(besides: folder.appendingPathComponent("library.db"))
            require(BeetsReader.directory(besides: folder.appendingPathComponent("library.db")) == directory, "beets' directory read twice differed")
            if let directory {
                require(!directory.isEmpty && !directory.unicodeScalars.contains("\n"), "beets' music directory '\(directory)'")
            }
        }
    },
]
