import Foundation
import Shelf
import ShelfCore
import ShelfWire

/// Who may call a route.
public enum Access: Sendable {
    /// Anyone (signing in, the extension list of a protocol).
    case anyone
    /// A signed-in user.
    case user
    /// A signed-in admin: writes that touch files or the whole library.
    case admin
}

/// A request that reached its handler: the HTTP request, the values of the path's `{name}`
/// pieces, and the user it is authenticated as (nil only on `.anyone` routes).
public struct RouteRequest: Sendable {
    /// The request as received.
    public let http: HTTPRequest
    /// `{name}` pieces of the route's pattern, decoded.
    public let parameters: [String: String]
    /// The signed-in user.
    public let user: User?

    /// The signed-in user (routes that need one only reach a handler with one).
    public var signedIn: User {
        get throws(HTTPError) {
            guard let user else { throw HTTPError.unauthorized() }
            return user
        }
    }

    /// The path piece `name` as a positive ID.
    public func id(_ name: String, what: String) throws(HTTPError) -> Int64 {
        guard let text = parameters[name], let value = Int64(text), value > 0 else {
            throw .badRequest("'\(parameters[name] ?? "")' is not a \(what) ID (a positive integer)", code: "invalidValue")
        }
        return value
    }

    /// The query parameter `name`, if given.
    public func query(_ name: String) -> String? { http.queryValue(name) }

    /// The query parameter `name` as an integer in `range`; nil when absent.
    public func int(_ name: String, in range: ClosedRange<Int>) throws(HTTPError) -> Int? {
        guard let text = http.queryValue(name) else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw .badRequest("\(name) expects an integer from \(range.lowerBound) to \(range.upperBound), got '\(text)'", code: "invalidValue")
        }
        return value
    }

    /// The query parameter `name` as `true`/`false` (also `1`/`0`, `on`/`off`); nil when absent.
    public func bool(_ name: String) throws(HTTPError) -> Bool? {
        guard let text = http.queryValue(name) else { return nil }
        switch text.lowercased() {
        case "true", "1", "on", "yes", "": return true
        case "false", "0", "off", "no": return false
        default: throw .badRequest("\(name) expects true or false, got '\(text)'", code: "invalidValue")
        }
    }

    /// The body decoded as JSON `T`; a missing or malformed body is a 400 naming the problem.
    public func json<T: Decodable>(_ type: T.Type) throws(HTTPError) -> T {
        guard !http.body.isEmpty else { throw .badRequest("this request needs a JSON body", code: "invalidBody") }
        do {
            return try JSONDecoder().decode(T.self, from: http.body)
        } catch let DecodingError.keyNotFound(key, _) {
            throw .badRequest("the JSON body needs \"\(key.stringValue)\"", code: "invalidBody")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            throw .badRequest("the JSON body's \"\(path)\" has the wrong type", code: "invalidBody")
        } catch {
            throw .badRequest("the body is not valid JSON", code: "invalidBody")
        }
    }
}

/// A handler: a typed request in, a response out; anything it throws becomes an error response
/// in `Router.respond`, the one place that does so.
public typealias RouteHandler = @Sendable (RouteRequest) async throws -> HTTPResponse

