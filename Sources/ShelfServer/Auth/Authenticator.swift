import Foundation
import Shelf
import ShelfCore

/// The native API's credentials: the session cookie (plus the anti-forgery header on anything
/// that changes state), `Authorization: Bearer <api key>`, or a trusted proxy's `auth-header`.
public struct SessionAuthenticator: Authenticating {
    /// The session cookie's name.
    public static let cookieName = "shelf_session"
    /// The header a state-changing cookie request must carry. A cross-site form cannot set a
    /// custom header, and a cross-site script cannot send one without a CORS preflight we never allow.
    public static let csrfHeader = "x-shelf-request"

    let library: Library
    let throttle: LoginThrottle
    let headerSignIn: HeaderSignIn?
    let directory: DirectorySignIn?
    let log: @Sendable (String) -> Void

    /// Credentials checked against `library`'s users; failures counted by `throttle`; a trusted
    /// proxy's header believed when `headerSignIn` is set.
    public init(
        library: Library, throttle: LoginThrottle, headerSignIn: HeaderSignIn? = nil, directory: DirectorySignIn? = nil,
        log: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.library = library
        self.throttle = throttle
        self.headerSignIn = headerSignIn
        self.directory = directory
        self.log = log
    }

    /// The header that narrows a request to one of the user's libraries (the page's library
    /// switcher); a library the user may not see is 404, as one that does not exist.
    public static let libraryHeader = "x-shelf-library"

    /// The user's libraries, or the one `X-Shelf-Library` names among them.
    public func scope(for user: User, request: HTTPRequest) async throws -> LibraryScope {
        let scope = try await library.scope(for: user)
        guard let text = request.headers[Self.libraryHeader], !text.isEmpty, text != "all" else { return scope }
        return try await library.scope(scope, limitedTo: [text])
    }

    /// Refuses a directory user whose account the directory no longer has (their sessions end).
    static func inDirectory(_ user: User, _ directory: DirectorySignIn?, _ library: Library) async throws {
        guard let directory, try await !directory.stillAllowed(user, library: library) else { return }
        throw HTTPError.unauthorized("\(user.name)'s account is no longer in the directory; the session has ended")
    }

    /// A state-changing request signed in by something the browser sends by itself (the cookie,
    /// or the proxy's sign-in) must carry the anti-forgery header.
    static func requireForgeryHeader(_ request: HTTPRequest) throws {
        if !["GET", "HEAD", "OPTIONS"].contains(request.method), (request.headers[csrfHeader] ?? "").isEmpty {
            throw HTTPError.forbidden("a request that changes something must carry the \(csrfHeader) header (any value) with its session")
        }
    }

    public func user(for request: HTTPRequest) async throws -> User? {
        // The proxy's word comes first: it is who is at the browser now (and the `Authorization`
        // a proxy doing Basic authentication passes on is its own, not an API key).
        if let headerSignIn, let user = try await headerSignIn.user(for: request, library: library, log: log) {
            try Self.requireForgeryHeader(request)
            return user
        }
        if let authorization = request.headers["authorization"] {
            guard authorization.lowercased().hasPrefix("bearer ") else {
                throw HTTPError.unauthorized("Authorization must be 'Bearer <api key>'")
            }
            let key = String(authorization.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
            let found = try await throttle.judge(request.remoteAddress) { try await library.user(forAPIKey: key) }
            guard let user = found else { throw HTTPError.unauthorized("the API key is not valid (revoked, or never issued)") }
            try await Self.inDirectory(user, directory, library)
            return user
        }
        guard let token = request.cookie(Self.cookieName) else { return nil }
        guard let user = try await library.user(forSession: token) else {
            throw HTTPError.unauthorized("the session has ended; sign in again")
        }
        try await Self.inDirectory(user, directory, library)
        try Self.requireForgeryHeader(request)
        return user
    }

    /// The `Set-Cookie` value for a new session: for the base path only, and `Secure` when the
    /// client used https (to Shelf or to a trusted proxy).
    public static func cookie(_ token: String, for request: HTTPRequest, maxAge: Int = 30 * 86_400) -> String {
        "\(cookieName)=\(token); Path=\(request.basePath.isEmpty ? "/" : request.basePath); Max-Age=\(maxAge); HttpOnly; SameSite=Strict"
            + (request.scheme == "https" ? "; Secure" : "")
    }
}
