import Foundation
import ShelfCore
import ShelfDatabase

/// Users, their credentials and their own track data, written inside a `library.write` batch so
/// that they commit together with anything else the batch does.
extension WriteBatch {
    // MARK: Users

    /// The user with this ID, as this transaction sees it.
    public func user(_ id: UserID) throws -> User? {
        try db.queryOne(UserRows.select + " WHERE id = ?", [id.rawValue], UserRows.decode)
    }

    /// The user with this name (compared without case), as this transaction sees it.
    public func user(named name: String) throws -> User? {
        try db.queryOne(UserRows.select + " WHERE name = ?", [name], UserRows.decode)
    }

    func requireUser(_ id: UserID) throws -> User {
        guard let user = try user(id) else { throw LibraryError.userNotFound("ID \(id)") }
        return user
    }

    /// Creates a user. The first user of a library becomes its owner and an admin whatever
    /// `admin` says, so that a library with users always has someone who can manage it.
    @discardableResult
    public func addUser(name: String, password: String, admin: Bool) throws -> User {
        try UserRows.checkName(name)
        try UserRows.checkPassword(password)
        if let existing = try user(named: name) { throw LibraryError.userExists(existing.name) }
        let key = try SecretKey.load(directory: UserRows.keyDirectory(storePath: db.path), create: true)
        let first = try db.scalar(Int.self, "SELECT count(*) FROM user") == 0
        // The ID is the ciphertext's associated data, so the row exists before its password does.
        try db.execute(
            "INSERT INTO user (name, is_admin, is_owner, password, created) VALUES (?, ?, ?, x'', ?)",
            [name, admin || first, first, now])
        let id = UserID(db.lastInsertRowID)
        try db.execute("UPDATE user SET password = ? WHERE id = ?", [try PasswordCipher.seal(password, user: id, key: key), id.rawValue])
        // Read back, so that the value equals what later reads return (dates as stored).
        guard let created = try self.user(id) else { throw LibraryError.userNotFound("ID \(id)") }
        return created
    }

    /// Replaces a user's password and ends their sessions (API keys stay: they are separate grants).
    public func setPassword(_ user: UserID, _ password: String) throws {
        _ = try requireUser(user)
        try UserRows.checkPassword(password)
        let key = try SecretKey.load(directory: UserRows.keyDirectory(storePath: db.path), create: true)
        try db.execute(
            "UPDATE user SET password = ?, password_changed = ? WHERE id = ?",
            [try PasswordCipher.seal(password, user: user, key: key), now, user.rawValue])
        try db.execute("DELETE FROM user_session WHERE user_id = ?", [user.rawValue])
    }

    /// Grants or withdraws admin rights; refuses to demote the last admin.
    public func setAdmin(_ user: UserID, _ admin: Bool) throws {
        let found = try requireUser(user)
        guard found.isAdmin != admin else { return }
        if !admin, try adminCount() == 1 { throw LibraryError.lastAdmin(found.name) }
        try db.execute("UPDATE user SET is_admin = ? WHERE id = ?", [admin, user.rawValue])
    }

    /// Makes `user` the library's owner, the one whose ratings and plays write through to tracks.
    public func setOwner(_ user: UserID) throws {
        _ = try requireUser(user)
        try db.execute("UPDATE user SET is_owner = 0 WHERE is_owner = 1 AND id <> ?", [user.rawValue])
        try db.execute("UPDATE user SET is_owner = 1 WHERE id = ?", [user.rawValue])
    }

    /// Deletes a user with their keys, sessions, track data and playlist claims (their playlists
    /// become library playlists). Refuses the last admin; an owner's role passes to the oldest
    /// remaining admin.
    public func deleteUser(_ user: UserID) throws {
        let found = try requireUser(user)
        if found.isAdmin, try adminCount() == 1 { throw LibraryError.lastAdmin(found.name) }
        if try db.scalar(Int.self, "SELECT 1 FROM play_queue WHERE user_id = ?", [user.rawValue]) != nil { recordPlayQueue(user, .delete) }
        try db.execute("DELETE FROM user WHERE id = ?", [user.rawValue])
        if found.isOwner {
            try db.execute("UPDATE user SET is_owner = 1 WHERE id = (SELECT id FROM user ORDER BY is_admin DESC, id LIMIT 1)")
        }
    }

