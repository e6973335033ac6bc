import Foundation
import Shelf
import ShelfCore

/// User management, by the same rules as `shelf user`: admins manage everyone, a user reads
/// themself and changes their own password; the last admin is never removed or demoted.
extension SubsonicAPI {
    /// The roles as Subsonic names them, with Shelf's role for each (nil: always granted to
    /// users, since Shelf has no such separation; `videoConversionRole` is always false).
    static let roleParameters: [(name: String, role: UserRoles)] = [
        ("settingsRole", .settings), ("streamRole", .stream), ("jukeboxRole", .jukebox), ("downloadRole", .download),
        ("uploadRole", .upload), ("playlistRole", .playlist), ("coverArtRole", .coverArt), ("commentRole", .comment),
        ("podcastRole", .podcast), ("shareRole", .share), ("scrobblingEnabled", .scrobbling),
    ]

    /// The user named `username` (error 70 when there is none).
    func namedUser(_ call: SubsonicCall) async throws -> User {
        let name = try call.parameters.required("username")
        guard let user = try await library.user(named: name) else { throw SubsonicError.notFound("user '\(name)'") }
        return user
    }

    /// getUser: any user for an admin; only themself for others.
    func getUser(_ call: SubsonicCall) async throws -> SubsonicReply {
        let me = try call.signedIn
        let user = try await namedUser(call)
        guard me.isAdmin || me.id == user.id else { throw SubsonicError(50, "only an admin may read another user") }
        return .element("user", SubsonicUser(user: user, folders: try await folders(of: user)))
    }

    /// The music folders (libraries) `user` sees, by ID.
    func folders(of user: User) async throws -> [Int] {
        let all = try await library.libraries().map(\.id)
        return user.seesAllLibraries ? all : all.filter { user.libraries?.contains($0) ?? true }
    }

    /// The libraries `musicFolderId` names (repeated), nil when it is not sent; an unknown one is error 70.
    func musicFolderIDs(_ call: SubsonicCall) async throws -> [Int]? {
        let texts = call.parameters.values("musicFolderId")
        guard !texts.isEmpty else { return nil }
        return try await library.scope(.all, limitedTo: texts).libraries
    }

    /// getUsers: every user (admins only).
    func getUsers(_ call: SubsonicCall) async throws -> SubsonicReply {
        var users: [SubsonicUser] = []
        for user in try await library.users() { users.append(SubsonicUser(user: user, folders: try await folders(of: user))) }
        return .container("users", "user", users)
    }

    /// The roles `call` sets, starting from `roles` (unsent flags keep their value).
    func roles(_ call: SubsonicCall, from roles: UserRoles) throws(SubsonicError) -> UserRoles {
        var roles = roles
        for (name, role) in Self.roleParameters {
            guard let value = try call.parameters.bool(name) else { continue }
            if value { roles.insert(role) } else { roles.remove(role) }
        }
        if try call.parameters.bool("videoConversionRole") == true {
            throw SubsonicError(0, "videoConversionRole cannot be granted: Shelf keeps no video")
        }
        return roles
    }

    /// createUser: `username`, `password` (clear or `enc:`), `email`, `adminRole` and the other roles.
    func createUser(_ call: SubsonicCall) async throws -> SubsonicReply {
        let p = call.parameters
        let name = try p.required("username")
        let password = try Self.decodeNewPassword(try p.required("password"))
        let admin = try p.bool("adminRole") ?? false
        // The spec's defaults: settings and streaming on, everything else off unless sent.
        let roles = try roles(call, from: [.settings, .stream, .scrobbling])
        let email = p.value("email")
        let maxBitRate = try p.int("maxBitRate", in: 0...10_000)
        if try p.bool("ldapAuthenticated") == true { throw SubsonicError(0, "ldapAuthenticated: Shelf has no LDAP") }
        let folders = try await musicFolderIDs(call)
        try await context.write { batch in
            let user = try batch.addUser(name: name, password: password, admin: admin)
            try batch.setProfile(user.id, email: email, roles: roles, maxBitRate: maxBitRate)
            if let folders { try batch.setLibraries(user.id, folders) }
        }
        return .empty
    }

