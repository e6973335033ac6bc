import Foundation
import ShelfCore
import ShelfDatabase

/// Tracks of the library as `shelf import-from` matches against them: by path (after the
/// `--map` rewrites, compared in Unicode NFC so a path written on macOS matches), then by
/// MusicBrainz recording ID, then by folded artist and title, narrowed by album and by a length
/// within 2 s. Anything left with more than one candidate is ambiguous and never guessed.
struct TrackMatcher: Sendable {
    struct Candidate: Sendable {
        let id: TrackID
        let album: String
        let duration: Double?
        let groups: TrackGroupIDs
    }

    enum Outcome: Sendable {
        case matched(TrackID)
        case ambiguous(String)
        case unmatched(String)
    }

    let mappings: [(old: String, new: String)]
    var candidates: [Candidate] = []
    var byPath: [String: Int] = [:]
    var byMBID: [String: [Int]] = [:]
    var byName: [String: [Int]] = [:]
    var byAlbum: [String: GroupID] = [:]
    /// Each album artist's name (folded) with the ID of its first album: a name whose tracks carry
    /// a MusicBrainz artist ID has no ID of the name alone (of namesakes, the first met).
    var byArtist: [String: GroupID] = [:]

    /// Letters folded as people compare names: case, accents and width ignored, spaces collapsed.
    static func fold(_ text: String) -> String {
        text.precomposedStringWithCanonicalMapping.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
            .split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    static func nameKey(_ artist: String, _ title: String) -> String { fold(artist) + "\u{1}" + fold(title) }

    static func load(_ library: Library, mappings: [(old: String, new: String)]) async throws -> TrackMatcher {
        var matcher = TrackMatcher(mappings: mappings)
        let rows = try await library.read { db in
            try db.query("SELECT id, path, title, artist, album, album_artist, duration, compilation, details FROM track ORDER BY id", []) { row in
                Track(
                    id: TrackID(try row.int64(0)), path: try row.string(1), title: row.optionalString(2), artist: row.optionalString(3),
                    album: row.optionalString(4), albumArtist: row.optionalString(5), duration: row.optionalDouble(6),
                    compilation: (row.optionalInt64(7) ?? 0) != 0, details: TrackDetails(encoded: row.optionalString(8)))
            }
        }
        for track in rows {
            let index = matcher.candidates.count
            let groups = Library.groupIDs(of: track)
            matcher.candidates.append(Candidate(id: track.id, album: fold(track.album ?? ""), duration: track.duration, groups: groups))
            matcher.byPath[track.path.precomposedStringWithCanonicalMapping] = index
            if let mbid = track.details.musicBrainz.recordingID?.lowercased() { matcher.byMBID[mbid, default: []].append(index) }
            matcher.byName[nameKey(track.artist ?? "", track.title ?? ""), default: []].append(index)
            if let album = groups.album {
                matcher.byAlbum[fold(track.album ?? "") + "\u{1}" + fold(track.albumArtist ?? track.artist ?? ""), default: album] = album
            }
            let ownerName = SortKey.isBlank(track.albumArtist) ? track.artist : track.albumArtist
            if let owner = groups.albumArtist, !track.compilation, track.details.albumArtists.count <= 1, let ownerName {
                matcher.byArtist[fold(ownerName), default: owner] = owner
            }
        }
        return matcher
    }

    /// `path` after the first `--map` whose old prefix it starts with (at a folder boundary).
    func mapped(_ path: String) -> String {
        for (old, new) in mappings {
            let prefix = old.hasSuffix("/") ? String(old.dropLast()) : old
            if path == prefix || path.hasPrefix(prefix + "/") { return (new.hasSuffix("/") ? String(new.dropLast()) : new) + path.dropFirst(prefix.count) }
        }
        return path
    }

    func match(_ track: ForeignTrack) -> Outcome {
        if let path = track.path, let index = byPath[mapped(path).precomposedStringWithCanonicalMapping] { return .matched(candidates[index].id) }
        if let mbid = track.mbid?.lowercased(), let found = byMBID[mbid] {
            if found.count == 1 { return .matched(candidates[found[0]].id) }
            if case .matched(let id) = narrow(found, track) { return .matched(id) }
        }
        guard !track.title.isEmpty, let found = byName[Self.nameKey(track.artist, track.title)] else {
            return .unmatched("no track in Shelf has this path, recording ID, or artist and title")
        }
        if found.count == 1 { return .matched(candidates[found[0]].id) }
        return narrow(found, track)
    }

    private func narrow(_ found: [Int], _ track: ForeignTrack) -> Outcome {
        var left = found
        if let album = track.album.map(Self.fold), !album.isEmpty {
            let same = left.filter { candidates[$0].album == album }
            if !same.isEmpty { left = same }
        }
        if left.count > 1, let duration = track.duration {
            let close = left.filter { candidates[$0].duration.map { abs($0 - duration) <= 2 } ?? false }
            if !close.isEmpty { left = close }
        }
        if left.count == 1 { return .matched(candidates[left[0]].id) }
        return .ambiguous(
            "\(left.count) tracks in Shelf have this artist and title\(track.album == nil ? "" : " and album")\(track.duration == nil ? "" : " and length")")
    }
}

/// One source user's data, matched to Shelf's tracks.
struct PlannedUser {
    var name: String?
    var key: String
    var tracks: [(TrackID, ForeignTrackData)] = []
    var albumStars: [(GroupID, Date)] = []
    var artistStars: [(GroupID, Date)] = []
    var playlists: [(ForeignPlaylist, [TrackID])] = []
    var queue: (tracks: [TrackID], current: Int?, positionMs: Int, changedBy: String)?
    var bookmarks: [(TrackID, Int, String)] = []
    var listens: [(TrackID?, ForeignListen)] = []
    var dateAdded: [(TrackID, Date)] = []
}

/// A dry run's batch, rolled back with what it would have applied.
private struct DryRunRollback: Error {
    let applied: ForeignImportReport.Applied
}

extension Library {
    /// Reads another program's stars, ratings, plays, playlists, queues, bookmarks or listens and
    /// applies them to Shelf's users (`shelf import-from`). Each source track is matched without
    /// guessing; what is ambiguous or unmatched is reported with the reason. Writes go through the
    /// change log in transactions of a few hundred items, and a second import of the same file
    /// changes nothing (counts add only what an earlier import of the same source did not). A dry
    /// run does the same work in one transaction and rolls it back.
    public func importFrom(_ source: ForeignSource, at url: URL, options: ForeignImportOptions = ForeignImportOptions()) async throws -> ForeignImportReport {
        if source == .listenbrainz || source == .lastfm { return try await importListens(source, at: url, options: options) }
        let data = try ForeignReaders.read(source, at: url, user: source == .navidrome ? options.user : nil)
        var report = ForeignImportReport(source: source, path: url.path, dryRun: options.dryRun)
        let matcher = try await TrackMatcher.load(self, mappings: options.mappings)
        var resolver = TrackResolver(matcher: matcher)
        func resolve(_ track: ForeignTrack, kind: String) -> TrackID? { resolver.resolve(track, kind: kind, into: &report) }
        var plans: [PlannedUser] = []
        for user in data.users {
            var plan = PlannedUser(name: user.name, key: user.key)
            for item in user.tracks { if let id = resolve(item.track, kind: "track") { plan.tracks.append((id, item)) } }
            for (album, artist, starred) in user.albumStars {
                if let id = matcher.byAlbum[TrackMatcher.fold(album) + "\u{1}" + TrackMatcher.fold(artist)] {
                    plan.albumStars.append((id, starred))
                } else {
                    report.items.append(
                        ForeignIssue(
                            kind: "album", item: "\(artist) – \(album)", outcome: "unmatched", reason: "no album in Shelf has this name and album artist"))
                }
            }
            for (name, starred) in user.artistStars {
                plan.artistStars.append((matcher.byArtist[TrackMatcher.fold(name)] ?? Library.artistID(named: name), starred))
            }
            for list in user.playlists { plan.playlists.append((list, list.items.compactMap { resolve($0, kind: "playlist item") })) }
            if let queue = user.queue {
                // A song of the queue that is not in Shelf leaves; the current one is found again by position.
                var tracks: [TrackID] = []
                var current: Int?
                for (index, item) in queue.items.enumerated() {
                    guard let id = resolve(item, kind: "queue item") else { continue }
                    if index == queue.current { current = tracks.count }
                    tracks.append(id)
                }
                if !tracks.isEmpty { plan.queue = (tracks, current, current == nil ? 0 : queue.positionMs, queue.changedBy) }
            }
            for (track, position, comment) in user.bookmarks { if let id = resolve(track, kind: "bookmark") { plan.bookmarks.append((id, position, comment)) } }
            for listen in user.listens { plan.listens.append((resolve(listen.track, kind: "listen"), listen)) }
            for (track, date) in user.dateAdded { if let id = resolve(track, kind: "track") { plan.dateAdded.append((id, date)) } }
            plans.append(plan)
        }
        report.items.sort { ($0.outcome, $0.kind, $0.item) < ($1.outcome, $1.kind, $1.item) }
        try await apply(plans, source: source, sourceKey: data.sourceKey, options: options, report: &report)
        return report
    }

