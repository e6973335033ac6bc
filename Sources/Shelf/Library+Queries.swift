import Foundation
import ShelfCore
import ShelfDatabase

/// Browsing: sorted, filtered pages at any depth, snapshots, sections and anchors. Answered by the
/// mirror once it is built, and by the direct path until then; both give the same answers.
extension Library {
    /// Runs `body` with the engine that should answer now, on a reader thread; `direct` asks for the
    /// store's own rows (a list of missing tracks: the mirror holds none).
    func withEngine<T: Sendable>(direct: Bool = false, _ body: @escaping @Sendable (any QueryEngine) throws -> T) async throws -> T {
        _ = try await openedStore()
        if !direct, let mirror = mirrorReaders.withLock({ $0 }) {
            do {
                return try await mirror.read { try body(MirrorQueryEngine(db: $0)) }
            } catch let error as SQLiteError where Self.isDamage(error) {
                await mirrorDamaged(mirror)  // answered below from the store, which the damage does not touch
            } catch let error as SQLiteError {
                throw LibraryError.wrap(error, path: mirror.path, busyTimeoutMilliseconds: configuration.busyTimeoutMilliseconds)
            }
        }
        return try await read { try body(DirectQueryEngine(db: $0)) }
    }

    /// Whether a mirror read failed because the file is damaged (rather than busy or full).
    static func isDamage(_ error: SQLiteError) -> Bool { error.code == .corrupt || error.code == .notADatabase }

    /// A damaged mirror stops answering at once, and is rebuilt from the store: in the background
    /// when this library builds there, else by the next `completeMirror` (the status says building).
    func mirrorDamaged(_ pool: ReadPool) async {
        // Only the first of the reads that met the damage starts the rebuild; a read that began on
        // the old pool must not throw away a rebuild already under way.
        let first = mirrorReaders.withLock { current in
            guard current === pool else { return false }
            current = nil
            return true
        }
        guard first else { return }
        let launch = configuration.buildsMirrorInBackground
        try? await rebuildDamagedMirror(launch: launch)
    }

    @LibraryActor
    private func rebuildDamagedMirror(launch: Bool) async throws {
        try await store().mirror?.rebuild(launch: launch)
    }

    private static func checkLimit(_ limit: Int) throws {
        guard limit >= 0 else { throw LibraryError.invalidValue(field: "limit", value: String(limit), reason: "must be ≥ 0") }
    }

    /// Up to `limit` list rows after `cursor` (from the start when nil), with the next cursor and the total.
    ///
    /// ```swift
    /// let query = LibraryQuery(sort: .album, filter: try FilterParser.parse("genre:jazz year:1955..1965"))
    /// var cursor: PageCursor?
    /// repeat {
    ///     let page = try await library.list(query, after: cursor, limit: 200)
    ///     for row in page.items { print(row.section, row.album ?? "", row.title ?? "") }
    ///     cursor = page.nextCursor
    /// } while cursor != nil
    /// ```
    ///
    /// A cursor keeps its place while others write (it holds the last row's sort key and ID), and
    /// its string form is stable: `PageCursor(_:)` parses it back.
    public func list(_ query: LibraryQuery, after cursor: PageCursor? = nil, limit: Int = 50) async throws -> ListPage {
        try Self.checkLimit(limit)
        return try await withEngine(direct: query.filter.mentionsMissing) { [query = query.within(.current)] in try $0.page(query, after: cursor, limit: limit)
        }
    }

    /// Up to `limit` list rows from row `offset`.
    public func list(_ query: LibraryQuery, offset: Int, limit: Int = 50) async throws -> ListPage {
        try Self.checkLimit(limit)
        guard offset >= 0 else { throw LibraryError.invalidValue(field: "offset", value: String(offset), reason: "must be ≥ 0") }
        return try await withEngine(direct: query.filter.mentionsMissing) { [query = query.within(.current)] in try $0.page(query, offset: offset, limit: limit)
        }
    }

    /// A page of whole tracks (every field) by offset, in `query`'s order.
    public func page(_ query: LibraryQuery, offset: Int = 0, limit: Int = 50) async throws -> TrackPage {
        let list = try await list(query, offset: offset, limit: limit)
        let lookup = try await tracks(ids: list.items.map(\.id))
        return TrackPage(items: lookup.tracks, total: list.total)
    }

    /// Every matching track ID, in order.
    public func snapshot(_ query: LibraryQuery) async throws -> [TrackID] {
        try await withEngine(direct: query.filter.mentionsMissing) { [query = query.within(.current)] in try $0.snapshot(query) }
    }

    /// Each section's name, first index and count, in list order.
    public func sections(_ query: LibraryQuery) async throws -> [SectionInfo] {
        try await withEngine(direct: query.filter.mentionsMissing) { [query = query.within(.current)] in try $0.sections(query) }
    }

