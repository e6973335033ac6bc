import Foundation
import ShelfCore
import ShelfDatabase

/// Users, sign-in and per-user data: reads on the read pool, writes as one batch each (the same
/// methods exist on `WriteBatch` to combine them with other changes).
extension Library {
    /// How long a session token from `createSession` stays valid.
    public static var sessionLifetime: TimeInterval { UserRows.sessionLifetime }

    // MARK: Reads

    /// Every user, oldest first.
    public func users() async throws -> [User] {
        try await read { db in try db.query(UserRows.select + " ORDER BY id", [], UserRows.decode) }
    }

    /// The user with this name (compared without case), or nil.
    public func user(named name: String) async throws -> User? {
        try await read { db in try db.queryOne(UserRows.select + " WHERE name = ?", [name], UserRows.decode) }
    }

    /// The user with this ID, or nil.
    public func user(id: UserID) async throws -> User? {
        try await read { db in try db.queryOne(UserRows.select + " WHERE id = ?", [id.rawValue], UserRows.decode) }
    }

    /// The user whose name and password these are, or nil (unknown name or wrong password).
    /// The password is compared in constant time with the decrypted stored one.
    public func authenticate(name: String, password: String) async throws -> User? {
        let directory = self.directory
        return try await read { db in
            guard
                let (user, blob) = try db.queryOne(
                    "SELECT \(UserRows.columns), password FROM user WHERE name = ?", [name],
                    { (try UserRows.decode($0), try $0.data(UserRows.columnCount)) })
            else { return nil }
            let stored = try Self.decrypt(blob, of: user, directory: directory)
            return Secrets.constantTimeEqual(Data(stored.utf8), Data(password.utf8)) ? user : nil
        }
    }

    /// A user's password in clear, for protocols that need it (Subsonic's md5(password + salt)).
    public func password(of id: UserID) async throws -> String {
        let directory = self.directory
        return try await read { db in
            guard
                let (user, blob) = try db.queryOne(
                    "SELECT \(UserRows.columns), password FROM user WHERE id = ?", [id.rawValue],
                    { (try UserRows.decode($0), try $0.data(UserRows.columnCount)) })
            else { throw LibraryError.userNotFound("ID \(id)") }
            return try Self.decrypt(blob, of: user, directory: directory)
        }
    }

    private static func decrypt(_ blob: Data, of user: User, directory: URL) throws -> String {
        let key = try SecretKey.load(directory: directory, create: false)
        guard let password = PasswordCipher.open(blob, user: user.id, key: key) else {
            throw LibraryError.passwordUnreadable(user: user.name, keyPath: key.path)
        }
        return password
    }

    /// The user an API key belongs to, or nil for an unknown or revoked key. Notes the use (at
    /// most once a minute per key, so that steady API traffic does not turn into steady writes).
    public func user(forAPIKey key: String, now: Date = Date()) async throws -> User? {
        let hash = Secrets.sha256(key)
        guard
            let (user, keyID, lastUsed) = try await read({ db in
                try db.queryOne(
                    """
                    SELECT \(UserRows.columns), api_key.id, api_key.last_used
                    FROM api_key JOIN user ON user.id = api_key.user_id WHERE api_key.sha256 = ?
                    """, [hash]
                ) { (try UserRows.decode($0), try $0.string(UserRows.columnCount), try $0.get(UserRows.columnCount + 1, as: Date?.self)) }
            })
        else { return nil }
        if lastUsed.map({ now.timeIntervalSince($0) >= UserRows.apiKeyTouchInterval }) ?? true {
            // Bookkeeping only: a busy store must not turn a valid key away.
            try? await write { batch in try batch.touchAPIKey(id: keyID, now: now) }
        }
        return user
    }