    private func apply(
        _ plans: [PlannedUser], source: ForeignSource, sourceKey: String, options: ForeignImportOptions, report: inout ForeignImportReport
    ) async throws {
        // Whose data each source user becomes: Navidrome's users by name; the others the named user or the owner.
        let users = try await self.users()
        var targets: [(plan: PlannedUser, user: String, create: Bool)] = []
        for plan in plans {
            if let name = plan.name {
                let existing = users.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }
                targets.append((plan, existing?.name ?? name, existing == nil))
            } else {
                targets.append((plan, try Self.importTarget(options.user, among: users), false))
            }
        }
        report.users = targets.map(\.user)
        report.usersCreated = targets.filter(\.create).map(\.user)
        let program = source.rawValue
        typealias Step = @LibraryActor @Sendable (WriteBatch, inout ForeignImportReport.Applied) throws -> Void
        var steps: [Step] = []
        for (plan, name, create) in targets {
            let key = sourceKey == plan.key ? sourceKey : "\(sourceKey)|\(plan.key)"
            steps.append { batch, _ in
                if create, try batch.user(named: name) == nil {
                    // A made user has no password anyone knows: they are given one with `shelf user passwd`.
                    _ = try batch.addUser(name: name, password: Secrets.randomID(32), admin: false)
                }
            }
            for chunk in plan.tracks.chunked(400) {
                steps.append { batch, applied in
                    let user = try batch.requireNamedUser(name)
                    for (id, item) in chunk { try batch.importTrackData(id, item, user: user, source: key, applied: &applied) }
                }
            }
            for chunk in plan.dateAdded.chunked(400) {
                steps.append { batch, applied in
                    for (id, date) in chunk {
                        if let track = try batch.track(id), date < track.dateAdded {
                            try batch.updateTrack(id) { $0.dateAdded = date }
                            applied.datesAdded += 1
                        }
                    }
                }
            }
            let (albumStars, artistStars, queue, bookmarks) = (plan.albumStars, plan.artistStars, plan.queue, plan.bookmarks)
            steps.append { batch, applied in
                let user = try batch.requireNamedUser(name)
                for (id, date) in albumStars { applied.albumStars += try batch.importGroupStar(id, kind: .album, user: user.id, at: date) }
                for (id, date) in artistStars { applied.artistStars += try batch.importGroupStar(id, kind: .albumArtist, user: user.id, at: date) }
                if let queue, try batch.importQueue(queue.tracks, current: queue.current, position: queue.positionMs, changedBy: queue.changedBy, user: user.id)
                {
                    applied.queues += 1
                }
                for (id, position, comment) in bookmarks {
                    applied.bookmarks += try batch.importBookmark(id, position: position, comment: comment, user: user.id)
                }
            }
            for (list, items) in plan.playlists {
                steps.append { batch, applied in
                    let user = try batch.requireNamedUser(name)
                    try batch.importPlaylist(list, items: items, user: user.id, source: key, applied: &applied)
                }
            }
            for chunk in plan.listens.chunked(1_000) {
                steps.append { batch, applied in
                    let user = try batch.requireNamedUser(name)
                    for (id, listen) in chunk { try batch.importListen(listen, track: id, user: user, program: program, applied: &applied) }
                }
            }
        }
        if options.dryRun {
            do {
                try await write { batch in
                    var applied = ForeignImportReport.Applied()
                    for step in steps { try step(batch, &applied) }
                    throw DryRunRollback(applied: applied)
                }
            } catch let rollback as DryRunRollback {
                report.applied = rollback.applied
            }
            return
        }
        var applied = ForeignImportReport.Applied()
        for (index, step) in steps.enumerated() {
            try Task.checkCancellation()
            let before = applied
            applied = try await write { batch in
                var running = before
                try step(batch, &running)
                return running
            }
            options.progress?(index + 1, steps.count)
        }
        report.applied = applied
    }
}

