import Foundation
import ShelfCore
import ShelfDatabase

/// Reading the listen log, the listening statistics and the scrobble outbox; the writes of one
/// step each (the same methods exist on `WriteBatch` to combine them with other changes).
extension Library {
    /// A page of a user's listens, newest first: those at or after `since` and before `until`,
    /// after the cursor of the previous page.
    public func listens(of user: UserID, since: Date? = nil, until: Date? = nil, after cursor: String? = nil, limit: Int = 100) async throws -> ListenPage {
        let limit = max(1, min(limit, 10_000))
        var position: (Double, Int64)?
        if let cursor {
            guard let decoded = ListenRows.decodeCursor(cursor) else {
                throw LibraryError.invalidValue(field: "cursor", value: cursor, reason: "is not a cursor of this list")
            }
            position = decoded
        }
        return try await read { [position] db in
            var sql = ListenRows.select + " WHERE user_id = ?"
            var arguments: [(any SQLiteBindable)?] = [user.rawValue]
            if let since {
                sql += " AND played_at >= ?"
                arguments.append(since)
            }
            if let until {
                sql += " AND played_at < ?"
                arguments.append(until)
            }
            if let (time, id) = position {
                // A row value, so that SQLite walks the (user_id, played_at, id) index from there.
                sql += " AND (played_at, id) < (?, ?)"
                arguments += [time, id]
            }
            sql += " ORDER BY played_at DESC, id DESC LIMIT ?"
            arguments.append(limit + 1)
            var listens = try db.query(sql, arguments, ListenRows.decode)
            var next: String?
            if listens.count > limit {
                listens.removeLast()
                next = listens.last.map { ListenRows.cursor($0) }
            }
            return ListenPage(listens: listens, nextCursor: next)
        }
    }

    /// Every listen of a user from `since` on, oldest first, handed over in chunks (for exports:
    /// a long history is never held whole).
    public func forEachListen(of user: UserID, since: Date? = nil, chunk: Int = 5_000, _ body: ([Listen]) throws -> Void) async throws {
        var after: (Double, Int64) = (since.map { $0.timeIntervalSince1970 } ?? -Double.greatestFiniteMagnitude, 0)
        while true {
            let position = after
            let listens = try await read { db in
                try db.query(
                    ListenRows.select + " WHERE user_id = ? AND (played_at, id) > (?, ?) ORDER BY played_at, id LIMIT ?",
                    [user.rawValue, position.0, position.1, chunk], ListenRows.decode)
            }
            if listens.isEmpty { return }
            try body(listens)
            guard let last = listens.last else { return }
            after = (last.playedAt.timeIntervalSince1970, last.id)
        }
    }

    /// How many listens a user has in the log.
    public func listenCount(of user: UserID) async throws -> Int {
        try await read { db in try db.scalar(Int.self, "SELECT count(*) FROM listen WHERE user_id = ?", [user.rawValue]) ?? 0 }
    }

    /// What a user played most in `period` (rolling back from `now`), at most `top` of each kind,
    /// and plays per calendar day at `utcOffset` seconds east of UTC.
    public func listeningStats(of user: UserID, period: StatsPeriod, now: Date = Date(), utcOffset: Int = 0, top: Int = 10) async throws -> ListeningStats {
        let from = period.days.map { now.addingTimeInterval(-Double($0) * 86_400) }
        let top = max(1, min(top, 100))
        return try await read { db in
            // One pass over the period's listens, counted in memory: four GROUP BYs would each
            // sort the period again.
            var plays = 0
            var seconds = 0.0
            var artists: [String: Int] = [:]
            var albums: [ListenRows.Pair: Int] = [:]
            var tracks: [ListenRows.Pair: (count: Int, track: Int64?)] = [:]
            var perDay: [Int: Int] = [:]
            try db.forEachRow(
                """
                SELECT artist, title, album, album_artist, track_id, played_at, coalesce(heard, duration, 0) FROM listen
                WHERE user_id = ? AND played_at >= ? AND played_at <= ?
                """, [user.rawValue, from?.timeIntervalSince1970 ?? -Double.greatestFiniteMagnitude, now]
            ) { row in
                let artist = row.optionalString(0) ?? ""
                let title = row.optionalString(1) ?? ""
                let album = row.optionalString(2) ?? ""
                plays += 1
                seconds += row.optionalDouble(6) ?? 0
                if !artist.isEmpty { artists[artist, default: 0] += 1 }
                if !album.isEmpty {
                    let by = row.optionalString(3).flatMap { $0.isEmpty ? nil : $0 } ?? artist
                    albums[ListenRows.Pair(name: album, artist: by), default: 0] += 1
                }
                let key = ListenRows.Pair(name: title, artist: artist)
                let id = row.optionalInt64(4)
                tracks[key, default: (0, nil)].count += 1
                if let id, (tracks[key]?.track ?? 0) < id { tracks[key]?.track = id }
                perDay[Int((((row.optionalDouble(5) ?? 0) + Double(utcOffset)) / 86_400).rounded(.down)), default: 0] += 1
            }
            func ranked<K>(_ counts: [K: Int], _ name: (K) -> String) -> [(K, Int)] {
                counts.sorted { $0.value != $1.value ? $0.value > $1.value : name($0.key) < name($1.key) }.prefix(top).map { ($0.key, $0.value) }
            }
            let topArtists = ranked(artists) { $0 }.map { ListeningStats.Entry(name: $0.0, artist: "", track: nil, plays: $0.1) }
            let topAlbums = ranked(albums) { $0.name }.map { ListeningStats.Entry(name: $0.0.name, artist: $0.0.artist, track: nil, plays: $0.1) }
            let topTracks = ranked(tracks.mapValues(\.count)) { $0.name }.map {
                ListeningStats.Entry(name: $0.0.name, artist: $0.0.artist, track: tracks[$0.0]?.track.map { TrackID($0) }, plays: $0.1)
            }
            let first = from ?? perDay.keys.min().map { Date(timeIntervalSince1970: Double($0) * 86_400 - Double(utcOffset)) }
            let days = ListenRows.days(from: first ?? now, to: now, utcOffset: utcOffset).map { day in
                ListeningStats.Day(date: day.text, plays: perDay[day.number] ?? 0)
            }
            return ListeningStats(
                period: period, from: from, to: now, plays: plays, seconds: seconds, artists: topArtists, albums: topAlbums, tracks: topTracks,
                days: days)
        }
    }

