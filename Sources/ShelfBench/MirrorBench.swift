import Foundation
import Shelf
import ShelfCore
import ShelfDatabase
import ShelfTestSupport

/// `shelf-bench mirror`: seed 002's table, side by side in one run at each scale: the direct path,
/// the mirror, and the mirror's SQL stepped raw through sqlite3 without building Swift values.
struct MirrorBench {
    let scales: [Int]
    let directory: URL?
    /// Only the write-batch measurement, on a library whose mirror is already built.
    let writesOnly: Bool
    /// Write batches measured with the mirror on, and again with it off.
    let writeRounds: Int
    /// Each scale measured twice, the plain catalogue then the tagged one (`DatasetGenerator.tagged`).
    let withTagged: Bool
    /// Only the reads whose names contain one of these (every read when empty).
    let only: [String]

    init(_ words: [String]) throws {
        let flags = try Flags(words, known: ["--tracks", "--library", "--write-rounds", "--only"], switches: ["--writes-only", "--with-tagged"])
        let text = flags.string("--tracks") ?? "10000,50000,100000,500500"
        scales = try text.split(separator: ",").map { part in
            guard let value = Int(part.replacingOccurrences(of: "_", with: "")), value >= 1_000 else {
                throw BenchUsageError(message: "--tracks expects comma-separated counts of at least 1000, got '\(part)'")
            }
            return value
        }
        directory = flags.string("--library").map { URL(fileURLWithPath: $0) }
        writesOnly = flags.bool("--writes-only")
        writeRounds = max(3, Int(flags.string("--write-rounds") ?? "") ?? 11)
        withTagged = flags.bool("--with-tagged")
        only = flags.string("--only")?.split(separator: ",").map(String.init) ?? []
    }

    struct Line {
        let tracks: Int
        /// "plain" or "tagged": which catalogue.
        let catalogue: String
        let read: String
        let directMs: Double?
        let mirrorMs: Double
        let rawMs: Double
        let speedup: Double?
        let mirrorOverRaw: Double
        /// The same statements stepped with every column of every row read in its storage type
        /// (no Swift value built): what reading the values out costs at least.
        let rawReadMs: Double
        let mirrorOverRawRead: Double
    }

    struct BuildLine {
        let tracks: Int
        let catalogue: String
        let buildSeconds: Double
        let mirrorBytes: Int64
        let bytesPerTrack: Double
        let writeBatchMirrorOnMs: Double
        let writeBatchMirrorOffMs: Double
        /// The mirror's own SQL for the same edit (the UPDATEs of every column a title edit changes,
        /// stepped raw, then rolled back): the floor of what keeping the mirror current can cost.
        let mirrorUpdatesRawMs: Double
    }

    func run(_ results: inout Report) async throws {
        var lines: [Line] = []
        var builds: [BuildLine] = []
        for scale in scales {
            for tagged in withTagged ? [false, true] : [false] {
                let scratch = try TemporaryDirectory(prefix: "shelf-bench-mirror")
                let dir = directory.map { $0.appendingPathComponent(String(scale) + (tagged ? "-tagged" : "")) } ?? scratch.url
                let (newLines, build) = try await measure(scale: scale, tagged: tagged, directory: dir)
                lines += newLines
                builds.append(build)
            }
        }
        results.table(
            key: "reads",
            [
                .init("tracks", "tracks"), .init("catalogue", "catalogue"), .init("read path", "read"), .init("detail", "readDetail"),
                .init("direct ms", "directMs", decimals: 3),
                .init("mirror ms", "mirrorMs", decimals: 3), .init("raw SQL ms", "rawMs", decimals: 3),
                .init("speedup", "speedupRatio", suffix: "×"), .init("mirror/raw", "ratioToRaw", decimals: 2),
                .init("raw + column reads ms", "rawWithColumnsMs", decimals: 3), .init("mirror/that", "ratioToRawWithColumns", decimals: 2),
            ],
            lines.map {
                let (read, detail) = Self.splitName($0.read)
                return [
                    $0.tracks, $0.catalogue, read, detail, $0.directMs, $0.mirrorMs, $0.rawMs, $0.speedup, $0.mirrorOverRaw, $0.rawReadMs, $0.mirrorOverRawRead,
                ]
            })
        results.table(
            key: "builds",
            [
                .init("tracks", "tracks"), .init("catalogue", "catalogue"), .init("mirror build s", "buildSeconds", decimals: 1),
                .init("mirror bytes", "mirrorBytes"),
                .init("bytes/track", "bytesPerTrack"), .init("100-track batch, mirror on ms", "batchMirrorOnMs", decimals: 3),
                .init("mirror off ms", "batchMirrorOffMs", decimals: 3), .init("its mirror UPDATEs raw ms", "mirrorUpdatesRawMs", decimals: 3),
            ],
            builds.map {
                [
                    $0.tracks, $0.catalogue, $0.buildSeconds, $0.mirrorBytes, $0.bytesPerTrack, $0.writeBatchMirrorOnMs, $0.writeBatchMirrorOffMs,
                    $0.mirrorUpdatesRawMs,
                ]
            })
    }