extension Library {
    /// The Shelf user a source without users imports into: `name`, or the owner.
    static func importTarget(_ name: String?, among users: [User]) throws -> String {
        if let name {
            guard let user = users.first(where: { $0.name.caseInsensitiveCompare(name) == .orderedSame }) else { throw LibraryError.userNotFound(name) }
            return user.name
        }
        guard let owner = users.first(where: \.isOwner) else {
            throw LibraryError.invalidValue(field: "user", value: "(none)", reason: "the library has no users: add one, or name one with --user")
        }
        return owner.name
    }

    /// A ListenBrainz or Last.fm export, a chunk of 5,000 listens at a time (matched, then
    /// written in a transaction of its own), so that a history of millions never sits in memory.
    /// A dry run reads what each chunk would add without writing.
    func importListens(_ source: ForeignSource, at url: URL, options: ForeignImportOptions) async throws -> ForeignImportReport {
        var chunks = try ListenChunks(source, url)
        var report = ForeignImportReport(source: source, path: url.path, dryRun: options.dryRun)
        let name = try Self.importTarget(options.user, among: try await users())
        report.users = [name]
        var resolver = TrackResolver(matcher: try await TrackMatcher.load(self, mappings: options.mappings))
        let program = source.rawValue
        var applied = ForeignImportReport.Applied()
        // In a dry run, the listens this run would already have added (an export may repeat one).
        var added = Set<String>()
        while let chunk = try chunks.next(5_000) {
            try Task.checkCancellation()
            let matched = chunk.map { (resolver.resolve($0.track, kind: "listen", into: &report), $0) }
            let before = applied
            if options.dryRun {
                let fresh = try await read { db -> [(TrackID?, ForeignListen)] in
                    guard let user = try db.queryOne("SELECT id FROM user WHERE name = ?", [name], { UserID(try $0.int64(0)) }) else { return [] }
                    return try matched.filter { try !WriteBatch.listenExists(db, user: user, $0.1) }
                }
                for (id, listen) in fresh where added.insert(ListenRows.importKey(listen)).inserted {
                    applied.listens += 1
                    if id != nil { applied.plays += 1 }
                }
            } else {
                applied = try await write { batch in
                    var running = before
                    let user = try batch.requireNamedUser(name)
                    for (id, listen) in matched { try batch.importListen(listen, track: id, user: user, program: program, applied: &running) }
                    return running
                }
            }
            options.progress?(Int(min(chunks.bytesRead, Int64(Int.max))), Int(min(max(chunks.totalBytes, 1), Int64(Int.max))))
        }
        report.applied = applied
        report.items.sort { ($0.outcome, $0.kind, $0.item) < ($1.outcome, $1.kind, $1.item) }
        return report
    }
}