    /// The user of a session token, or nil when it is unknown, ended or expired at `now`.
    public func user(forSession token: String, now: Date = Date()) async throws -> User? {
        let hash = Secrets.sha256(token)
        return try await read { db in
            try db.queryOne(
                """
                SELECT \(UserRows.columns)
                FROM user_session JOIN user ON user.id = user_session.user_id
                WHERE user_session.sha256 = ? AND user_session.expires > ?
                """, [hash, now], UserRows.decode)
        }
    }

    /// A user's API keys (never the keys themselves), oldest first.
    public func apiKeys(of user: UserID) async throws -> [APIKeyInfo] {
        try await read { db in
            try db.query("SELECT id, user_id, created, last_used FROM api_key WHERE user_id = ? ORDER BY created, id", [user.rawValue]) {
                APIKeyInfo(id: try $0.string(0), userID: UserID(try $0.int64(1)), created: try $0.get(2), lastUsed: try $0.get(3))
            }
        }
    }

    /// One user's data about these tracks; a track the user never starred, rated or played has
    /// no entry (read it as `UserTrackData()`).
    public func userTrackData(for user: UserID, tracks: [TrackID]) async throws -> [TrackID: UserTrackData] {
        guard !tracks.isEmpty else { return [:] }
        let list = "[" + tracks.map { String($0.rawValue) }.joined(separator: ",") + "]"
        return try await read { db in
            var result: [TrackID: UserTrackData] = [:]
            try db.forEachRow(
                """
                SELECT track_id, starred, rating, play_count, last_played FROM user_track
                WHERE user_id = ? AND track_id IN (SELECT value FROM json_each(?))
                """, [user.rawValue, list]
            ) { row in
                result[TrackID(try row.int64(0))] = UserTrackData(
                    starred: try row.get(1), rating: row.optionalInt64(2).map { Int($0) }, playCount: Int(try row.int64(3)),
                    lastPlayed: try row.get(4))
            }
            return result
        }
    }

    /// `user`'s saved play queue (tracks deleted since are gone from it), or nil when none is saved.
    public func playQueue(of user: UserID) async throws -> PlayQueue? {
        try await read { db in
            try db.transaction(.deferred) {
                guard
                    let head = try db.queryOne(
                        "SELECT current, position, changed, changed_by, current_index FROM play_queue WHERE user_id = ?", [user.rawValue],
                        {
                            (
                                current: $0.optionalInt64(0), position: Int(try $0.int64(1)), changed: try $0.get(2, as: Date.self),
                                by: try $0.get(3, as: String.self), index: $0.optionalInt64(4)
                            )
                        })
                else { return nil }
                // Positions keep the gaps a deleted track leaves; the current song is found by its own.
                let items = try db.query(
                    "SELECT position, track_id FROM play_queue_item WHERE user_id = ? ORDER BY position", [user.rawValue]
                ) { (position: try $0.int64(0), track: TrackID(try $0.int64(1))) }
                let tracks = items.map(\.track)
                var index = head.index.flatMap { stored in items.firstIndex { $0.position == stored } }
                if head.index == nil, let current = head.current { index = tracks.firstIndex(of: TrackID(current)) }
                let current = index.map { tracks[$0] }
                return PlayQueue(
                    tracks: tracks, current: current, position: head.position, changed: head.changed, changedBy: head.by,
                    currentIndex: index)
            }
        }
    }

    /// The tracks a user starred, most recently starred first.
    public func starredTracks(of user: UserID) async throws -> [TrackID] {
        try await read { db in
            try db.query(
                "SELECT track_id FROM user_track WHERE user_id = ? AND starred IS NOT NULL ORDER BY starred DESC, track_id DESC",
                [user.rawValue]
            ) { TrackID(try $0.int64(0)) }
        }
    }

    /// The tracks one user played or rated, in that user's order: most played, most recently played
    /// or best rated first (ties by track ID). Only the user's own rows are read, never the library's.
    public func userTracks(of user: UserID, by order: UserTrackOrder) async throws -> [TrackID] {
        let (condition, sort) =
            switch order {
            case .mostPlayed: ("play_count > 0", "play_count DESC")
            case .recentlyPlayed: ("last_played IS NOT NULL", "last_played DESC")
            case .bestRated: ("rating > 0", "rating DESC")
            }
        return try await read { db in
            try db.query(
                "SELECT track_id FROM user_track WHERE user_id = ? AND \(condition) ORDER BY \(sort), track_id", [user.rawValue]
            ) { TrackID(try $0.int64(0)) }
        }
    }