    /// The index and an inclusive cursor of a section's first row; nil when the list has none.
    public func anchor(_ section: String, _ query: LibraryQuery) async throws -> SectionAnchor? {
        try await withEngine(direct: query.filter.mentionsMissing) { [query = query.within(.current)] in try $0.anchor(section, query) }
    }

    /// Whether the list has any visible row.
    public func hasRows(_ query: LibraryQuery) async throws -> Bool {
        try await withEngine(direct: query.filter.mentionsMissing) { [query = query.within(.current)] in try $0.hasRows(query) }
    }

    /// The mirror's state, progress, applied change-log position and size.
    @LibraryActor
    public func mirrorStatus() async throws -> MirrorStatus {
        try await store().mirror?.status() ?? MirrorStatus(state: .disabled, builtTracks: 0, totalTracks: 0, appliedSeq: 0, bytesOnDisk: 0)
    }

    /// Rebuilds the mirror from scratch; with `wait`, returns when it is ready.
    @LibraryActor
    public func buildMirror(wait: Bool = true) async throws {
        let store = try await store()
        guard let mirror = store.mirror else { return }
        try await mirror.rebuild(launch: true)
        if wait { try await mirror.waitForBuild() }
    }

    /// Brings the mirror to ready and returns its status: resumes a build from the phase and step
    /// its file reached (or starts one; a disabled mirror is turned on), reporting every chunk and
    /// phase to `progress`. Cancelling the calling task stops the build at its next step, on disk.
    /// With `fresh`, the build starts again from nothing.
    @LibraryActor @discardableResult
    public func completeMirror(fresh: Bool = false, progress: (@Sendable (MirrorBuildProgress) -> Void)? = nil) async throws -> MirrorStatus {
        let store = try await store()
        guard let mirror = store.mirror else { return try await mirrorStatus() }
        do {
            if fresh { try await mirror.rebuild(launch: false) }
            try mirror.enableForBuild()
            try await mirror.complete(progress: progress)
        } catch let error as SQLiteError {
            // The build's own failures (a full disk while writing the mirror) name the mirror file.
            throw LibraryError.wrap(error, path: mirror.path.path, busyTimeoutMilliseconds: configuration.busyTimeoutMilliseconds)
        }
        return mirror.status()
    }

    /// Waits for a running mirror build (started at opening, or by `buildMirror(wait: false)`).
    @LibraryActor
    public func waitForMirror() async throws {
        try await store().mirror?.waitForBuild()
    }

    /// Turns the mirror off (queries use the direct path; the file is kept).
    @LibraryActor
    public func disableMirror() async throws { try await store().mirror?.disable() }

    /// Turns the mirror on again; it catches up from where it stopped, or rebuilds. With `wait`,
    /// returns when it is ready.
    @LibraryActor
    public func enableMirror(wait: Bool = true) async throws {
        let mirror = try await store().mirror
        try mirror?.enable()
        if wait { try await mirror?.waitForBuild() }
    }

    /// Turns the mirror off and deletes its file.
    @LibraryActor
    public func purgeMirror() async throws { try await store().mirror?.purge() }
}

extension Library {
    /// A page of a playlist's items: in its own order, or sorted like `sortedBy` (with its
    /// sections); `filter` narrows either. A track listed twice appears twice. Within `scope`,
    /// only the scope's items, and a smart playlist is evaluated within it.
    public func playlistList(
        _ id: PlaylistID, sortedBy query: LibraryQuery? = nil, filter: Filter = .all, after cursor: PageCursor? = nil, limit: Int = 50,
        scope: LibraryScope = .current
    ) async throws -> ListPage {
        guard limit >= 0 else { throw LibraryError.invalidValue(field: "limit", value: String(limit), reason: "must be ≥ 0") }
        let kind = try await requirePlaylist(id)
        var effective = query ?? LibraryQuery()
        effective.filter = scope.narrowing(query.map { .and([$0.filter, filter]) } ?? filter)
        let sorted = query != nil
        if kind == .smart {
            // A smart playlist's contents are evaluated now (they follow every write); only then
            // are the stored rules read.
            let context = try await smartContext(scope: scope)
            return try await withEngine { [effective] in try $0.smartPage(id, context, effective, sorted: sorted, after: cursor, limit: limit) }
        }
        return try await withEngine { [effective] in try $0.playlistPage(id, effective, sorted: sorted, after: cursor, limit: limit) }
    }

    /// The sections (A–Z, kana rows, #) of a playlist sorted like `query`, narrowed by `filter`.
    public func playlistSections(
        _ id: PlaylistID, sortedBy query: LibraryQuery, filter: Filter = .all, scope: LibraryScope = .current
    ) async throws -> [SectionInfo] {
        let kind = try await requirePlaylist(id)
        var effective = query
        effective.filter = scope.narrowing(.and([query.filter, filter]))
        if kind == .smart {
            let context = try await smartContext(scope: scope)
            return try await withEngine { [effective] in try $0.smartSections(id, context, effective) }
        }
        return try await withEngine { [effective] in try $0.playlistSections(id, effective) }
    }