    private func adminCount() throws -> Int {
        try db.scalar(Int.self, "SELECT count(*) FROM user WHERE is_admin = 1") ?? 0
    }

    // MARK: API keys and sessions

    /// Creates an API key for `user` and returns it with its public description. The key is shown
    /// only here: the store keeps its SHA-256, which cannot be turned back into it.
    public func createAPIKey(for user: UserID) throws -> (info: APIKeyInfo, key: String) {
        _ = try requireUser(user)
        let id = Secrets.randomID(10)
        let key = "shelf_\(id)_\(Secrets.base64url(Secrets.randomBytes(32)))"
        try db.execute(
            "INSERT INTO api_key (id, user_id, sha256, created) VALUES (?, ?, ?, ?)", [id, user.rawValue, Secrets.sha256(key), now])
        return (APIKeyInfo(id: id, userID: user, created: now, lastUsed: nil), key)
    }

    /// Revokes the API key with this public ID.
    public func revokeAPIKey(id: String) throws {
        try db.execute("DELETE FROM api_key WHERE id = ?", [id])
        if db.changes == 0 { throw LibraryError.apiKeyNotFound(id) }
    }

    /// Records that a key authenticated at `now`, unless that was recorded less than a minute ago.
    func touchAPIKey(id: String, now: Date) throws {
        try db.execute(
            "UPDATE api_key SET last_used = ?1 WHERE id = ?2 AND (last_used IS NULL OR last_used <= ?3)",
            [now, id, now.addingTimeInterval(-UserRows.apiKeyTouchInterval)])
    }

    /// Starts a session for `user` and returns its token (32 random bytes, base64url), valid for
    /// 30 days from `now` (the batch's time when nil). Expired sessions are cleared on the way.
    public func createSession(for user: UserID, now: Date? = nil) throws -> String {
        _ = try requireUser(user)
        let now = now ?? self.now
        try db.execute("DELETE FROM user_session WHERE expires <= ?", [now])
        let token = Secrets.base64url(Secrets.randomBytes(32))
        try db.execute(
            "INSERT INTO user_session (sha256, user_id, created, expires) VALUES (?, ?, ?, ?)",
            [Secrets.sha256(token), user.rawValue, now, now.addingTimeInterval(UserRows.sessionLifetime)])
        return token
    }

    /// Ends the session with this token; an unknown token is already ended, so it is no error.
    public func deleteSession(_ token: String) throws {
        try db.execute("DELETE FROM user_session WHERE sha256 = ?", [Secrets.sha256(token)])
    }

    /// Ends every session of `user` but the one with token `keep` ("sign out everywhere else");
    /// returns how many ended.
    public func deleteSessions(of user: UserID, except keep: String?) throws -> Int {
        let keptHash = keep.map { Secrets.sha256($0) } ?? Data()
        let ended = try db.scalar(Int.self, "SELECT count(*) FROM user_session WHERE user_id = ? AND sha256 != ?", [user.rawValue, keptHash]) ?? 0
        try db.execute("DELETE FROM user_session WHERE user_id = ? AND sha256 != ?", [user.rawValue, keptHash])
        return ended
    }

    // MARK: Play queues

