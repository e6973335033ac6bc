import Foundation
import Shelf
import ShelfCore

/// Sign-in by a reverse proxy that has authenticated the person itself (Authelia, Authentik,
/// oauth2-proxy, nginx's `auth_basic`) and names them in a header (`auth-header`, e.g.
/// `Remote-User`). Believed only on requests from `trusted-proxies`; from anywhere else the header
/// is ignored. It signs in the web page (the native API and the page's own Subsonic calls); apps
/// keep their API keys or passwords, as they do not pass through the single sign-on.
public struct HeaderSignIn: Sendable {
    /// The header naming the user, lower-case (`remote-user`).
    public var header: String
    /// Whether a name Shelf does not know becomes a user at its first sign-in (`auth-header-create-users`).
    public var createUsers = false
    /// A group that makes a user created this way an admin (`auth-header-admin-group`), read from `groupsHeader`.
    public var adminGroup: String?
    /// The header listing the person's groups, lower-case, separated by commas (`remote-groups`).
    public var groupsHeader = "remote-groups"

    /// Sign-in by `header`.
    public init(header: String, createUsers: Bool = false, adminGroup: String? = nil) {
        self.header = header.lowercased()
        self.createUsers = createUsers
        self.adminGroup = adminGroup
    }

    /// The user `request`'s proxy names, created when that is allowed; nil when the request did not
    /// come through a trusted proxy or carries no name. Throws 401 for a name Shelf does not know.
    func user(for request: HTTPRequest, library: Library, log: @Sendable (String) -> Void) async throws -> User? {
        guard request.proxied, let raw = request.headers[header] else { return nil }
        let name = raw.trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { return nil }
        if let user = try await library.user(named: name) { return user }
        guard createUsers else {
            throw HTTPError.unauthorized("the proxy signed in '\(name)', who is not a Shelf user; an admin adds them, or turns on auth-header-create-users")
        }
        let groups = (request.headers[groupsHeader] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let admin = adminGroup.map { groups.contains($0) } ?? false
        let (user, made) = try await library.externalUser(named: name, admin: admin)
        if made {
            log("shelf: auth-header: created user \(name)\(admin ? " (admin, in group \(adminGroup ?? ""))" : "") at their first sign-in through the proxy")
        }
        return user
    }
}