    /// The playlist's kind; throws `playlistNotFound` unless the canonical store holds it.
    @discardableResult
    func requirePlaylist(_ id: PlaylistID) async throws -> Playlist.Kind {
        let kind = try await read { db in try db.scalar(Int.self, "SELECT kind FROM playlist WHERE id = ?", [id.rawValue]) }
        guard let kind else { throw LibraryError.playlistNotFound(id) }
        return Playlist.Kind(rawValue: kind) ?? .regular
    }
}

extension Library {
    /// Up to `limit` tracks matching typed `text` (see `SearchText` for what matches) within
    /// `scope`, best first (see `SearchRank`), after `cursor`; `total` counts every hit.
    ///
    /// ```swift
    /// let hits = try await library.search("love suprem", limit: 20)
    /// for row in hits.items { print(row.artist ?? "", "–", row.title ?? "") }
    ///
    /// let scope = SearchScope(filter: .text(.artist, .equals("John Coltrane")))
    /// let withinArtist = try await library.search("blue", scope: scope)
    /// ```
    ///
    /// Every typed word must match, and the last one matches as a prefix, so the results can
    /// follow each keystroke.
    public func search(_ text: String, scope: SearchScope = SearchScope(), after cursor: PageCursor? = nil, limit: Int = 50) async throws -> ListPage {
        guard limit >= 0 else { throw LibraryError.invalidValue(field: "limit", value: String(limit), reason: "must be ≥ 0") }
        if let playlist = scope.playlist { try await requirePlaylist(playlist) }
        let query = SearchQuery(text)
        let visible = scope.within(.current)
        return try await withEngine { try $0.search(query, scope: visible, after: cursor, limit: limit) }
    }
}

extension Library {
    /// Up to `limit` rows of an aggregation view (albums, artists, album artists, composers,
    /// genres) after `cursor`, with each row's representative `artworkID` read from the store
    /// unless `artwork` is false (a caller skipping rows to reach a position reads no tracks).
    ///
    /// ```swift
    /// let albums = try await library.groups(GroupQuery(kind: .album), limit: 50)
    /// for album in albums.items {
    ///     print(album.artist ?? "", "–", album.name, album.trackCount)
    /// }
    /// if let first = albums.items.first {
    ///     let tracks = try await library.albumTracks(first.id)
    ///     print(tracks.count)
    /// }
    /// ```
    /// Within `scope`, the views hold only the scope's tracks (their counts and pictures too).
    public func groups(
        _ query: GroupQuery, after cursor: PageCursor? = nil, limit: Int = 50, artwork: Bool = true, scope: LibraryScope = .current
    ) async throws -> GroupPage {
        guard limit >= 0 else { throw LibraryError.invalidValue(field: "limit", value: String(limit), reason: "must be ≥ 0") }
        return try await withArtwork(
            try await withGroups(scope, { try $0.groups(query, after: cursor, limit: limit) }, { table, _ in table.page(query, after: cursor, limit: limit) }),
            artwork: artwork)
    }

    /// `body` on the engine for everything, or `scoped` on the table of `scope`'s views.
    func withGroups<T: Sendable>(
        _ scope: LibraryScope, _ body: @escaping @Sendable (any QueryEngine) throws -> T,
        _ scoped: @escaping @Sendable (GroupTable, any QueryEngine) throws -> T
    ) async throws -> T {
        guard !scope.isAll else { return try await withEngine(body) }
        let cache = scopedGroups
        // A kept table outlives writes that change no view (plays, ratings, stars, pictures):
        // listening must not make every limited reader's next view cost a pass over their tracks.
        if let builtAt = cache.builtAt(scope), builtAt >= 0 {
            // One snapshot: a view change committed between the two reads must not be vouched for.
            let (changed, latest) = try await read { db in
                try db.transaction(.deferred) {
                    (
                        try db.scalar(Int.self, ScopedGroups.viewChangesSQL, [builtAt]) == 1,
                        try MirrorStore.currentSeq(in: db)
                    )
                }
            }
            if !changed { cache.confirm(scope, through: latest) }
        }
        return try await withEngine { try scoped(try cache.table(scope, engine: $0), $0) }
    }