/// Matching remembered per source track, so that each is matched once and reported once.
struct TrackResolver {
    let matcher: TrackMatcher
    var outcomes: [ForeignTrack: TrackMatcher.Outcome] = [:]

    /// The Shelf track `track` is, or nil with the reason added to the report the first time.
    mutating func resolve(_ track: ForeignTrack, kind: String, into report: inout ForeignImportReport) -> TrackID? {
        if let known = outcomes[track] {
            if case .matched(let id) = known { return id }
            return nil
        }
        let outcome = matcher.match(track)
        outcomes[track] = outcome
        switch outcome {
        case .matched(let id):
            report.matched += 1
            return id
        case .ambiguous(let reason):
            report.ambiguous += 1
            report.items.append(ForeignIssue(kind: kind, item: track.label, outcome: "ambiguous", reason: reason))
        case .unmatched(let reason):
            report.unmatched += 1
            report.items.append(ForeignIssue(kind: kind, item: track.label, outcome: "unmatched", reason: reason))
        }
        return nil
    }
}

extension Array {
    /// The array in pieces of at most `size`.
    func chunked(_ size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}

/// What an import writes, each change made only where it changes something, so that the same
/// import again writes nothing and logs nothing.
extension WriteBatch {
    func requireNamedUser(_ name: String) throws -> User {
        guard let user = try user(named: name) else { throw LibraryError.userNotFound(name) }
        return user
    }