/// One route: a method and a path pattern (`/api/tracks/{id}`), who may call it, which query
/// parameters it takes (any other is a 400, so a typo is never silently ignored), and its body limit.
public struct Route: Sendable {
    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
        /// Matches the rest of the path (`{name...}`).
        case rest(String)
    }

    let method: String
    let pattern: String
    let segments: [Segment]
    let access: Access
    /// Allowed query parameter names; nil accepts any (a protocol whose clients send extras).
    let query: Set<String>?
    let bodyLimit: Int?
    let handler: RouteHandler

    /// A route for `method` on `pattern`.
    public init(
        _ method: String, _ pattern: String, access: Access = .user, query: [String]? = [], bodyLimit: Int? = nil,
        _ handler: @escaping RouteHandler
    ) {
        self.method = method
        self.pattern = pattern
        self.access = access
        self.query = query.map(Set.init)
        self.bodyLimit = bodyLimit
        self.handler = handler
        segments = pattern.split(separator: "/").map { piece in
            if piece.hasPrefix("{") && piece.hasSuffix("...}") { return .rest(String(piece.dropFirst().dropLast(4))) }
            if piece.hasPrefix("{") && piece.hasSuffix("}") { return .parameter(String(piece.dropFirst().dropLast())) }
            return .literal(String(piece))
        }
    }

    func match(_ pieces: [Substring]) -> [String: String]? {
        var values: [String: String] = [:]
        for (index, segment) in segments.enumerated() {
            switch segment {
            case .rest(let name):
                values[name] = pieces[min(index, pieces.count)...].joined(separator: "/")
                return values
            case .literal(let text):
                guard index < pieces.count, pieces[index] == text else { return nil }
            case .parameter(let name):
                guard index < pieces.count else { return nil }
                values[name] = String(pieces[index])
            }
        }
        return pieces.count == segments.count ? values : nil
    }
}

/// Decides who a request comes from; the router asks it before every route that needs a user.
public protocol Authenticating: Sendable {
    /// The user the request is signed in as, nil when it carries no credentials; throws 401/429
    /// for wrong ones, and 403 for a state-changing cookie request without the anti-forgery header.
    func user(for request: HTTPRequest) async throws -> User?
    /// What `user` may read on this request (`LibraryScope.current` while its handler runs).
    func scope(for user: User, request: HTTPRequest) async throws -> LibraryScope
}

extension Authenticating {
    /// Everything, for an authenticator that knows no libraries.
    public func scope(for user: User, request: HTTPRequest) async throws -> LibraryScope { .all }
}

/// Method + path pattern → handler, with typed parameters, authentication, and the one place
/// where errors become responses.
public final class Router: Sendable {
    private let routes: [Route]
    private let authenticator: any Authenticating
    /// Prints the internal errors whose details are kept out of responses.
    private let report: @Sendable (String) -> Void

    /// A router over `routes`; `report` receives the details of internal errors.
    public init(routes: [Route], authenticator: any Authenticating, report: @escaping @Sendable (String) -> Void) {
        self.routes = routes
        self.authenticator = authenticator
        self.report = report
    }

    /// The body limit of the route a request is for (nil: the server's default).
    public func bodyLimit(method: String, path: String) -> Int? {
        let pieces = path.split(separator: "/")
        return routes.first { $0.method == method && $0.match(pieces) != nil }?.bodyLimit
    }

    /// Routes `request`, runs its handler, and turns any failure into a JSON error response.
    public func respond(_ request: HTTPRequest) async -> HTTPResponse {
        do {
            return try await dispatch(request)
        } catch {
            return errorResponse(error, request: request)
        }
    }

    private func dispatch(_ request: HTTPRequest) async throws -> HTTPResponse {
        let pieces = request.path.split(separator: "/")
        let matching = routes.compactMap { route in route.match(pieces).map { (route, $0) } }
        guard !matching.isEmpty else { throw HTTPError.notFound("no endpoint at \(request.path)") }
        // HEAD is answered by the GET route unless a route says otherwise; the server sends no body.
        let method = request.method == "HEAD" && !matching.contains { $0.0.method == "HEAD" } ? "GET" : request.method
        guard let (route, parameters) = matching.first(where: { $0.0.method == method }) else {
            let allowed = Array(Set(matching.map(\.0.method) + (matching.contains { $0.0.method == "GET" } ? ["HEAD"] : []))).sorted()
            throw HTTPError(
                status: 405, code: "methodNotAllowed", message: "\(request.method) is not allowed on \(request.path); use \(allowed.joined(separator: ", "))",
                headers: [("Allow", allowed.joined(separator: ", "))])
        }
        if let allowed = route.query {
            for (name, _) in request.query where !allowed.contains(name) {
                let known = allowed.isEmpty ? "it takes none" : "it takes \(allowed.sorted().joined(separator: ", "))"
                throw HTTPError.badRequest("unknown parameter '\(name)' for \(route.pattern); \(known)", code: "unknownParameter")
            }
        }
        var user: User?
        if route.access != .anyone {
            user = try await authenticator.user(for: request)
            guard let signedIn = user else { throw HTTPError.unauthorized() }
            if route.access == .admin, !signedIn.isAdmin {
                throw HTTPError.forbidden("\(request.method) \(route.pattern) is for admins; \(signedIn.name) is not one")
            }
        } else {
            user = try? await authenticator.user(for: request)
        }
        // Everything the handler reads is within the user's libraries: the engine's reads default to this scope.
        var scope = LibraryScope.all
        if let user { scope = try await authenticator.scope(for: user, request: request) }
        return try await LibraryScope.$current.withValue(scope) {
            try await route.handler(RouteRequest(http: request, parameters: parameters, user: user))
        }
    }

