import Foundation
import Shelf
import ShelfCore

/// One call as a handler sees it: its parameters, the signed-in user and the answer format.
struct SubsonicCall: Sendable {
    let parameters: SubsonicParameters
    /// Nil only for the endpoints that answer without signing in.
    let user: User?
    let http: HTTPRequest
    /// The answer's format.
    let format: SubsonicFormat

    /// The signed-in user (every endpoint but getOpenSubsonicExtensions has one).
    var signedIn: User {
        get throws(SubsonicError) {
            guard let user else { throw SubsonicError(10, "this call needs credentials: u with p or t and s, or apiKey") }
            return user
        }
    }
}

/// The OpenSubsonic API under `/rest/`: each endpoint as `/rest/NAME` and `/rest/NAME.view`, by
/// GET or by POST with a form body, answered in XML, JSON or JSONP by the typed models of
/// `SubsonicModels.swift`. Every endpoint name is in `registry`; handlers live in one file per
/// section of the spec (`SubsonicAPI+Browsing.swift`, …) and only call the engine's public API.
final class SubsonicAPI: Sendable {
    let context: ServerContext
    private let report: @Sendable (String) -> Void
    /// The trusted proxy's sign-in, for the web page's own calls (apps use keys or passwords).
    private let headerSignIn: HeaderSignIn?
    var cursors: SubsonicCursors { context.subsonicCursors }
    /// What each user is playing now.
    let nowPlaying = SubsonicNowPlaying()
    /// Each user's current listen, so a play is counted once (reportPlayback and scrobble).
    let listens = SubsonicListens()
    /// Rendered artist indexes, per library state.
    let indexCache = SubsonicIndexCache()
    /// getAlphabetIndex's sections of the album lists walked by album artist, per list and library state.
    let albumIndexCache = Locked<[String: (token: ChangeToken, sections: [SectionInfo])]>([:])

    /// Whether users may make share links (`shelf serve --sharing`; changed by a reload).
    var sharing: Bool { context.sharing.withLock { $0 } }

    /// The API over `context`; `report` receives the details of internal errors.
    init(context: ServerContext, headerSignIn: HeaderSignIn? = nil, report: @escaping @Sendable (String) -> Void) {
        self.headerSignIn = headerSignIn
        self.context = context
        self.report = report
    }