    /// A track's star (with its date), rating (where Shelf has none), plays (what the source
    /// counted beyond what an earlier import of it added), last-played, skips (the owner's) and
    /// MusicBrainz IDs (where Shelf has none).
    func importTrackData(_ id: TrackID, _ item: ForeignTrackData, user: User, source: String, applied: inout ForeignImportReport.Applied) throws {
        let current = try db.queryOne(
            "SELECT starred, rating, last_played FROM user_track WHERE user_id = ? AND track_id = ?", [user.id.rawValue, id.rawValue]
        ) { (try $0.get(0, as: Date?.self), $0.optionalInt64(1), try $0.get(2, as: Date?.self)) }
        if let starred = item.starred, current?.0 == nil {
            try db.execute(
                """
                INSERT INTO user_track (user_id, track_id, starred) VALUES (?, ?, ?)
                ON CONFLICT (user_id, track_id) DO UPDATE SET starred = excluded.starred
                """, [user.id.rawValue, id.rawValue, starred])
            try recordTrackSideData(id, .userData)
            applied.stars += 1
        }
        if let rating = item.rating, current?.1 == nil {
            try setRating(id, by: user.id, rating)
            applied.ratings += 1
        }
        let key = "track:\(item.track.key)"
        let counted = try importedCount(user.id, source, key)
        let added = max(0, item.plays - counted)
        let later = item.lastPlayed.map { played in current?.2.map { played > $0 } ?? true } ?? false
        if added > 0 || later {
            try countPlays(id, user: user, plays: added, lastPlayed: later ? item.lastPlayed : nil)
            applied.plays += added
        }
        if item.plays > counted { try setImportedCount(user.id, source, key, item.plays) }
        if item.skips > 0, user.isOwner {
            let skipKey = "skips:\(item.track.key)"
            let skipped = try importedCount(user.id, source, skipKey)
            if item.skips > skipped {
                try updateTrack(id) { $0.skipCount += item.skips - skipped }
                try setImportedCount(user.id, source, skipKey, item.skips)
            }
        }
        if item.recordingID != nil || item.releaseID != nil, let track = try track(id) {
            let ids = track.details.musicBrainz
            if (ids.recordingID == nil && item.recordingID != nil) || (ids.releaseID == nil && item.releaseID != nil) {
                try updateTrack(id) { track in
                    if track.details.musicBrainz.recordingID == nil { track.details.musicBrainz.recordingID = item.recordingID }
                    if track.details.musicBrainz.releaseID == nil { track.details.musicBrainz.releaseID = item.releaseID }
                }
                applied.musicBrainzIDs += 1
            }
        }
    }

    private func importedCount(_ user: UserID, _ source: String, _ item: String) throws -> Int {
        try db.scalar(Int.self, "SELECT play_count FROM import_applied WHERE user_id = ? AND source = ? AND item = ?", [user.rawValue, source, item]) ?? 0
    }

    private func setImportedCount(_ user: UserID, _ source: String, _ item: String, _ count: Int) throws {
        try db.execute(
            "INSERT INTO import_applied (user_id, source, item, play_count) VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET play_count = excluded.play_count",
            [user.rawValue, source, item, count])
    }

