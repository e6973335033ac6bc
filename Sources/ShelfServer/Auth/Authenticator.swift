import Foundation
import Shelf
import ShelfCore

/// The native API's credentials: the session cookie (plus the anti-forgery header on anything
/// that changes state) or `Authorization: Bearer <api key>`.
public struct SessionAuthenticator: Authenticating {
    /// The session cookie's name.
    public static let cookieName = "shelf_session"
    /// The header a state-changing cookie request must carry. A cross-site form cannot set a
    /// custom header, and a cross-site script cannot send one without a CORS preflight we never allow.
    public static let csrfHeader = "x-shelf-request"

    let library: Library
    let throttle: LoginThrottle

    /// Credentials checked against `library`'s users; failures counted by `throttle`.
    public init(library: Library, throttle: LoginThrottle) {
        self.library = library
        self.throttle = throttle
    }

    public func user(for request: HTTPRequest) async throws -> User? {
        if let authorization = request.headers["authorization"] {
            guard authorization.lowercased().hasPrefix("bearer ") else {
                throw HTTPError.unauthorized("Authorization must be 'Bearer <api key>'")
            }
            try throttle.check(request.remoteAddress)
            let key = String(authorization.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
            guard let user = try await library.user(forAPIKey: key) else {
                throttle.fail(request.remoteAddress)
                throw HTTPError.unauthorized("the API key is not valid (revoked, or never issued)")
            }
            return user
        }
        guard let token = request.cookie(Self.cookieName) else { return nil }
        guard let user = try await library.user(forSession: token) else {
            throw HTTPError.unauthorized("the session has ended; sign in again")
        }
        if !["GET", "HEAD", "OPTIONS"].contains(request.method), (request.headers[Self.csrfHeader] ?? "").isEmpty {
            throw HTTPError.forbidden("a request that changes something must carry the \(Self.csrfHeader) header (any value) with its session cookie")
        }
        return user
    }

    /// The `Set-Cookie` value for a new session (`Secure` over TLS).
    public static func cookie(_ token: String, secure: Bool, maxAge: Int = 30 * 86_400) -> String {
        "\(cookieName)=\(token); Path=/; Max-Age=\(maxAge); HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "")
    }
}