    /// Saves `user`'s play queue (replacing the last), stamped with this batch's time; every track
    /// must exist. The song playing is `currentIndex` (its place in `tracks`) or, without one, the
    /// first place of `current`. An empty queue clears it.
    public func savePlayQueue(of user: UserID, tracks: [TrackID], current: TrackID?, currentIndex: Int? = nil, position: Int, changedBy: String) throws {
        _ = try requireUser(user)
        // What was saved before: the same queue saved again (a client's timer) is no change to log.
        let before = try db.queryOne(
            "SELECT current_index, position, changed_by FROM play_queue WHERE user_id = ?", [user.rawValue]
        ) { (index: $0.optionalInt64(0), position: try $0.int64(1), changedBy: try $0.string(2)) }
        let beforeTracks =
            before == nil
            ? []
            : try db.int64Column(
                "SELECT track_id FROM play_queue_item WHERE user_id = ? ORDER BY position", [user.rawValue])
        try db.execute("DELETE FROM play_queue WHERE user_id = ?", [user.rawValue])
        // The change log hears of it, so a user's other devices (and live pages) learn the queue moved.
        if tracks.isEmpty {
            if before != nil { recordPlayQueue(user, .delete) }
            return
        }
        for track in Set(tracks) { try requireTrack(track) }
        var index = currentIndex
        if let currentIndex {
            guard tracks.indices.contains(currentIndex) else {
                throw LibraryError.invalidValue(field: "currentIndex", value: "\(currentIndex)", reason: "the queue has \(tracks.count) songs, counted from 0")
            }
            if let current, tracks[currentIndex] != current {
                throw LibraryError.invalidValue(field: "current", value: "\(current)", reason: "it is not the song at currentIndex \(currentIndex)")
            }
        } else if let current {
            guard let first = tracks.firstIndex(of: current) else {
                throw LibraryError.invalidValue(field: "current", value: "\(current)", reason: "that track is not in the queue")
            }
            index = first
        }
        guard position >= 0 else { throw LibraryError.invalidValue(field: "position", value: "\(position)", reason: "a position is 0 or more milliseconds") }
        if let before {
            let same =
                beforeTracks == tracks.map(\.rawValue) && before.index == index.map { Int64($0) } && before.position == Int64(position)
                && before.changedBy == changedBy
            if !same { recordPlayQueue(user, .update) }
        } else {
            recordPlayQueue(user, .insert)
        }
        try db.execute(
            "INSERT INTO play_queue (user_id, current, position, changed, changed_by, current_index) VALUES (?, ?, ?, ?, ?, ?)",
            [user.rawValue, index.map { tracks[$0].rawValue }, Int64(position), now, changedBy, index.map { Int64($0) }])
        for (index, track) in tracks.enumerated() {
            try db.execute("INSERT INTO play_queue_item (user_id, position, track_id) VALUES (?, ?, ?)", [user.rawValue, Int64(index), track.rawValue])
        }
    }

