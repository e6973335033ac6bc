import Foundation
import ShelfCore
import ShelfDatabase

/// The listen log and the scrobble outbox, written inside a `library.write` batch: a play, its
/// counts and its queued scrobbles commit together or not at all.
extension WriteBatch {
    // MARK: Listens

    /// Counts one play of a track by one user at `date` and keeps it in the listen log with its
    /// source and client; the user's play count and last-played follow in this transaction
    /// (`lastPlayed` never moves back, so a late scrobble of an old play is still counted). The
    /// owner's plays are the track's own too. A listen the services would count is queued for
    /// each service the user linked, unless their rules exclude it. Returns the listen's ID.
    @discardableResult
    public func recordPlay(
        _ track: TrackID, by user: UserID, at date: Date, heard: Double? = nil, source: ListenSource = .api, client: String = ""
    ) throws -> Int64 {
        let found = try requireUser(user)
        try requireTrack(track)
        guard let stored = try self.track(track) else { throw LibraryError.trackNotFound(track) }
        if let heard, !(heard >= 0 && heard.isFinite) {
            throw LibraryError.invalidValue(field: "heard", value: String(heard), reason: "must be a number of seconds, 0 or more")
        }
        let listen = try insertListen(of: stored, user: user, at: date, heard: heard, source: source, client: client)
        try countPlays(track, user: found, plays: 1, lastPlayed: date)
        if source.isScrobbled, ScrobbleRule.qualifies(duration: stored.duration, heard: heard),
            try !ScrobbleRules.excludes(stored, client: client, rules: scrobbleRules(of: user), db: db)
        {
            try db.execute(
                """
                INSERT INTO scrobble_outbox (user_id, service, listen_id, played_at)
                SELECT user_id, service, ?, ? FROM scrobble_link WHERE user_id = ?
                """, [listen, date, user.rawValue])
        }
        return listen
    }

    /// Adds `plays` to a user's count of a track and moves last-played forward to `lastPlayed`.
    func countPlays(_ track: TrackID, user: User, plays: Int, lastPlayed: Date?) throws {
        guard plays > 0 || lastPlayed != nil else { return }
        try db.execute(
            """
            INSERT INTO user_track (user_id, track_id, play_count, last_played) VALUES (?1, ?2, ?3, ?4)
            ON CONFLICT (user_id, track_id) DO UPDATE SET play_count = play_count + ?3,
              last_played = CASE WHEN ?4 IS NULL THEN last_played ELSE max(coalesce(last_played, ?4), ?4) END
            """, [user.id.rawValue, track.rawValue, plays, lastPlayed])
        try recordTrackSideData(track, .userData)
        if user.isOwner {
            try updateTrack(track) { track in
                track.playCount += plays
                if let lastPlayed { track.lastPlayed = max(track.lastPlayed ?? lastPlayed, lastPlayed) }
            }
        }
    }