    /// The response for any error: HTTPError as it is, the engine's errors by their kind, and
    /// everything else as a 500 whose details go to the log only (never SQL or internals).
    public func errorResponse(_ error: any Error, request: HTTPRequest) -> HTTPResponse {
        let failure: HTTPError
        switch error {
        case let error as HTTPError: failure = error
        case let error as WireInputError: failure = .badRequest(error.message, code: "invalidValue")
        case let error as any ClassifiedError: failure = Self.httpError(for: error, report: report)
        case is CancellationError: failure = HTTPError(status: 503, code: "cancelled", message: "the server is stopping")
        default:
            report("internal error on \(request.method) \(request.path): \(error)")
            failure = HTTPError(status: 500, code: "internal", message: "the server failed to answer; its log has the details")
        }
        return Self.errorResponse(failure)
    }

    /// The JSON error response of `failure`.
    public static func errorResponse(_ failure: HTTPError) -> HTTPResponse {
        let body = (try? Wire.encode(ErrorDocument(code: failure.code, message: failure.message))) ?? Data()
        return HTTPResponse(
            status: failure.status,
            headers: [("Content-Type", "application/json; charset=utf-8"), ("Cache-Control", "no-store")] + failure.headers,
            body: .data(body))
    }

    /// The answer to an engine error, by its kind: one exhaustive switch, so a new kind cannot be
    /// left unanswered. Internal failures go to the log and answer without their details.
    static func httpError(for error: any ClassifiedError, report: @Sendable (String) -> Void) -> HTTPError {
        let code = error.errorCode
        switch error.kind {
        case .notFound: return HTTPError(status: 404, code: code, message: error.description)
        case .conflict: return HTTPError(status: 409, code: code, message: error.description)
        case .invalid: return HTTPError(status: 400, code: code, message: error.description)
        case .forbidden: return HTTPError(status: 403, code: code, message: error.description)
        case .expired: return HTTPError(status: 410, code: code, message: error.description)
        case .busy: return HTTPError(status: 503, code: code, message: "the library is busy; try again", headers: [("Retry-After", "1")])
        case .full: return HTTPError(status: 507, code: code, message: error.description)
        case .damaged:
            // The answer carries the way back (restore the last backup), not only the log.
            report("library error: \(error)")
            return HTTPError(status: 503, code: code, message: error.description)
        case .unavailable:
            report("unavailable: \(error)")
            return HTTPError(status: 503, code: code, message: error.description)
        case .internal:
            report("library error: \(error)")
            // Which internal failure it was is the log's to say, not the client's.
            return HTTPError(status: 500, code: "internal", message: "the library failed to answer; the server's log has the details")
        }
    }
}

/// Building responses.
extension HTTPResponse {
    /// `value` as JSON from the shared encoder, with `status`.
    public static func json<T: Encodable>(_ value: T, status: Int = 200, headers: [(String, String)] = []) throws -> HTTPResponse {
        HTTPResponse(
            status: status,
            headers: [("Content-Type", "application/json; charset=utf-8"), ("Cache-Control", "no-store")] + headers,
            body: .data(try Wire.encode(value)))
    }
}