    /// A star on an album or artist with its date; 1 when it is new.
    func importGroupStar(_ group: GroupID, kind: GroupKind, user: UserID, at date: Date) throws -> Int {
        try db.execute(
            "INSERT INTO user_group_star (user_id, kind, group_id, starred) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [user.rawValue, kind.code, group.rawValue, date])
        return db.changes
    }

    /// The play queue, saved when it differs from the user's.
    func importQueue(_ tracks: [TrackID], current: Int?, position: Int, changedBy: String, user: UserID) throws -> Bool {
        let saved = try db.query("SELECT track_id FROM play_queue_item WHERE user_id = ? ORDER BY position", [user.rawValue]) { TrackID(try $0.int64(0)) }
        let state = try db.queryOne("SELECT current_index, position FROM play_queue WHERE user_id = ?", [user.rawValue]) {
            ($0.optionalInt64(0).map { Int($0) }, Int(try $0.int64(1)))
        }
        if saved == tracks, state?.0 == current, state?.1 == position { return false }
        try savePlayQueue(
            of: user, tracks: tracks, current: current.map { tracks[$0] }, currentIndex: current, position: position, changedBy: changedBy)
        return true
    }

    /// A bookmark, saved when it differs; 1 when saved.
    func importBookmark(_ track: TrackID, position: Int, comment: String, user: UserID) throws -> Int {
        let saved = try db.queryOne("SELECT position, comment FROM bookmark WHERE user_id = ? AND track_id = ?", [user.rawValue, track.rawValue]) {
            (Int(try $0.int64(0)), try $0.string(1))
        }
        if let saved, saved.0 == position, saved.1 == comment { return 0 }
        try saveBookmark(of: user, track: track, position: position, comment: comment)
        return 1
    }

    /// A playlist of the user's, made the first time and brought to the source's order after.
    func importPlaylist(_ list: ForeignPlaylist, items: [TrackID], user: UserID, source: String, applied: inout ForeignImportReport.Applied) throws {
        let key = "playlist:\(list.key)"
        let known = try db.scalar(
            Int64.self, "SELECT play_count FROM import_applied WHERE user_id = ? AND source = ? AND item = ?", [user.rawValue, source, key])
        if let known, try playlist(PlaylistID(known)) != nil {
            guard try playlistItems(PlaylistID(known)) != items else { return }
            try setPlaylistItems(PlaylistID(known), items)
            applied.playlistItems += items.count
            return
        }
        let name = SortKey.isBlank(list.name) ? "Imported playlist" : list.name
        let id = try createPlaylist(Playlist(name: name))
        try setPlaylistOwner(id, user, public: list.isPublic)
        try setPlaylistItems(id, items)
        try db.execute(
            "INSERT INTO import_applied (user_id, source, item, play_count) VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET play_count = excluded.play_count",
            [user.rawValue, source, key, id.rawValue])
        applied.playlists += 1
        applied.playlistItems += items.count
    }

    /// Whether the user has this listen already (the same second, artist and title).
    nonisolated static func listenExists(_ db: Connection, user: UserID, _ listen: ForeignListen) throws -> Bool {
        try db.scalar(
            Int.self, "SELECT 1 FROM listen WHERE user_id = ? AND played_at = ? AND artist = ? AND title = ?",
            [user.rawValue, listen.playedAt, listen.track.artist, listen.track.title]) != nil
    }

    /// A listen from an export, kept once (the same second, artist and title is the same
    /// listen); a matched one counts a play.
    func importListen(_ listen: ForeignListen, track: TrackID?, user: User, program: String, applied: inout ForeignImportReport.Applied) throws {
        guard try !Self.listenExists(db, user: user.id, listen) else { return }
        try db.execute(
            """
            INSERT INTO listen (user_id, track_id, played_at, source, artist, title, album, duration, recording_mbid)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                user.id.rawValue, track?.rawValue, listen.playedAt, ListenSource.imported(program).rawValue, listen.track.artist, listen.track.title,
                listen.track.album ?? "", listen.track.duration, listen.track.mbid,
            ])
        applied.listens += 1
        if let track {
            try countPlays(track, user: user, plays: 1, lastPlayed: listen.playedAt)
            applied.plays += 1
        }
    }
}