    /// Answers one `/rest/…` request; never throws: every failure is a Subsonic error response.
    func respond(_ request: HTTPRequest) async -> HTTPResponse {
        var name = String(request.path.dropFirst("/rest/".count))
        if name.hasSuffix(".view") { name.removeLast(5) }
        var pairs = request.query
        var format = SubsonicFormat.parse(request.queryValue("f"), callback: request.queryValue("callback")) ?? .xml
        do {
            guard ["GET", "HEAD", "POST"].contains(request.method) else {
                throw SubsonicError(0, "\(request.method) is not allowed; use GET or POST", status: 405)
            }
            if request.method == "POST", !request.body.isEmpty {
                let type = request.headers["content-type"]?.lowercased() ?? ""
                // getTranscodeDecision's body is the client's JSON ClientInfo, which its handler reads.
                if !(name == "getTranscodeDecision" && type.hasPrefix("application/json")) {
                    guard type.hasPrefix("application/x-www-form-urlencoded") else {
                        throw SubsonicError(0, "a POST body must be application/x-www-form-urlencoded (formPost)")
                    }
                    do {
                        pairs += try HTTPRequest.parseForm(String(decoding: request.body, as: UTF8.self), what: "form body")
                    } catch {
                        throw SubsonicError(0, error.message)
                    }
                }
            }
            let parameters = SubsonicParameters(pairs: pairs)
            let f = parameters.value("f")
            guard let parsed = SubsonicFormat.parse(f, callback: parameters.value("callback")) else {
                format = .xml
                throw f == "jsonp"
                    ? SubsonicError(0, "jsonp needs callback, a JavaScript name of letters, digits, _, . and $")
                    : SubsonicError(0, "f expects xml, json or jsonp, got '\(f ?? "")'")
            }
            format = parsed
            guard let endpoint = Self.registry[name] else {
                throw SubsonicError(0, "\(name.isEmpty ? "that endpoint" : name) is not an endpoint of the Subsonic API", status: 404)
            }
            let handler: Handler
            switch endpoint.policy {
            case .served(let served): handler = served
            case .notImplemented: throw SubsonicError(0, "Shelf does not implement \(name) yet", status: 501)
            case .never(let reason): throw SubsonicError(0, "Shelf will never implement \(name): \(reason)", status: 410)
            }
            let user = endpoint.access == .anyone ? nil : try await authenticate(parameters, request)
            if endpoint.access == .admin, user?.isAdmin != true { throw SubsonicError(50, "only an admin may call \(name)") }
            // Everything the handler reads is within the user's libraries (and the musicFolderId
            // ones, where a call names some): the engine's reads default to this scope.
            // createUser and updateUser's musicFolderId is the new access list, not a narrowing.
            let scope = try await self.scope(
                of: user, ["createUser", "updateUser"].contains(name) ? SubsonicParameters(pairs: []) : parameters,
                page: request.headers[SessionAuthenticator.libraryHeader])
            let older = SubsonicRenderer.isOlder(parameters.value("v"))
            return try await SubsonicRenderer.$olderClient.withValue(older) {
                let reply = try await LibraryScope.$current.withValue(scope) {
                    try await handler(self, SubsonicCall(parameters: parameters, user: user, http: request, format: format))
                }
                switch reply {
                case .binary(let response): return response
                case .body(let body): return SubsonicRenderer.response(format: format, capacity: 16 * 1024, body)
                }
            }
        } catch {
            return failure(error, format: format, request: request, endpoint: name)
        }
    }

    /// The failed envelope of any error; internal details go to the log only.
    func failure(_ error: any Error, format: SubsonicFormat, request: HTTPRequest, endpoint: String) -> HTTPResponse {
        let failure: SubsonicError
        switch error {
        case let error as SubsonicError: failure = error
        case let error as HTTPError:
            failure = SubsonicError(error.status == 404 ? 70 : error.status == 403 ? 50 : 0, error.message, status: error.status == 429 ? 429 : 200)
        case let error as any ClassifiedError:
            failure = Self.subsonicError(for: error) { report("subsonic: library error on \(endpoint): \($0)") }
        default:
            report("subsonic: internal error on \(endpoint): \(error)")
            failure = SubsonicError(0, "the server failed to answer; its log has the details")
        }
        return SubsonicRenderer.failure(failure, format: format)
    }

    /// The Subsonic error of an engine error, by its kind: one exhaustive switch. The spec has
    /// codes for "not found" (70) and "not authorized" (50) only; the rest are the generic 0,
    /// with the reason where it helps the user and the log where it is Shelf's own failure.
    static func subsonicError(for error: any ClassifiedError, report: (any ClassifiedError) -> Void) -> SubsonicError {
        switch error.kind {
        case .notFound: return SubsonicError(70, error.description)
        case .forbidden: return SubsonicError(50, error.description)
        case .invalid, .conflict, .expired, .full, .damaged: return SubsonicError(0, error.description)
        case .busy: return SubsonicError(0, "the library is busy; try again")
        case .unavailable, .internal:
            report(error)
            return SubsonicError(0, "the library failed to answer; the server's log has the details")
        }
    }

    // MARK: Authentication