    /// The albums or artists (views of `kind`) a user starred, with when, most recent first.
    public func starredGroups(of user: UserID, kind: GroupKind) async throws -> [(id: GroupID, starred: Date)] {
        try await read { db in
            try db.query(
                "SELECT group_id, starred FROM user_group_star WHERE user_id = ? AND kind = ? ORDER BY starred DESC, group_id",
                [user.rawValue, kind.code]
            ) { (id: GroupID(try $0.int64(0)), starred: try $0.get(1) as Date) }
        }
    }

    /// Every playlist that belongs to a user, with its owner; the others belong to the library.
    public func playlistOwners() async throws -> [PlaylistID: PlaylistOwnership] {
        try await read { db in
            var result: [PlaylistID: PlaylistOwnership] = [:]
            try db.forEachRow("SELECT playlist_id, user_id, public FROM playlist_owner") { row in
                result[PlaylistID(try row.int64(0))] = PlaylistOwnership(user: UserID(try row.int64(1)), isPublic: try row.get(2))
            }
            return result
        }
    }

    // MARK: Writes, one batch each

    /// Creates a user (see `WriteBatch.addUser`: the first user becomes owner and admin).
    @discardableResult
    public func addUser(name: String, password: String, admin: Bool = false) async throws -> User {
        try await write { batch in try batch.addUser(name: name, password: password, admin: admin) }
    }

    /// Replaces a user's password and ends their sessions.
    public func setPassword(_ user: UserID, _ password: String) async throws {
        try await write { batch in try batch.setPassword(user, password) }
    }

    /// Grants or withdraws admin rights; the last admin cannot be demoted.
    public func setAdmin(_ user: UserID, _ admin: Bool) async throws {
        try await write { batch in try batch.setAdmin(user, admin) }
    }

    /// Makes `user` the owner, whose ratings and plays write through to the tracks.
    public func setOwner(_ user: UserID) async throws {
        try await write { batch in try batch.setOwner(user) }
    }

    /// Deletes a user and everything that is only theirs; the last admin cannot be deleted.
    public func deleteUser(_ user: UserID) async throws {
        try await write { batch in try batch.deleteUser(user) }
    }

    /// Creates an API key; the returned `key` is the only copy there will ever be.
    public func createAPIKey(for user: UserID) async throws -> (info: APIKeyInfo, key: String) {
        try await write { batch in try batch.createAPIKey(for: user) }
    }

    /// Revokes an API key by its public ID.
    public func revokeAPIKey(id: String) async throws {
        try await write { batch in try batch.revokeAPIKey(id: id) }
    }

    /// Starts a 30-day session and returns its token (shown once; the store keeps its hash).
    public func createSession(user: UserID, now: Date = Date()) async throws -> String {
        try await write { batch in try batch.createSession(for: user, now: now) }
    }

    /// Ends a session (signing out); an unknown token is no error.
    public func deleteSession(_ token: String) async throws {
        try await write { batch in try batch.deleteSession(token) }
    }

    /// Ends every session of `user` except `keep`'s (signing out everywhere else); how many ended.
    public func deleteSessions(of user: UserID, except keep: String?) async throws -> Int {
        try await write { batch in try batch.deleteSessions(of: user, except: keep) }
    }

    /// How many unexpired sessions `user` has at `now`.
    public func sessionCount(of user: UserID, now: Date = Date()) async throws -> Int {
        try await read { db in
            try db.scalar(Int.self, "SELECT count(*) FROM user_session WHERE user_id = ? AND expires > ?", [user.rawValue, now]) ?? 0
        }
    }
}
