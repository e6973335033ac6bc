import Foundation
import Shelf
import ShelfCore
import ShelfWire

/// Sessions: sign in and out, and who is signed in.
extension NativeAPI {
    /// The routes of this group.
    var sessionRoutes: [Route] {
        [
            Route("POST", "/api/session", access: .anyone, bodyLimit: 16 * 1024, signIn),
            Route("DELETE", "/api/session", access: .anyone, signOut),
            Route("GET", "/api/me") { request in try .json(UserDocument(user: try request.signedIn)) },
        ]
    }

    struct SignInBody: Decodable {
        let name: String
        let password: String
    }

    /// `{"user":{…}}`.
    struct UserDocument: Encodable {
        let user: User
    }

    func signIn(_ request: RouteRequest) async throws -> HTTPResponse {
        let body = try request.json(SignInBody.self)
        let found = try await context.throttle.judge(request.http.remoteAddress) {
            if let user = try await library.authenticate(name: body.name, password: body.password) { return user }
            guard let directory = context.directory else { return nil }
            return try await directory.signIn(name: body.name, password: body.password, library: library)
        }
        guard let user = found else { throw HTTPError.unauthorized("wrong name or password") }
        let token = try await library.createSession(user: user.id)
        return try .json(
            UserDocument(user: user),
            headers: [("Set-Cookie", SessionAuthenticator.cookie(token, for: request.http))])
    }

    func signOut(_ request: RouteRequest) async throws -> HTTPResponse {
        if let token = request.http.cookie(SessionAuthenticator.cookieName) { try await library.deleteSession(token) }
        return try .json(["signedOut": true], headers: [("Set-Cookie", SessionAuthenticator.cookie("", for: request.http, maxAge: 0))])
    }
}