    /// Up to `limit` rows of an aggregation view from row `offset`: a deep page costs what the
    /// first does (the mirror seeks by its maintained section counts, never over the rows before).
    public func groups(_ query: GroupQuery, offset: Int, limit: Int = 50, artwork: Bool = true, scope: LibraryScope = .current) async throws -> GroupPage {
        try Self.checkLimit(limit)
        guard offset >= 0 else { throw LibraryError.invalidValue(field: "offset", value: String(offset), reason: "must be ≥ 0") }
        return try await withArtwork(
            try await withGroups(
                scope, { try $0.groups(query, offset: offset, limit: limit) }, { table, _ in table.page(query, offset: offset, limit: limit) }),
            artwork: artwork)
    }

    /// `page` with each row's representative `artworkID` read from the store, unless `artwork` is false.
    private func withArtwork(_ page: GroupPage, artwork: Bool) async throws -> GroupPage {
        var page = page
        guard artwork, let kind = page.items.first?.kind else { return page }
        // An artist's own picture (`artist.*`) before that of its first album with one.
        let own = try await artistPictures(page.items.map(\.id), kind: kind)
        let pictured = page.items.filter { own[$0.id] == nil }.compactMap(\.artworkTrack)
        if !pictured.isEmpty {
            let artwork = try await tracks(ids: pictured).tracks
            let byTrack = Dictionary(artwork.map { ($0.id, $0.artworkID) }, uniquingKeysWith: { first, _ in first })
            for index in page.items.indices { page.items[index].artworkID = page.items[index].artworkTrack.flatMap { byTrack[$0] ?? nil } }
        }
        for index in page.items.indices { if let picture = own[page.items[index].id] { page.items[index].artworkID = picture } }
        return page
    }

    /// The people credited in `role` (lyricist, conductor, remixer, producer, engineer, mixer,
    /// djmixer, arranger, performer), one row per name with its track and album counts, by name.
    public func credits(role: String) async throws -> [GroupItem] {
        guard MirrorLists.code(role: role) != nil else {
            throw LibraryError.invalidValue(
                field: "role", value: role, reason: "expected one of " + MirrorLists.roles.map(\.role).joined(separator: ", "))
        }
        return try await withEngine { try $0.roleCredits(role) }
    }

    /// The sections (A–Z, kana rows, #) of an aggregation view.
    public func groupSections(_ query: GroupQuery, scope: LibraryScope = .current) async throws -> [SectionInfo] {
        try await withGroups(scope, { try $0.groupSections(query) }, { table, _ in table.sections(query) })
    }

    /// An album's tracks in disc and track order (the drill-down's last step); within `scope`,
    /// only the scope's tracks, and an album with none there is no album.
    public func albumTracks(_ album: GroupID, scope: LibraryScope = .current) async throws -> [TrackListItem] {
        let items = try await withGroups(
            scope, { try $0.albumTracks(album) },
            { table, engine in
                guard let members = table.albumMembers[album] else { return nil }
                return try engine.albumTracks(album)?.filter { members.contains($0.id.rawValue) }
            })
        guard let items else { throw LibraryError.invalidValue(field: "album", value: album.description, reason: "no such album") }
        return items
    }
}

extension Library {
    /// Creates a smart playlist; rules that cannot be evaluated (a missing or folder playlist, a
    /// loop of references, a bad limit) are rejected with the reason.
    public func createSmartPlaylist(name: String, rules: SmartRules, parent: PlaylistID? = nil) async throws -> PlaylistID {
        let json = try rules.json()
        return try await write { batch in try batch.createPlaylist(Playlist(name: name, parentID: parent, kind: .smart, rules: json)) }
    }

    /// A smart playlist's tracks as of now, in its selection order (by ID without one): evaluated
    /// live on every call, so its contents follow every write.
    public func smartPlaylistTracks(_ id: PlaylistID, scope: LibraryScope = .current) async throws -> [TrackID] {
        let context = try await smartContext(scope: scope)
        guard context.rules[id] != nil else { throw LibraryError.invalidValue(field: "playlist", value: id.description, reason: "not a smart playlist") }
        return try await withEngine { try $0.smartTracks(id, context) }
    }

    /// Every smart playlist's rules, read from the store; within a limited `scope`, each rule
    /// (and so every limit and selection, and every playlist a rule refers to) applies to the
    /// scope's tracks alone.
    package func smartContext(scope: LibraryScope = .current) async throws -> SmartContext {
        let rules = try await read { db in
            try db.query("SELECT id, rules FROM playlist WHERE kind = ? AND rules IS NOT NULL", [Int64(Playlist.Kind.smart.rawValue)]) { row in
                (PlaylistID(try row.int64(0)), try? SmartRules(json: try row.string(1)))
            }
        }
        var context = Dictionary(rules.compactMap { id, rules in rules.map { (id, $0) } }, uniquingKeysWith: { first, _ in first })
        if !scope.isAll {
            for (id, rules) in context {
                var narrowed = rules
                narrowed.condition = .all([.filter(scope.filter), rules.condition])
                context[id] = narrowed
            }
        }
        return SmartContext(rules: context)
    }
}