    // MARK: Scrobbling

    /// Each service a user linked, with where its queue stands.
    public func scrobbleStates(of user: UserID) async throws -> [ScrobbleState] {
        try await read { db in
            try db.query(
                """
                SELECT service, account, url, linked, paused, pause_reason, sent, last_sent, last_error,
                  (SELECT count(*) FROM scrobble_outbox o WHERE o.user_id = l.user_id AND o.service = l.service AND refused IS NULL),
                  (SELECT count(*) FROM scrobble_outbox o WHERE o.user_id = l.user_id AND o.service = l.service AND refused IS NOT NULL)
                FROM scrobble_link l WHERE user_id = ? ORDER BY service
                """, [user.rawValue]
            ) { row in
                ScrobbleState(
                    service: ScrobbleService(rawValue: try row.string(0)) ?? .listenbrainz, account: try row.string(1), url: try row.get(2),
                    linked: try row.get(3), paused: try row.get(4), pauseReason: try row.get(5), queued: Int(try row.int64(9)),
                    refused: Int(try row.int64(10)), sent: Int(try row.int64(6)), lastSent: try row.get(7), lastError: try row.get(8))
            }
        }
    }

    /// A user's rules for what is not scrobbled.
    public func scrobbleRules(of user: UserID) async throws -> ScrobbleRules {
        try await read { db in try ScrobbleRules.read(user, db) }
    }

    /// Whether a play of `track` by `client` would be kept from the services by the user's rules
    /// or their rule of length (for now-playing notices, which are not queued).
    public func scrobbleExcluded(_ track: Track, user: UserID, client: String) async throws -> Bool {
        if let duration = track.duration, duration <= 30 { return true }
        return try await read { db in try ScrobbleRules.excludes(track, client: client, rules: ScrobbleRules.read(user, db), db: db) }
    }

    /// The credential a user linked to a service, decrypted (nil when not linked).
    public func scrobbleSecret(of user: UserID, _ service: ScrobbleService) async throws -> String? {
        let directory = self.directory
        return try await read { db in
            guard
                let (name, blob) = try db.queryOne(
                    "SELECT user.name, secret FROM scrobble_link JOIN user ON user.id = user_id WHERE user_id = ? AND service = ?",
                    [user.rawValue, service.rawValue], { (try $0.string(0), try $0.data(1)) })
            else { return nil }
            let key = try SecretKey.load(directory: directory, create: false)
            guard let secret = PasswordCipher.open(blob, user: user, key: key) else {
                throw LibraryError.passwordUnreadable(user: name, keyPath: key.path)
            }
            return secret
        }
    }