    /// Sets what `shelf user` and Subsonic's updateUser change beside the password: email, roles
    /// and the bit-rate limit (nil leaves a value as it is).
    public func setProfile(_ user: UserID, email: String? = nil, roles: UserRoles? = nil, maxBitRate: Int? = nil) throws {
        _ = try requireUser(user)
        if let email {
            guard email.utf8.count <= 320, !email.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw LibraryError.invalidValue(
                    field: "email", value: email.debugDescription, reason: "an address of at most 320 bytes without control characters")
            }
            try db.execute("UPDATE user SET email = ? WHERE id = ?", [email, user.rawValue])
        }
        if let roles { try db.execute("UPDATE user SET roles = ? WHERE id = ?", [roles.stored, user.rawValue]) }
        if let maxBitRate {
            guard (0...10_000).contains(maxBitRate) else {
                throw LibraryError.invalidValue(field: "maxBitRate", value: "\(maxBitRate)", reason: "kbit/s from 0 (no limit) to 10000")
            }
            try db.execute("UPDATE user SET max_bit_rate = ? WHERE id = ?", [Int64(maxBitRate), user.rawValue])
        }
    }

    // MARK: Per-user track data

    /// A track that does not exist, or that the current reader may not see (`LibraryScope.current`:
    /// nobody stars, rates, plays, bookmarks, queues, shares or lists what they cannot see), is
    /// `trackNotFound`, the same for both.
    func requireTrack(_ id: TrackID) throws {
        let scope = LibraryScope.current
        guard let path = try db.scalar(String.self, "SELECT path FROM track WHERE id = ?", [id.rawValue]), scope.contains(path: path) else {
            throw LibraryError.trackNotFound(id)
        }
    }

    /// `requireTrack` for each of `tracks` when the current reader is limited (a whole-library
    /// reader's playlist writes check nothing more than before).
    func requireVisible(_ tracks: [TrackID]) throws {
        guard !LibraryScope.current.isAll else { return }
        for track in Set(tracks) { try requireTrack(track) }
    }

    /// A row holding nothing is the same as no row; dropping it keeps the table to what users did.
    private func dropIfEmpty(_ user: UserID, _ track: TrackID) throws {
        try db.execute(
            """
            DELETE FROM user_track WHERE user_id = ? AND track_id = ?
              AND starred IS NULL AND rating IS NULL AND play_count = 0 AND last_played IS NULL
            """, [user.rawValue, track.rawValue])
    }

    /// Stars or unstars tracks for one user (starring again keeps the first star's time). Logged
    /// as track updates in the `userData` group.
    public func setStarred(_ tracks: [TrackID], by user: UserID, _ starred: Bool) throws {
        _ = try requireUser(user)
        var seen = Set<TrackID>()
        for track in tracks where seen.insert(track).inserted {
            try requireTrack(track)
            if starred {
                try db.execute(
                    """
                    INSERT INTO user_track (user_id, track_id, starred) VALUES (?, ?, ?)
                    ON CONFLICT (user_id, track_id) DO UPDATE SET starred = excluded.starred WHERE starred IS NULL
                    """, [user.rawValue, track.rawValue, now])
            } else {
                try db.execute(
                    "UPDATE user_track SET starred = NULL WHERE user_id = ? AND track_id = ? AND starred IS NOT NULL",
                    [user.rawValue, track.rawValue])
            }
            guard db.changes > 0 else { continue }
            if !starred { try dropIfEmpty(user, track) }
            try recordTrackSideData(track, .userData)
        }
    }

    /// Stars or unstars albums or artists (views of `kind`) for one user; starring again keeps the
    /// first star's time. Groups are not checked here: the store does not hold views (callers
    /// look them up in the mirror first). Not in the change log, which records tracks and playlists.
    public func setGroupsStarred(_ groups: [GroupID], kind: GroupKind, by user: UserID, _ starred: Bool) throws {
        _ = try requireUser(user)
        for group in Set(groups) {
            if starred {
                try db.execute(
                    "INSERT INTO user_group_star (user_id, kind, group_id, starred) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    [user.rawValue, kind.code, group.rawValue, now])
            } else {
                try db.execute("DELETE FROM user_group_star WHERE user_id = ? AND kind = ? AND group_id = ?", [user.rawValue, kind.code, group.rawValue])
            }
        }
    }

    /// Sets one user's rating of a track (0…100; nil clears it). The owner's rating is the track's
    /// own too (nil becomes 0, the track's "unrated").
    public func setRating(_ track: TrackID, by user: UserID, _ rating: Int?) throws {
        let found = try requireUser(user)
        if let rating, !(0...100).contains(rating) {
            throw LibraryError.invalidValue(field: "rating", value: String(rating), reason: "must be from 0 to 100")
        }
        try requireTrack(track)
        if let rating {
            try db.execute(
                """
                INSERT INTO user_track (user_id, track_id, rating) VALUES (?, ?, ?)
                ON CONFLICT (user_id, track_id) DO UPDATE SET rating = excluded.rating WHERE rating IS NOT excluded.rating
                """, [user.rawValue, track.rawValue, rating])
        } else {
            try db.execute(
                "UPDATE user_track SET rating = NULL WHERE user_id = ? AND track_id = ? AND rating IS NOT NULL",
                [user.rawValue, track.rawValue])
        }
        if db.changes > 0 {
            if rating == nil { try dropIfEmpty(user, track) }
            try recordTrackSideData(track, .userData)
        }
        if found.isOwner { try updateTrack(track) { $0.rating = rating ?? 0 } }
    }

    /// Gives a playlist to a user (`isPublic`: others may see it too) or, with nil, back to the
    /// library. Logged as a playlist update in the `metadata` group.
    public func setPlaylistOwner(_ playlist: PlaylistID, _ user: UserID?, public isPublic: Bool) throws {
        guard try self.playlist(playlist) != nil else { throw LibraryError.playlistNotFound(playlist) }
        if let user { _ = try requireUser(user) }
        let old = try db.queryOne("SELECT user_id, public FROM playlist_owner WHERE playlist_id = ?", [playlist.rawValue]) {
            PlaylistOwnership(user: UserID(try $0.int64(0)), isPublic: try $0.get(1))
        }
        let new = user.map { PlaylistOwnership(user: $0, isPublic: isPublic) }
        guard old != new else { return }
        if let new, let owner = new.user {
            try db.execute(
                "INSERT OR REPLACE INTO playlist_owner (playlist_id, user_id, public) VALUES (?, ?, ?)",
                [playlist.rawValue, owner.rawValue, new.isPublic])
        } else {
            try db.execute("DELETE FROM playlist_owner WHERE playlist_id = ?", [playlist.rawValue])
        }
        recordPlaylistSideData(playlist, .metadata)
    }
}