    /// updateUser: changes what is sent (password, email, roles, maxBitRate); admins only.
    func updateUser(_ call: SubsonicCall) async throws -> SubsonicReply {
        let p = call.parameters
        let user = try await namedUser(call)
        let password = try p.value("password").map { text throws(SubsonicError) in try Self.decodeNewPassword(text) }
        let admin = try p.bool("adminRole")
        let roles = try roles(call, from: user.roles)
        let email = p.value("email")
        let maxBitRate = try p.int("maxBitRate", in: 0...10_000)
        let folders = try await musicFolderIDs(call)
        try await context.write { batch in
            if let folders { try batch.setLibraries(user.id, folders) }
            if let password { try batch.setPassword(user.id, password) }
            if let admin { try batch.setAdmin(user.id, admin) }
            try batch.setProfile(user.id, email: email, roles: roles, maxBitRate: maxBitRate)
        }
        return .empty
    }

    /// deleteUser: admins only; never the last admin (the owner's role passes on).
    func deleteUser(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try await namedUser(call)
        try await context.write { batch in try batch.deleteUser(user.id) }
        return .empty
    }

    /// changePassword: an admin for anyone; a user with the settings role for themself.
    func changePassword(_ call: SubsonicCall) async throws -> SubsonicReply {
        let me = try call.signedIn
        let user = try await namedUser(call)
        guard me.isAdmin || (me.id == user.id && me.may(.settings)) else {
            throw SubsonicError(50, me.id == user.id ? "this user may not change their settings" : "only an admin may change another user's password")
        }
        let password = try Self.decodeNewPassword(try call.parameters.required("password"))
        try await context.write { batch in try batch.setPassword(user.id, password) }
        return .empty
    }

    /// getAvatar: the user's initials on their colour (PNG); a user may fetch any user's, as
    /// the spec's players show who is playing what.
    func avatar(_ call: SubsonicCall) async throws -> SubsonicReply {
        let user = try await namedUser(call)
        let png = try Avatar.png(for: user.name)
        return .binary(HTTPResponse(status: 200, headers: [("Content-Type", "image/png"), ("Cache-Control", "private, max-age=86400")], body: .data(png)))
    }

    /// A password as sent (clear or `enc:` hex); a bad `enc:` is the client's mistake (error 0), not a failed sign-in.
    static func decodeNewPassword(_ text: String) throws(SubsonicError) -> String {
        do {
            return try decodePassword(text)
        } catch {
            throw SubsonicError(0, "password: \(error.message)")
        }
    }

    /// Refuses a call the user's roles do not allow (error 50).
    static func require(_ role: UserRoles, of user: User, for what: String) throws(SubsonicError) {
        guard user.may(role) else { throw SubsonicError(50, "this user may not \(what)") }
    }
}

/// A user as Subsonic shows one: name, email, every role and the music folders they see.
struct SubsonicUser: SubsonicModel {
    let user: User
    /// The music folders (libraries) the user sees.
    let folders: [Int]

    func write(to w: inout SubsonicWriter) {
        w.attribute("username", user.name)
        w.attribute("email", user.email.isEmpty ? nil : user.email)
        w.attribute("scrobblingEnabled", user.may(.scrobbling))
        w.attribute("maxBitRate", user.maxBitRate)
        w.attribute("adminRole", user.isAdmin)
        w.attribute("settingsRole", user.may(.settings))
        w.attribute("downloadRole", user.may(.download))
        w.attribute("uploadRole", user.may(.upload))
        w.attribute("playlistRole", user.may(.playlist))
        w.attribute("coverArtRole", user.may(.coverArt))
        w.attribute("commentRole", user.may(.comment))
        w.attribute("podcastRole", user.may(.podcast))
        w.attribute("streamRole", user.may(.stream))
        w.attribute("jukeboxRole", user.may(.jukebox))
        w.attribute("shareRole", user.may(.share))
        w.attribute("videoConversionRole", false)
        if !folders.isEmpty {
            w.openList("folder")
            for folder in folders { w.bareItem(folder) }
            w.closeList()
        }
    }
}