    /// The queues with something to send: linked, not paused, holding listens not refused.
    /// `due` is when the first may be tried.
    public func scrobbleQueues() async throws -> [OutboxQueue] {
        try await read { db in
            try db.query(
                """
                SELECT l.user_id, user.name, l.service, l.url,
                  (SELECT next_attempt FROM scrobble_outbox o WHERE o.user_id = l.user_id AND o.service = l.service AND refused IS NULL
                   ORDER BY played_at, id LIMIT 1) AS due
                FROM scrobble_link l JOIN user ON user.id = l.user_id WHERE l.paused IS NULL AND due IS NOT NULL
                """, []
            ) { row in
                OutboxQueue(
                    user: UserID(try row.int64(0)), userName: try row.string(1), service: ScrobbleService(rawValue: try row.string(2)) ?? .listenbrainz,
                    url: try row.get(3), due: try row.double(4) > 0 ? Date(timeIntervalSince1970: try row.double(4)) : nil)
            }
        }
    }

    /// The oldest listens waiting for one service, in the order they were played.
    public func scrobbleOutbox(of user: UserID, _ service: ScrobbleService, limit: Int) async throws -> [OutboxItem] {
        try await read { db in
            try db.query(
                """
                SELECT o.id, o.attempts, o.sending, \(ListenRows.columns("l"))
                FROM scrobble_outbox o JOIN listen l ON l.id = o.listen_id
                WHERE o.user_id = ? AND o.service = ? AND o.refused IS NULL ORDER BY o.played_at, o.id LIMIT ?
                """, [user.rawValue, service.rawValue, max(1, limit)]
            ) { row in
                OutboxItem(id: try row.int64(0), listen: try ListenRows.decode(row, from: 3), attempts: Int(try row.int64(1)), uncertain: try row.int64(2) != 0)
            }
        }
    }
}

/// The listen table's columns, decoding and cursors, in one place.
enum ListenRows {
    static func columns(_ table: String? = nil) -> String {
        let p = table.map { "\($0)." } ?? ""
        return [
            "id", "user_id", "track_id", "played_at", "heard", "source", "client", "artist", "title", "album", "album_artist", "duration",
            "recording_mbid", "release_mbid",
        ].map { p + $0 }.joined(separator: ", ")
    }

    static let select = "SELECT \(columns()) FROM listen"

    static func decode(_ row: Row) throws -> Listen { try decode(row, from: 0) }

    static func decode(_ row: Row, from i: Int32) throws -> Listen {
        Listen(
            id: try row.int64(i), user: UserID(try row.int64(i + 1)), track: row.optionalInt64(i + 2).map { TrackID($0) },
            playedAt: Date(timeIntervalSince1970: try row.double(i + 3)), heard: try row.get(i + 4),
            source: ListenSource(rawValue: try row.string(i + 5)), client: try row.string(i + 6), artist: try row.string(i + 7),
            title: try row.string(i + 8), album: try row.string(i + 9), albumArtist: try row.string(i + 10), duration: try row.get(i + 11),
            recordingMBID: try row.get(i + 12), releaseMBID: try row.get(i + 13))
    }

    /// An opaque position after `listen` in newest-first order.
    static func cursor(_ listen: Listen) -> String {
        Secrets.base64url(Data("\(listen.playedAt.timeIntervalSince1970)|\(listen.id)".utf8))
    }

    static func decodeCursor(_ text: String) -> (Double, Int64)? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), let plain = String(data: data, encoding: .utf8) else { return nil }
        let parts = plain.split(separator: "|")
        guard parts.count == 2, let time = Double(parts[0]), time.isFinite, let id = Int64(parts[1]) else { return nil }
        return (time, id)
    }

    private static func formatter(_ utcOffset: Int) -> DateFormatter {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(secondsFromGMT: utcOffset) ?? TimeZone(identifier: "UTC")
        f.dateFormat = "yyyy-MM-dd"
        return f
    }

    /// What makes an imported listen the same as another: its second, artist and title.
    static func importKey(_ listen: ForeignListen) -> String {
        "\(listen.playedAt.timeIntervalSince1970)\u{1}\(listen.track.artist)\u{1}\(listen.track.title)"
    }

    /// An album or track named with its artist, a key of the statistics' counts.
    struct Pair: Hashable {
        let name: String
        let artist: String
    }

    /// Every calendar day from `from` to `to` at the offset (seconds east of UTC): its
    /// `yyyy-MM-dd` and its number (days since 1970 there), at most 100 years of them.
    static func days(from: Date, to: Date, utcOffset: Int) -> [(text: String, number: Int)] {
        let f = formatter(utcOffset)
        let dayNumber = { (date: Date) in Int(((date.timeIntervalSince1970 + Double(utcOffset)) / 86_400).rounded(.down)) }
        let last = dayNumber(to)
        var number = max(dayNumber(from), last - 36_600)
        var out: [(String, Int)] = []
        while number <= last {
            out.append((f.string(from: Date(timeIntervalSince1970: Double(number) * 86_400 - Double(utcOffset))), number))
            number += 1
        }
        return out
    }
}