    /// Writes a listen row with the track's text as it is now.
    func insertListen(of track: Track, user: UserID, at date: Date, heard: Double?, source: ListenSource, client: String) throws -> Int64 {
        try db.execute(
            """
            INSERT INTO listen (user_id, track_id, played_at, heard, source, client, artist, title, album, album_artist,
                                duration, recording_mbid, release_mbid)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                user.rawValue, track.id.rawValue, date, heard, source.rawValue, String(client.prefix(200)), track.artist ?? "",
                track.title ?? "", track.album ?? "", track.albumArtist ?? "", track.duration, track.details.musicBrainz.recordingID,
                track.details.musicBrainz.releaseID,
            ])
        return db.lastInsertRowID
    }

    // MARK: Scrobbling

    /// A user's rules for what is not scrobbled.
    public func scrobbleRules(of user: UserID) throws -> ScrobbleRules { try ScrobbleRules.read(user, db) }

    /// Replaces a user's rules for what is not scrobbled (listens already queued stay queued).
    public func setScrobbleRules(_ user: UserID, _ rules: ScrobbleRules) throws {
        _ = try requireUser(user)
        let text = rules.isEmpty ? nil : String(decoding: try JSONEncoder().encode(rules), as: UTF8.self)
        try db.execute("UPDATE user SET scrobble_rules = ? WHERE id = ?", [text, user.rawValue])
    }

    /// Links a user to a service with its credential (a ListenBrainz token, a Last.fm session
    /// key), stored encrypted; relinking replaces it, resumes a paused queue and keeps what is queued.
    public func linkScrobbling(_ user: UserID, _ service: ScrobbleService, secret: String, account: String, url: String?) throws {
        _ = try requireUser(user)
        guard !secret.isEmpty else { throw LibraryError.invalidValue(field: "\(service) credential", value: "\"\"", reason: "must not be empty") }
        let key = try SecretKey.load(directory: UserRows.keyDirectory(storePath: db.path), create: true)
        let sealed = try PasswordCipher.seal(secret, user: user, key: key)
        try db.execute(
            """
            INSERT INTO scrobble_link (user_id, service, secret, account, url, linked) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (user_id, service) DO UPDATE SET secret = excluded.secret, account = excluded.account, url = excluded.url,
              linked = excluded.linked, paused = NULL, pause_reason = NULL, last_error = NULL
            """, [user.rawValue, service.rawValue, sealed, account, url, now])
        try db.execute(
            "UPDATE scrobble_outbox SET next_attempt = 0 WHERE user_id = ? AND service = ? AND refused IS NULL",
            [user.rawValue, service.rawValue])
    }

    /// Unlinks a service: its credential and everything still queued for it are dropped.
    /// Answers whether there was a link.
    @discardableResult
    public func unlinkScrobbling(_ user: UserID, _ service: ScrobbleService) throws -> Bool {
        try db.execute("DELETE FROM scrobble_outbox WHERE user_id = ? AND service = ?", [user.rawValue, service.rawValue])
        try db.execute("DELETE FROM scrobble_link WHERE user_id = ? AND service = ?", [user.rawValue, service.rawValue])
        return db.changes > 0
    }

    /// Pauses a user's queue for a service after a refusal for good (`reason`, in the service's
    /// words), or resumes it with nil; what is queued stays.
    public func setScrobblingPaused(_ user: UserID, _ service: ScrobbleService, reason: String?) throws {
        try db.execute(
            "UPDATE scrobble_link SET paused = ?, pause_reason = ? WHERE user_id = ? AND service = ?",
            [reason == nil ? nil : now, reason, user.rawValue, service.rawValue])
        if reason == nil {
            try db.execute(
                "UPDATE scrobble_outbox SET next_attempt = 0 WHERE user_id = ? AND service = ? AND refused IS NULL",
                [user.rawValue, service.rawValue])
        }
    }

    /// Marks outbox rows as carried by a request about to go out: if the answer is never
    /// recorded, they are known to be uncertain.
    public func markScrobblesSending(_ ids: [Int64]) throws {
        for id in ids { try db.execute("UPDATE scrobble_outbox SET sending = 1, attempts = attempts + 1 WHERE id = ?", [id]) }
    }

    /// The service took these rows: they leave the outbox and count as sent.
    public func markScrobblesSent(_ ids: [Int64], user: UserID, service: ScrobbleService) throws {
        guard !ids.isEmpty else { return }
        for id in ids { try db.execute("DELETE FROM scrobble_outbox WHERE id = ?", [id]) }
        try db.execute(
            "UPDATE scrobble_link SET sent = sent + ?, last_sent = ?, last_error = NULL WHERE user_id = ? AND service = ?",
            [ids.count, now, user.rawValue, service.rawValue])
    }

    /// The send failed for a while (the service is down or slow): try again at `next`. Rows whose
    /// answer never came stay uncertain (`answered` false).
    public func markScrobblesRetry(_ ids: [Int64], user: UserID, service: ScrobbleService, error: String, next: Date, answered: Bool) throws {
        for id in ids {
            try db.execute("UPDATE scrobble_outbox SET next_attempt = ?, sending = CASE WHEN ? THEN 0 ELSE sending END WHERE id = ?", [next, answered, id])
        }
        try db.execute(
            "UPDATE scrobble_link SET last_error = ? WHERE user_id = ? AND service = ?", [error, user.rawValue, service.rawValue])
    }

    /// The service refused this one listen for good (bad data): it stays in the outbox, marked,
    /// so the queue moves on and the listen is not lost from view.
    public func markScrobbleRefused(_ id: Int64, reason: String) throws {
        try db.execute("UPDATE scrobble_outbox SET refused = ?, sending = 0 WHERE id = ?", [reason, id])
    }
}

extension ScrobbleRules {
    /// A user's stored rules (none when unset or unreadable).
    static func read(_ user: UserID, _ db: Connection) throws -> ScrobbleRules {
        guard let text = try db.queryOne("SELECT scrobble_rules FROM user WHERE id = ?", [user.rawValue], { try $0.get(0, as: String?.self) }) ?? nil
        else { return ScrobbleRules() }
        return (try? JSONDecoder().decode(ScrobbleRules.self, from: Data(text.utf8))) ?? ScrobbleRules()
    }

    /// Whether these rules keep a listen of `track` by `client` from the services.
    static func excludes(_ track: Track, client: String, rules: ScrobbleRules, db: Connection) throws -> Bool {
        if rules.isEmpty { return false }
        if rules.clients.contains(where: { $0.caseInsensitiveCompare(client) == .orderedSame }) { return true }
        let genres = track.details.genres.isEmpty ? [track.genre].compactMap { $0 } : track.details.genres
        if genres.contains(where: { g in rules.genres.contains { $0.caseInsensitiveCompare(g) == .orderedSame } }) { return true }
        if !rules.libraries.isEmpty {
            let roots = try db.query("SELECT path, library_id FROM music_root WHERE library_id IS NOT NULL", []) {
                (try $0.string(0), Int(try $0.int64(1)))
            }
            if let library = roots.first(where: { Library.isPath(track.path, under: $0.0) })?.1, rules.libraries.contains(library) { return true }
        }
        return false
    }
}