    /// The user of `u`+`p`, `u`+`t`+`s`, `apiKey` or the web page's session; failures are counted per address by the
    /// same throttle as `/api/` sign-ins.
    func authenticate(_ parameters: SubsonicParameters, _ request: HTTPRequest) async throws -> User {
        let address = request.remoteAddress
        if let key = parameters.value("apiKey") {
            if ["u", "p", "t", "s"].contains(where: parameters.has) {
                throw SubsonicError(43, "apiKey cannot be combined with u, p, t or s")
            }
            let found = try await context.throttle.judge(address) { try await context.library.user(forAPIKey: key) }
            guard let user = found else { throw SubsonicError(44, "the API key is not valid (revoked, or never issued)") }
            try await Self.subsonicErrors { try await SessionAuthenticator.inDirectory(user, context.directory, context.library) }
            return user
        }
        // The page behind a single sign-on: the proxy's header with the page's anti-forgery header
        // (an app never sends that one).
        if !["u", "p", "t", "s"].contains(where: parameters.has), let headerSignIn,
            !(request.headers[SessionAuthenticator.csrfHeader] ?? "").isEmpty,
            let user = try await Self.subsonicErrors({ try await headerSignIn.user(for: request, library: context.library, log: report) })
        {
            return user
        }
        // The web page calls the API with its own session: the cookie, plus the anti-forgery
        // header on every call (Subsonic reads change state by GET too), so no other site can.
        if !["u", "p", "t", "s"].contains(where: parameters.has), let token = request.cookie(SessionAuthenticator.cookieName) {
            guard !(request.headers[SessionAuthenticator.csrfHeader] ?? "").isEmpty else {
                throw SubsonicError(10, "a call signed in by the session cookie must carry the \(SessionAuthenticator.csrfHeader) header")
            }
            guard let user = try await context.library.user(forSession: token) else {
                throw SubsonicError(40, "the session has ended; sign in again")
            }
            try await Self.subsonicErrors { try await SessionAuthenticator.inDirectory(user, context.directory, context.library) }
            return user
        }
        guard let name = parameters.value("u") else { throw SubsonicError.missing("u") }
        let found = try await context.throttle.judge(address) { () async throws -> User? in
            if let password = parameters.value("p") {
                // A `p` that does not decode is a wrong password too, answered with its own message.
                let clear: String
                do { clear = try Self.decodePassword(password) } catch { throw LoginThrottle.WrongCredentials(error: error) }
                if let user = try await context.library.authenticate(name: name, password: clear) { return user }
                guard let directory = context.directory else { return nil }
                return try await directory.signIn(name: name, password: clear, library: context.library, cached: true)
            } else if let token = parameters.value("t") {
                guard let salt = parameters.value("s") else { throw SubsonicError.missing("s") }
                guard let found = try await context.library.user(named: name),
                    try await context.library.subsonicTokenMatches(user: found.id, token: token, salt: salt)
                else { return nil }
                return found
            } else {
                throw SubsonicError(10, "credentials are missing: p, or t and s, with u")
            }
        }
        guard let user = found else { throw SubsonicError(40, "wrong username or password") }
        return user
    }

    /// `body`, with a refused header sign-in as Subsonic's "wrong credentials".
    static func subsonicErrors<T>(_ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch let error as HTTPError { throw SubsonicError(40, error.message) }
    }

    /// `p` as sent: clear, or `enc:` and the UTF-8 bytes in hex.
    static func decodePassword(_ text: String) throws(SubsonicError) -> String {
        guard text.hasPrefix("enc:") else { return text }
        let hex = Array(text.utf8.dropFirst(4))
        // Digits only: `UInt8(_:radix:)` also takes a sign, so "enc:+f" was a password (shelf-fuzz).
        let digits = Set("0123456789abcdefABCDEF".utf8)
        guard hex.count % 2 == 0, hex.allSatisfy(digits.contains) else { throw SubsonicError(40, "p: enc: must be followed by hex digit pairs") }
        var bytes: [UInt8] = []
        var index = 0
        while index < hex.count {
            guard let byte = UInt8(String(decoding: hex[index..<index + 2], as: UTF8.self), radix: 16) else {
                throw SubsonicError(40, "p: enc: must be followed by hex digit pairs")
            }
            bytes.append(byte)
            index += 2
        }
        guard let password = String(validating: bytes, as: UTF8.self) else { throw SubsonicError(40, "p: the enc: bytes are not UTF-8") }
        return password
    }
}