    private func log(_ text: String) { FileHandle.standardError.write(Data("\(text)\n".utf8)) }

    /// A read's name without its parenthesis (which holds hit counts that vary with the scale), so
    /// programs can find the same row at every scale, and the parenthesis on its own.
    static func splitName(_ name: String) -> (String, String?) {
        guard let open = name.range(of: " ("), name.hasSuffix(")") else { return (name, nil) }
        return (String(name[..<open.lowerBound]), String(name[open.upperBound...].dropLast()))
    }

    private func measure(scale: Int, tagged: Bool, directory: URL) async throws -> ([Line], BuildLine) {
        let catalogue = tagged ? "tagged" : "plain"
        // Generated with the mirror left for the build measured below, as `generate` does; the
        // same instance then builds it, so no second one in this process keeps it current meanwhile.
        let library = Library(directory: directory, configuration: .init(buildsMirrorInBackground: false))
        if try await library.info().trackCount == 0 {
            log("generating \(scale) \(catalogue) tracks")
            _ = try await DatasetGenerator(tracks: scale, seed: 7, tagged: tagged).fill(library)
        }
        log("building the mirror for \(scale) tracks")
        let start = Date()
        if writesOnly, try await library.mirrorStatus().state == .ready {
            log("(kept the built mirror)")
        } else {
            try await library.buildMirror(wait: true)
        }
        let buildSeconds = Date().timeIntervalSince(start)
        let status = try await library.mirrorStatus()

        let canonical = try Connection(path: library.storeURL.path, mode: .readOnly)
        let mirrorDB = try Connection(path: directory.appendingPathComponent("mirror.sqlite").path, mode: .readOnly)
        let direct = DirectQueryEngine(db: canonical)
        let mirror = MirrorQueryEngine(db: mirrorDB)
        // Direct-path runs sort every row in Swift: one run each above 100,000 tracks.
        let directRuns = scale > 100_000 ? 1 : 3
        let byArtist = LibraryQuery(sort: .artist)
        let filtered = LibraryQuery(sort: .title, filter: .and([.range(.year, lower: 1980, upper: 1999), .not(.flag(.compilation, true))]))
        let zeroHit = LibraryQuery(sort: .title, filter: .text(.genre, .equals("no such genre")))
        let deepIndex = scale * 9 / 10
        let deepCursor = try require(try mirror.page(byArtist, offset: deepIndex - 1, limit: 1).nextCursor, "no row at 90%")

        // Raw runs step the statements; with `readColumns`, every column of every row is read too.
        var readColumns = false
        var sink = 0
        func raw(_ sql: String, _ arguments: [(any SQLiteBindable)?]) throws {
            if readColumns {
                try mirrorDB.forEachRow(sql, arguments) { row in
                    for index in 0..<Int32(row.count) { sink &+= row.touch(index) }
                }
                return
            }
            let statement = try mirrorDB.cachedStatement(sql)
            try statement.bind(arguments)
            while try statement.step() {}
            statement.reset()
        }
        let chain = MirrorSchema.chain(byArtist).joined(separator: ", ")
        let (filterSQL, filterArguments) = MirrorFilter.compile(filtered.filter)
        let filteredPage = mirror.pageSQL(filtered, cursor: nil, offset: false)
        let deepPage = mirror.pageSQL(byArtist, cursor: deepCursor, offset: false)
        let offsetPage = mirror.pageSQL(byArtist, cursor: nil, offset: true)
        let firstPage = mirror.pageSQL(byArtist, cursor: nil, offset: false)
        let sectionColumn = MirrorSchema.sectionColumn(byArtist)!
        let anchorM = try require(mirror.anchorSQL("M", byArtist), "no anchor SQL")

        struct Case {
            let name: String
            let direct: () throws -> Void
            let mirror: () throws -> Void
            let raw: () throws -> Void
        }
        let cases: [Case] = [
            Case(
                name: "snapshot build", direct: { _ = try direct.snapshot(byArtist) }, mirror: { _ = try mirror.snapshot(byArtist) },
                raw: { try raw("SELECT id FROM mirror_track WHERE 1 ORDER BY \(chain)", []) }),
            Case(
                name: "filtered paging (first page)", direct: { _ = try direct.page(filtered, after: nil, limit: 50) },
                mirror: { _ = try mirror.page(filtered, after: nil, limit: 50) },
                raw: {
                    try raw(filteredPage.sql, filteredPage.arguments + [51])
                    try raw("SELECT count(*) FROM mirror_track WHERE \(filterSQL)", filterArguments)
                }),
            Case(
                name: "A–Z anchor jump (M)", direct: { _ = try direct.anchor("M", byArtist) }, mirror: { _ = try mirror.anchor("M", byArtist) },
                raw: { try raw(anchorM.sql, anchorM.arguments) }),
            Case(
                name: "first page", direct: { _ = try direct.page(byArtist, after: nil, limit: 50) },
                mirror: { _ = try mirror.page(byArtist, after: nil, limit: 50) },
                raw: {
                    try raw(firstPage.sql, firstPage.arguments + [51])
                    try raw("SELECT coalesce(sum(count), 0) FROM mirror_section WHERE key_column = 'k_title'", [])
                }),
            Case(
                name: "deep page at 90% by cursor", direct: { _ = try direct.page(byArtist, after: deepCursor, limit: 50) },
                mirror: { _ = try mirror.page(byArtist, after: deepCursor, limit: 50) },
                raw: {
                    try raw(deepPage.sql, deepPage.arguments + [51])
                    try raw("SELECT coalesce(sum(count), 0) FROM mirror_section WHERE key_column = 'k_title'", [])
                }),
            Case(
                name: "deep page at 90% by offset", direct: { _ = try direct.page(byArtist, offset: deepIndex, limit: 50) },
                mirror: { _ = try mirror.page(byArtist, offset: deepIndex, limit: 50) },
                raw: {
                    try raw(offsetPage.sql, offsetPage.arguments + [51, deepIndex])
                    try raw("SELECT coalesce(sum(count), 0) FROM mirror_section WHERE key_column = 'k_title'", [])
                }),
            Case(
                name: "zero-hit hasRows", direct: { _ = try direct.hasRows(zeroHit) }, mirror: { _ = try mirror.hasRows(zeroHit) },
                raw: {
                    let (sql, arguments) = MirrorFilter.compile(zeroHit.filter)
                    try raw("SELECT EXISTS (SELECT 1 FROM mirror_track WHERE \(sql))", arguments)
                }),
            Case(
                name: "first paint (first page + sections)",
                direct: {
                    _ = try direct.page(byArtist, after: nil, limit: 50)
                    _ = try direct.sections(byArtist)
                },
                mirror: {
                    _ = try mirror.page(byArtist, after: nil, limit: 50)
                    _ = try mirror.sections(byArtist)
                },
                raw: {
                    try raw(firstPage.sql, firstPage.arguments + [51])
                    try raw("SELECT coalesce(sum(count), 0) FROM mirror_section WHERE key_column = 'k_title'", [])
                    try raw("SELECT section, count FROM mirror_section WHERE key_column = ? AND count > 0", [sectionColumn])
                }),
        ]
        // Searches: common prefixes (tens of thousands of hits, ranked by tiers), a rare title
        // (ranked by bm25), a two-character Japanese query. Raw: the same statements stepped.
        let rareTitle = try await library.tracks(ids: [TrackID(Int64(scale / 2))]).tracks.first?.title ?? "silver wolf"
        var searchCases: [Case] = []
        for text in ["s", "lo", "the", "beat", "silver", rareTitle, "宇多"] {
            let query = SearchQuery(text)
            let hits = try mirror.search(query, scope: SearchScope(), after: nil, limit: 1).total
            let exact = hits <= mirror.exactRankLimit
            let capped = "SELECT count(*) FROM (SELECT 1 FROM mirror_search WHERE mirror_search MATCH ? LIMIT ?)"
            searchCases.append(
                Case(
                    name: "search '\(text)' (\(hits) hits, \(exact ? "bm25" : "tiers"))",
                    direct: { _ = try direct.search(query, scope: SearchScope(), after: nil, limit: 50) },
                    mirror: { _ = try mirror.search(query, scope: SearchScope(), after: nil, limit: 50) },
                    raw: {
                        try raw(capped, [query.matchExpression, mirror.exactRankLimit + 1])
                        if exact {
                            let page = mirror.searchSQL(query, scope: SearchScope(), exact: true)
                            try raw(page.sql, page.arguments + [-Double.infinity, 0, 51])
                        } else {
                            try raw("SELECT count(*) FROM mirror_search WHERE mirror_search MATCH ?", [query.matchExpression])
                            let page = mirror.searchSQL(query, scope: SearchScope(), exact: false, tier: 0)
                            try raw(page.sql, page.arguments + [0, 51])
                        }
                    }))
        }
        // Contains-filters beside the searches: through the trigram value index from three
        // characters, by the distinct values below that. Then the lists' filters (`mirror_list`):
        // a credited artist, a label, a BPM range, a flag most tracks have (its negation), an
        // MBID prefix; on the plain catalogue they find nothing. Raw: the page and count stepped.
        let credited = try await library.tracks(ids: [TrackID(Int64(scale / 3))]).tracks.first?.artist ?? "nobody"
        let contains = [(TextField.artist, "beat"), (.artist, "silver"), (.title, "wolf"), (.artist, "宇多田"), (.album, "ab")]
        let filters: [(String, Filter)] =
            contains.map { ("\($0.0.rawValue):\($0.1)", .text($0.0, .contains($0.1))) } + [
                ("artist:=<an artist>", .text(.artist, .equals(credited))), ("label:=warp", .text(.label, .equals("warp"))),
                ("bpm:120..130", .range(.bpm, lower: 120, upper: 130)), ("replayGain:no", .flag(.replayGain, false)),
                ("mbid:^ab", .text(.mbid, .prefix("ab"))),
            ]
        for (name, filter) in filters {
            let query = LibraryQuery(sort: .artist, filter: filter)
            let hits = try mirror.page(query, after: nil, limit: 1).total
            let page = mirror.pageSQL(query, cursor: nil, offset: false)
            let (countSQL, countArguments) = MirrorFilter.compile(query.filter)
            searchCases.append(
                Case(
                    name: "filter \(name) first page (\(hits) hits)",
                    direct: { _ = try direct.page(query, after: nil, limit: 50) },
                    mirror: { _ = try mirror.page(query, after: nil, limit: 50) },
                    raw: {
                        try raw(page.sql, page.arguments + [51])
                        try raw("SELECT count(*) FROM mirror_track WHERE \(countSQL)", countArguments)
                    }))
        }
        // Views, drill-down, a playlist page and a smart playlist.
        let albumsView = GroupQuery(kind: .album)
        let owner = try require(try mirror.groups(GroupQuery(kind: .albumArtist), after: nil, limit: 200).items.max { $0.albumCount < $1.albumCount })
        let ownerAlbums = GroupQuery(kind: .album, artist: owner.id)
        let firstAlbum = try require(try mirror.groups(ownerAlbums, after: nil, limit: 1).items.first)
        let playlist = try await library.write { batch in
            let id = try batch.createPlaylist(Playlist(name: "Bench \(UUID().uuidString.prefix(6))"))
            try batch.insertIntoPlaylist(id, stride(from: 1, to: scale, by: max(1, scale / 2_000)).map { TrackID(Int64($0)) }, at: 0)
            return id
        }
        let smart = try await library.createSmartPlaylist(
            name: "Bench smart",
            rules: SmartRules(
                .all([
                    .filter(.range(.year, lower: 1990, upper: 2010)), .filter(.range(.rating, lower: 60, upper: nil)),
                    .not(.filter(.flag(.compilation, true))), .any([.filter(.text(.genre, .equals("rock"))), .filter(.text(.genre, .equals("pop")))]),
                ]), limit: .items(100), selection: .mostPlayed))
        let smartContext = try await library.smartContext()
        let artistsView = GroupQuery(kind: .artist)
        let viewCases: [Case] = [
            Case(
                name: "artist view first page",
                direct: { _ = try direct.groups(artistsView, after: nil, limit: 50) },
                mirror: { _ = try mirror.groups(artistsView, after: nil, limit: 50) },
                raw: {
                    let page = mirror.groupPageSQL(artistsView, cursor: nil)
                    try raw(page.sql, page.arguments + [51])
                    try raw("SELECT coalesce(sum(count), 0) FROM mirror_group_section WHERE kind = \(GroupKind.artist.code) AND tags = 1", [])
                }),
            Case(
                name: "album view first paint (page + sections)",
                direct: {
                    _ = try direct.groups(albumsView, after: nil, limit: 50)
                    _ = try direct.groupSections(albumsView)
                },
                mirror: {
                    _ = try mirror.groups(albumsView, after: nil, limit: 50)
                    _ = try mirror.groupSections(albumsView)
                },
                raw: {
                    let page = mirror.groupPageSQL(albumsView, cursor: nil)
                    try raw(page.sql, page.arguments + [51])
                    try raw("SELECT coalesce(sum(count), 0) FROM mirror_group_section WHERE kind = 0 AND tags = 0", [])
                    try raw("SELECT section, count FROM mirror_group_section WHERE kind = 0 AND tags = 1 AND count > 0", [])
                }),
            Case(
                name: "artist drill-down (albums, then an album's tracks)",
                direct: {
                    _ = try direct.groups(ownerAlbums, after: nil, limit: 50)
                    _ = try direct.albumTracks(firstAlbum.id)
                },
                mirror: {
                    _ = try mirror.groups(ownerAlbums, after: nil, limit: 50)
                    _ = try mirror.albumTracks(firstAlbum.id)
                },
                raw: {
                    let page = mirror.groupPageSQL(ownerAlbums, cursor: nil)
                    try raw(page.sql, page.arguments + [51])
                    let tracks = mirror.albumTracksSQL(firstAlbum.id)
                    try raw(tracks.sql, tracks.arguments)
                }),
            Case(
                name: "playlist page (2,000 items, own order)",
                direct: { _ = try direct.playlistPage(playlist, LibraryQuery(), sorted: false, after: nil, limit: 50) },
                mirror: { _ = try mirror.playlistPage(playlist, LibraryQuery(), sorted: false, after: nil, limit: 50) },
                raw: {
                    let page = mirror.playlistPageSQL(playlist, LibraryQuery(), sorted: false, cursor: nil)
                    try raw(page.sql, page.arguments + [51])
                    try raw("SELECT count(*) FROM mirror_playlist_item WHERE playlist_id = ?", [playlist.rawValue])
                }),
            Case(
                name: "smart playlist, 4 conditions, top 100 most played",
                direct: { _ = try direct.smartTracks(smart, smartContext) }, mirror: { _ = try mirror.smartTracks(smart, smartContext) },
                raw: {
                    let (sql, arguments) = mirror.smartSQL(smart, smartContext)
                    try raw(sql, arguments)
                }),
        ]
        var lines: [Line] = []
        let chosen = (cases + searchCases + viewCases).filter { item in only.isEmpty || only.contains { item.name.contains($0) } }
        for item in writesOnly ? [] : chosen {
            log("  \(scale): \(item.name)")
            let directMs = try await Measure.median(runs: directRuns, warmup: 0) { try item.direct() }
            // Interleave mirror and raw runs so that noise hits both alike.
            var mirrorSamples: [Double] = []
            var rawSamples: [Double] = []
            var rawReadSamples: [Double] = []
            for _ in 0..<3 {
                try item.mirror()
                try item.raw()
            }
            let runs = item.name == "snapshot build" ? 9 : 51
            for _ in 0..<runs {
                mirrorSamples.append(try Self.time(item.mirror))
                rawSamples.append(try Self.time(item.raw))
                readColumns = true
                rawReadSamples.append(try Self.time(item.raw))
                readColumns = false
            }
            let mirrorMs = mirrorSamples.sorted()[runs / 2]
            let rawMs = rawSamples.sorted()[runs / 2]
            let rawReadMs = rawReadSamples.sorted()[runs / 2]
            lines.append(
                Line(
                    tracks: scale, catalogue: catalogue, read: item.name, directMs: directMs, mirrorMs: mirrorMs, rawMs: rawMs,
                    speedup: directMs / mirrorMs, mirrorOverRaw: mirrorMs / rawMs,
                    rawReadMs: rawReadMs, mirrorOverRawRead: mirrorMs / rawReadMs))
        }
        withExtendedLifetime(sink) {}

        // The cost of keeping the mirror current: one 100-track metadata batch, mirror on and off.
        // A fresh word per run, so that a reused library still sees real changes.
        let nonce = UUID().uuidString.prefix(8)
        func batch(_ round: Int) async throws -> Double {
            let started = DispatchTime.now().uptimeNanoseconds
            try await library.write { batch in
                for n in 0..<100 {
                    try batch.updateTrack(TrackID(Int64(1 + (round * 100 + n) % scale))) { $0.title = "Edited \(nonce) \(round)-\(n)" }
                }
            }
            return Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6
        }
        var on: [Double] = []
        var off: [Double] = []
        for round in 0..<writeRounds { on.append(try await batch(round)) }
        try await library.disableMirror()
        for round in writeRounds..<(2 * writeRounds) { off.append(try await batch(round)) }
        try await library.enableMirror()
        try await library.waitForMirror()
        // The floor: the UPDATEs a 100-title batch makes the mirror run (title, its keys and fold,
        // the modification date), on the same kind of rows, in one transaction, rolled back.
        let writable = try Connection(path: directory.appendingPathComponent("mirror.sqlite").path)
        var rawUpdates: [Double] = []
        for round in (2 * writeRounds)..<(3 * writeRounds) {
            let statement = try writable.cachedStatement(
                "UPDATE mirror_track SET title = ?, k_title = ?, t_title = NULL, z_title = NULL, n_date_modified = ? WHERE id = ?")
            rawUpdates.append(
                try Self.time {
                    try writable.execute("BEGIN IMMEDIATE")
                    for n in 0..<100 {
                        let title = "Edited \(nonce) \(round)-\(n)"
                        try statement.bind([title, Data(SortKey.textKey(title)), Int64(Date().timeIntervalSince1970), Int64(1 + (round * 100 + n) % scale)])
                        try statement.run()
                    }
                })
            try writable.execute("ROLLBACK")
        }
        let build = BuildLine(
            tracks: scale, catalogue: catalogue, buildSeconds: buildSeconds, mirrorBytes: status.bytesOnDisk,
            bytesPerTrack: Double(status.bytesOnDisk) / Double(scale), writeBatchMirrorOnMs: on.sorted()[writeRounds / 2],
            writeBatchMirrorOffMs: off.sorted()[writeRounds / 2], mirrorUpdatesRawMs: rawUpdates.sorted()[writeRounds / 2])
        return (lines, build)
    }

    static func time(_ body: () throws -> Void) throws -> Double {
        let started = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6
    }
}

/// Unwraps or fails the benchmark with a message (the test framework's `#require` is not here).
func require<T>(_ value: T?, _ message: String = "unexpected nil") throws -> T {
    guard let value else { throw BenchUsageError(message: message) }
    return value
}
