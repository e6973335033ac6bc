import Foundation
import ShelfCore
import ShelfDatabase
import ShelfTestSupport
import Testing

@testable import Shelf

/// A library of every schema version since the first, kept as SQL text in `Fixtures/`, opens,
/// migrates to the current version and answers as it did: integrity, counts, texts, pictures,
/// users, the mirror's parity with the direct path, and the change history's tokens from before
/// the upgrade. `SHELF_WRITE_FIXTURES=1` writes the fixtures instead (see `Fixtures/README.md`).
@Suite struct UpgradeFixtureTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    static let writing = ProcessInfo.processInfo.environment["SHELF_WRITE_FIXTURES"] == "1"
    static let regenerate = "SHELF_WRITE_FIXTURES=1 swift test --skip-build --filter UpgradeFixtureTests"

    // Fixed, so that the fixtures and this file agree without storing secrets beside the SQL: the
    // store ID the tokens carry, the key the passwords are encrypted with, the passwords themselves.
    static let storeID = UUID(uuidString: "5E1F0F1C-7E57-4000-8000-000000000001")!
    static let secretKey = Data((0..<SecretKey.length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })
    static let passwords = ["owner": "fixture-owner-password", "guest": "fixture-guest-パスワード"]
    static let playedAt = Date(timeIntervalSince1970: 1_700_000_000)

    /// What the generator did that the fixtures' rows alone do not say: the history's positions
    /// at three moments, the objects the edits touched, and the API key (shown only once).
    struct Facts: Codable, Equatable {
        var storeID: UUID
        /// The transaction after the import, after the edits and deletion, and the last one.
        var afterImport: Int64
        var afterEdits: Int64
        var last: Int64
        var editedTrack: Int64
        var deletedTrack: Int64
        var playlist: Int64
        var smartPlaylist: Int64
        var apiKey: String
    }

    // MARK: The fixtures as tests

    @Test(.enabled(if: !UpgradeFixtureTests.writing), arguments: 1...Schema.currentVersion)
    func fixtureOpensMigratesAndAnswersAsBefore(version: Int) async throws {
        let file = Self.fixtures.appendingPathComponent("schema-\(version).sql")
        try #require(FileManager.default.fileExists(atPath: file.path), "no fixture for schema \(version): run \(Self.regenerate)")
        let facts = try JSONDecoder().decode(Facts.self, from: Data(contentsOf: Self.fixtures.appendingPathComponent("tokens.json")))
        let dir = try TemporaryDirectory(prefix: "shelf-upgrade")
        defer { withExtendedLifetime(dir) {} }  // the directory must outlive every read below
        let before = try Self.load(try String(contentsOf: file, encoding: .utf8), into: dir.path("library.sqlite").path)
        try #require(before.version == version, "schema-\(version).sql sets user_version \(before.version)")
        // The passwords were encrypted with the key the generator installed; a library's key lives beside its store.
        if version >= 3 { try SecretKey.install(Self.secretKey, directory: dir.url) }

        let configuration = Library.Configuration(buildsMirrorInBackground: false)
        if version == 1 {
            // Version 1 is never opened as it is: it must be migrated first, then it opens like any other.
            do {
                try await Library(directory: dir.url, configuration: configuration).open()
                Issue.record("a schema-1 store opened without being migrated")
            } catch let error as LibraryError {
                #expect(error.code == "migrationRequired", "\(error)")
            }
            let report = try await Library(directory: dir.url, configuration: configuration).migrateLegacyStore(chunkSize: 3)
            #expect(report.fromVersion == 1 && report.moved == before.pictures.count && report.pictures == before.artworkCount)
        }
        let library = Library(directory: dir.url, configuration: configuration)
        try await library.open()
        let after = try Self.inspect(library.storeURL.path)
        #expect(after.integrity == ["ok"], "schema \(version): integrity_check \(after.integrity)")
        #expect(after.foreignKeyViolations.isEmpty, "schema \(version): foreign_key_check \(after.foreignKeyViolations)")
        #expect(after.version == Schema.currentVersion)
        #expect(after.migratedFromVersion1 == (version == 1))

        // History first: nothing below may write before the tokens are asked.
        try await Self.expectTokens(library, facts: facts, version: version)

        let info = try await library.info()
        #expect(info.schemaVersion == Schema.currentVersion && info.storeID == facts.storeID)
        #expect(info.trackCount == before.texts.count && info.playlistCount == before.playlistCount && info.artworkCount == before.artworkCount)
        let ids = before.texts.keys.sorted().map { TrackID($0) }
        let lookup = try await library.tracks(ids: ids)
        #expect(lookup.missing.isEmpty && lookup.tracks.map(\.id) == ids)
        for track in lookup.tracks {
            #expect([track.title, track.artist, track.album] == before.texts[track.id.rawValue], "track \(track.id) at schema \(version)")
            var picture: Data?
            if let artwork = track.artworkID { picture = try await library.artworkData(artwork) }
            #expect(picture == before.pictures[track.id.rawValue], "picture of track \(track.id) at schema \(version)")
        }
        for (playlist, items) in before.items { #expect(try await library.playlistItems(PlaylistID(playlist)).map(\.rawValue) == items) }
        // A playlist's comment (schema 14) comes through; older stores had none to keep.
        let comment = try await library.write { batch in try batch.playlist(PlaylistID(facts.playlist))?.comment }
        #expect(comment == (version >= 14 ? "#fixture" : nil), "schema \(version)")

        try await Self.expectUsersAndTheirData(library, facts: facts, version: version, users: before.users)
        try await Self.expectOneLibrary(library, version: version, tracks: before.texts.count)
        try await Self.expectMirrorParity(library, facts: facts)
        if version >= 2 { try await Self.expectCompaction(library, facts: facts) }
    }

    /// What each fixture's tokens answer after the upgrade, and why (`ChangeHistory.check` and the
    /// migration steps say it):
    /// - 1: a legacy store had no change log. `LegacyMigration` keeps the store ID but starts an
    ///   empty history, so the position is 0: every token of the source lies beyond it and answers
    ///   `tokenExpired`, and token 0 answers an empty feed. (No version-1 library ever handed out a
    ///   token, so no client holds one; the expiry is the documented refetch.)
    /// - 2…7: the change log is carried over as it is, so every token answers exactly the
    ///   transactions after it. `group_log` starts at the upgrade (the 7→8 step sets
    ///   `group_log_start` to the last transaction then), so those tokens cannot learn which albums
    ///   were touched before it: `touchedGroups` over them is empty and Subsonic's shelfSync asks
    ///   for a full resync from a token before `groupLogStart()`.
    /// - 8…10: the same, and `group_log` covers the whole history (`group_log_start` is 0).
    /// Nothing is compacted by an upgrade, so no token answers `detailsUnavailable` until the
    /// history is compacted (`expectCompaction`).
    static func expectTokens(_ library: Library, facts: Facts, version: Int) async throws {
        func token(_ transaction: Int64) -> ChangeToken { ChangeToken(storeID: facts.storeID, transaction: transaction) }
        let current = try await library.currentToken()
        #expect(current == token(version == 1 ? 0 : facts.last))
        for transaction in [facts.afterImport, facts.afterEdits, facts.last] {
            #expect(await answer(library, since: token(transaction)) == (version == 1 ? "tokenExpired" : "ok"), "token \(transaction) at schema \(version)")
        }
        // Beyond the current position, or of another store: expired whatever the version.
        #expect(await answer(library, since: token(current.transaction + 1)) == "tokenExpired")
        #expect(await answer(library, since: ChangeToken(storeID: UUID(), transaction: 0)) == "tokenExpired")
        let latest = try await library.changes(since: current)
        #expect(latest.changes.isEmpty && latest.token == current && !latest.hasMore, "the upgrade wrote nothing to the history")
        // `group_log` starts at schema 8; schema 15 gave some of the fixture's groups new IDs
        // ("The …" names), so tokens from before it learn the groups again.
        #expect(try await library.groupLogStart() == ((2..<15).contains(version) ? facts.last : 0))
        guard version >= 2 else { return }

        let sinceImport = try await library.changes(since: token(facts.afterImport))
        #expect(sinceImport.token == token(facts.last) && !sinceImport.hasMore)
        #expect(sinceImport.changes.flatMap(\.tracks.updated).map(\.id).contains(.track(TrackID(facts.editedTrack))))
        #expect(sinceImport.changes.flatMap(\.tracks.deleted).contains(.track(TrackID(facts.deletedTrack))))
        let playlists = Set(sinceImport.changes.flatMap(\.playlists.inserted))
        #expect(playlists.isSuperset(of: [.playlist(PlaylistID(facts.playlist)), .playlist(PlaylistID(facts.smartPlaylist))]))
        let sinceEdits = try await library.changes(since: token(facts.afterEdits))
        #expect(!sinceEdits.changes.isEmpty && sinceEdits.token == token(facts.last))
        // A version without play queues could not have logged one (the generator leaves them out).
        #expect(sinceEdits.changes.flatMap(\.playQueues.inserted).isEmpty == (version < 5))
        let albums = try await library.touchedGroups(kind: .album, after: facts.afterImport, through: facts.last)
        #expect(albums.isEmpty == (version < 8), "albums touched since the import at schema \(version): \(albums)")
    }

    /// `changes(since:)`'s answer as "ok" or the error's code.
    static func answer(_ library: Library, since token: ChangeToken) async -> String {
        do {
            _ = try await library.changes(since: token)
            return "ok"
        } catch let error as LibraryError {
            return error.code
        } catch {
            return "\(error)"
        }
    }

    /// Users appeared at 3, group stars at 4, play queues at 5, bookmarks, stations and shares at
    /// 8: a fixture of an older version has none of them, and the upgrade creates them empty.
    static func expectUsersAndTheirData(_ library: Library, facts: Facts, version: Int, users: [String]) async throws {
        #expect(try await library.users().map(\.name) == users)
        guard version >= 3 else {
            #expect(users.isEmpty)
            return
        }
        #expect(users == ["owner", "guest"])
        for (name, password) in passwords {
            let user = try await library.authenticate(name: name, password: password)
            #expect(user?.name == name && user?.isOwner == (name == "owner"), "\(name) signs in at schema \(version)")
            #expect(try await library.authenticate(name: name, password: password + "x") == nil)
        }
        let guest = try #require(try await library.user(named: "guest"))
        #expect(try await library.user(forAPIKey: facts.apiKey)?.id == guest.id)
        #expect(try await library.playlistOwners()[PlaylistID(facts.playlist)]?.user == guest.id)
        #expect(try await library.starredTracks(of: guest.id).count == 2)
        #expect(try await library.starredGroups(of: guest.id, kind: .album).count == (version >= 4 ? 1 : 0))
        #expect(try await library.playQueue(of: guest.id)?.tracks.count == (version >= 5 ? 3 : nil))
        #expect(try await library.bookmarks(of: guest.id).count == (version >= 8 ? 1 : 0))
        #expect(try await library.radioStations().count == (version >= 8 ? 1 : 0))
        #expect(try await library.shares(of: nil).count == (version >= 8 ? 1 : 0))
        // The listen log and scrobbling came with 12: older plays stay counted, without listens.
        #expect(try await library.listenCount(of: guest.id) == (version >= 12 ? 1 : 0))
        #expect(try await library.scrobbleSecret(of: guest.id, .listenbrainz) == (version >= 12 ? "fixture-token" : nil))
        #expect(try await library.userTrackData(for: guest.id, tracks: try await library.starredTracks(of: guest.id)).isEmpty == false)
        // Sonic analysis came with 13: older stores have every track waiting.
        let counts = try await library.analysisCounts()
        #expect(counts.done == (version >= 13 ? 1 : 0) && counts.failed == 0 && counts.pending > 0)
    }

    /// Libraries came with schema 11: an older store's remembered roots (schema 10 remembers
    /// `/fixture/music`) become one library, Music, which every user sees, and a reader limited
    /// to it sees every track the store had.
    static func expectOneLibrary(_ library: Library, version: Int, tracks: Int) async throws {
        let libraries = try await library.libraries()
        #expect(libraries.map(\.name) == ["Music"] && libraries.first?.id == 1, "schema \(version): \(libraries)")
        #expect(libraries.first?.roots == (version >= 10 ? ["/fixture/music"] : []), "schema \(version)")
        for user in try await library.users() {
            #expect(user.libraries == nil && user.seesAllLibraries, "\(user.name) at schema \(version)")
        }
        if version >= 10 {
            let scope = try await library.scope(libraries: [1])
            let visible = try await LibraryScope.$current.withValue(scope) { try await library.list(LibraryQuery(), limit: 1_000).total }
            #expect(visible == tracks, "schema \(version): the Music library holds every track")
        }
    }

    /// The mirror builds over the migrated store and answers lists, sections, views and the smart
    /// playlist exactly as the direct path does.
    static func expectMirrorParity(_ library: Library, facts: Facts) async throws {
        #expect(try await library.completeMirror().state == .ready)
        let engines = try Engines(library)
        for query in [
            LibraryQuery(sort: .title), LibraryQuery(sort: .artist, descending: true), LibraryQuery(sort: .album, useSortTags: false),
            LibraryQuery(sort: .year, filter: .text(.genre, .equals("rock"))), LibraryQuery(sort: .playCount, descending: true),
        ] {
            try engines.expectParity(query, pageSize: 3)
        }
        try GroupTests.expectGroupParity(engines)
        let context = try await library.smartContext()
        let smart = PlaylistID(facts.smartPlaylist)
        #expect(try engines.mirrored.smartTracks(smart, context) == (try engines.direct.smartTracks(smart, context)))
        #expect(try await library.smartPlaylistTracks(smart).count == 4)
    }

    /// Compacting the upgraded history works like compacting any other: tokens inside the
    /// compacted range answer `detailsUnavailable`, their summary still answers, the last works.
    static func expectCompaction(_ library: Library, facts: Facts) async throws {
        func token(_ transaction: Int64) -> ChangeToken { ChangeToken(storeID: facts.storeID, transaction: transaction) }
        let report = try await library.compactHistory(retention: HistoryRetention.none)
        #expect(report.detailsFrom == token(facts.last))
        #expect(await answer(library, since: token(facts.afterImport)) == "detailsUnavailable")
        #expect(await answer(library, since: token(facts.afterEdits)) == "detailsUnavailable")
        #expect(await answer(library, since: token(facts.last)) == "ok")
        let summary = try await library.changeSummary(since: token(facts.afterImport))
        #expect(summary.tracks.deleted.contains(.track(TrackID(facts.deletedTrack))))
    }

    @Test func aNewerSchemaIsRefusedWithBothVersionsNamed() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("library.sqlite").path
        let newer = Schema.currentVersion + 1
        do {
            let db = try Connection(path: path)
            try db.execute(script: Schema.version2 + "\nPRAGMA user_version = \(newer);")
        }
        do {
            try await Library(directory: dir.url).open()
            Issue.record("a store of schema \(newer) opened")
        } catch let error as LibraryError {
            guard case .newerSchema(_, let found, let supported) = error else {
                Issue.record("expected newerSchema, got \(error)")
                return
            }
            #expect(found == newer && supported == Schema.currentVersion)
            let message = String(describing: error)
            #expect(message.contains("schema \(newer)") && message.contains("up to \(Schema.currentVersion)"), "\(message)")
        }
        #expect(try Connection(path: path, mode: .readOnly).scalar(Int.self, "PRAGMA user_version") == newer)
    }

    // MARK: Reading a fixture and a migrated store

    /// What a fixture holds, read before anything migrates it.
    struct Contents {
        var version = 0
        /// Title, artist and album by track ID.
        var texts: [Int64: [String?]] = [:]
        /// Each track's picture bytes (inline at version 1, in the artwork table after).
        var pictures: [Int64: Data] = [:]
        var artworkCount = 0
        var playlistCount = 0
        var items: [Int64: [Int64]] = [:]
        var users: [String] = []
    }

    /// Loads the SQL text into a new store at `path` and reads what it holds.
    static func load(_ sql: String, into path: String) throws -> Contents {
        let db = try Connection(path: path)
        try db.execute(script: sql)
        var contents = Contents()
        contents.version = try db.scalar(Int.self, "PRAGMA user_version") ?? 0
        let tables = Set(try db.query("SELECT name FROM sqlite_master WHERE type = 'table'", []) { try $0.string(0) })
        try db.forEachRow("SELECT id, title, artist, album FROM track") { row in
            contents.texts[try row.int64(0)] = [row.optionalString(1), row.optionalString(2), row.optionalString(3)]
        }
        if contents.version == 1 {
            try db.forEachRow("SELECT id, artwork_data FROM track WHERE artwork_data IS NOT NULL") { contents.pictures[try $0.int64(0)] = try $0.data(1) }
            contents.artworkCount = Set(contents.pictures.values).count
        } else {
            try db.forEachRow("SELECT t.id, a.data FROM track AS t JOIN artwork AS a ON a.id = t.artwork_id") {
                contents.pictures[try $0.int64(0)] = try $0.data(1)
            }
            contents.artworkCount = try db.scalar(Int.self, "SELECT count(*) FROM artwork") ?? 0
        }
        contents.playlistCount = try db.scalar(Int.self, "SELECT count(*) FROM playlist") ?? 0
        try db.forEachRow("SELECT playlist_id, track_id FROM playlist_item ORDER BY playlist_id, position") {
            contents.items[try $0.int64(0), default: []].append(try $0.int64(1))
        }
        if tables.contains("user") { contents.users = try db.query("SELECT name FROM user ORDER BY id", []) { try $0.string(0) } }
        return contents
    }

    /// The checks SQLite itself makes of a store, read beside the open library.
    static func inspect(_ path: String) throws -> (integrity: [String], foreignKeyViolations: [String], version: Int, migratedFromVersion1: Bool) {
        let db = try Connection(path: path, mode: .readOnly)
        return (
            try db.query("PRAGMA integrity_check", []) { try $0.string(0) },
            try db.query("PRAGMA foreign_key_check", []) { "\(try $0.string(0)) → \(try $0.string(2))" },
            try db.scalar(Int.self, "PRAGMA user_version") ?? 0,
            try db.scalar(String.self, "SELECT value FROM meta WHERE key = 'migrated_from_version_1'") != nil
        )
    }

    // MARK: Writing the fixtures

    /// Writes `Fixtures/schema-N.sql` for every version and `Fixtures/tokens.json`: one rich
    /// library made through the public API at the current version, then, for each version, an
    /// empty store made by that version's schema code with the source's rows copied into the
    /// tables and columns it has.
    @Test(.enabled(if: UpgradeFixtureTests.writing))
    func writeFixtures() async throws {
        let work = try TemporaryDirectory(prefix: "shelf-fixtures")
        let music = work.path("music")
        let source = work.path("source")
        let facts = try await Self.makeSource(music: music, library: source)
        let sqlite3 = try #require(
            ["/usr/bin/sqlite3", "/usr/local/bin/sqlite3", "/opt/homebrew/bin/sqlite3"].first { FileManager.default.isExecutableFile(atPath: $0) },
            "writing the fixtures needs the sqlite3 command (.dump)")
        try FileManager.default.createDirectory(at: Self.fixtures, withIntermediateDirectories: true)
        // The longer spelling first, so that the shorter one never rewrites part of it.
        let prefixes = Set([music.path, music.resolvingSymlinksInPath().path]).sorted { $0.count > $1.count }
        for version in 1...Schema.currentVersion {
            let path = work.path("schema-\(version).sqlite").path
            try Self.makeStore(version: version, at: path, from: source.appendingPathComponent("library.sqlite").path, musicPrefixes: prefixes)
            let dump = try ChildProcess.run(URL(fileURLWithPath: sqlite3), [path, ".dump"])
            try #require(dump.status == 0, "sqlite3 .dump \(path): \(dump.stderr)")
            // .dump leaves out user_version, which is what says which layout the rows are in.
            let text =
                "-- Shelf schema \(version), written by Tests/ShelfTests/UpgradeFixtureTests.swift (see README.md); regenerate, do not edit.\n"
                + dump.stdout + "PRAGMA user_version = \(version);\n"
            try Data(text.utf8).write(to: Self.fixtures.appendingPathComponent("schema-\(version).sql"))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try (encoder.encode(facts) + Data("\n".utf8)).write(to: Self.fixtures.appendingPathComponent("tokens.json"))
    }

    /// One album of FLAC files and one of WAV files, each with its 8×8 cover embedded; the
    /// second with sort tags and Japanese, so that sections and sort keys have something to do.
    static let albums: [(folder: String, flac: Bool, tags: [String: String], titles: [String])] = [
        (
            "The Fixtures - Fixture Album", true,
            [
                "ARTIST": "The Fixtures", "ALBUMARTIST": "The Fixtures", "ARTISTSORT": "Fixtures, The", "ALBUM": "Fixture Album", "GENRE": "Rock",
                "DATE": "1999",
            ],
            ["Opening", "Second Song", "Track 10", "Ünïcode Ballad"]
        ),
        (
            "宇多田ヒカル - 光", false,
            ["ARTIST": "宇多田ヒカル", "ALBUMARTIST": "宇多田ヒカル", "ARTISTSORT": "うただひかる", "ALBUM": "光", "GENRE": "J-Pop", "DATE": "2002"],
            ["光", "traveling", "Automatic", "First Love"]
        ),
    ]

    /// Builds the source library at the current version through the public API and returns what
    /// the fixtures cannot say by themselves.
    static func makeSource(music: URL, library directory: URL) async throws -> Facts {
        for (albumIndex, album) in albums.enumerated() {
            let cover = try TestPictures.jpeg(width: 8, height: 8, seed: albumIndex + 1)
            for (index, title) in album.titles.enumerated() {
                let url = music.appendingPathComponent(album.folder).appendingPathComponent("0\(index + 1).\(album.flac ? "flac" : "wav")")
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                // Distinct tones, so that no file's audio hash marks it a duplicate of another.
                let frequency = 300 + Double(albumIndex * 10 + index) * 37
                try (album.flac ? TestAudio.flac(seconds: 0.2, frequency: frequency) : TestAudio.wav(seconds: 0.2, frequency: frequency)).write(to: url)
                var tags = album.tags.mapValues { Optional($0) }
                tags["TITLE"] = title
                tags["TRACKNUMBER"] = "\(index + 1)/\(album.titles.count)"
                try TagFile.write(url, tags)
                try TagFile.writePicture(url, cover)
            }
        }
        // The store is made before the library opens it, so that its ID is the fixed one.
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Self.createStore(at: directory.appendingPathComponent("library.sqlite").path)
        try SecretKey.install(secretKey, directory: directory)
        let library = Library(directory: directory, configuration: Library.Configuration(buildsMirrorInBackground: false))

        let report = try await library.importFiles(at: [music])
        try #require(report.added == 8 && report.failed.isEmpty, "import: \(report.failed)")
        let afterImport = try await library.currentToken().transaction
        let tracks = try await library.tracks(ids: try await library.snapshot(LibraryQuery(sort: .title))).tracks
        let byTitle = Dictionary(uniqueKeysWithValues: tracks.map { ($0.title ?? "", $0) })
        let opening = try #require(byTitle["Opening"])
        let hikari = try #require(byTitle["光"])
        let second = try #require(byTitle["Second Song"])
        let deleted = try #require(byTitle["Automatic"]).id

        // Edits, a deletion and playlists: what a token from after the import must learn.
        let edit = try await library.edit([opening.id], MetadataChanges([.title: "Opening (edited)", .comment: "edited before the upgrade"]))
        try #require(edit.updated == [opening.id], "edit: \(edit.failed)")
        try await library.write { batch in try batch.deleteTrack(deleted) }
        let playlist = try await library.write { batch in
            let id = try batch.createPlaylist(Playlist(name: "Fixture mix", comment: "#fixture"))
            try batch.setPlaylistItems(id, [opening.id, hikari.id, second.id, opening.id])
            return id
        }
        let smart = try await library.createSmartPlaylist(name: "Fixture rock", rules: SmartRules(.filter(.text(.genre, .equals("rock")))))
        let afterEdits = try await library.currentToken().transaction

        // Users and what is theirs; each table that a version lacks simply drops out of its fixture.
        let owner = try await library.addUser(name: "owner", password: passwords["owner"]!)
        let guest = try await library.addUser(name: "guest", password: passwords["guest"]!)
        let apiKey = try await library.createAPIKey(for: guest.id).key
        let album = try #require(Library.groupIDs(of: opening).album)
        try await library.write { batch in
            try batch.setRating(opening.id, by: owner.id, 80)
            try batch.setRating(hikari.id, by: guest.id, 60)
            try batch.setStarred([opening.id, hikari.id], by: guest.id, true)
            try batch.linkScrobbling(guest.id, .listenbrainz, secret: "fixture-token", account: "guest", url: nil)
            try batch.recordPlay(opening.id, by: owner.id, at: playedAt)
            try batch.recordPlay(second.id, by: guest.id, at: playedAt)
            try batch.setGroupsStarred([album], kind: .album, by: guest.id, true)
            try batch.savePlayQueue(of: guest.id, tracks: [opening.id, hikari.id, second.id], current: hikari.id, position: 1_234, changedBy: "fixture")
            try batch.saveBookmark(of: guest.id, track: second.id, position: 5_000, comment: "fixture bookmark")
            try batch.addRadioStation(name: "Fixture FM", streamURL: "https://radio.example/stream", homePageURL: "https://radio.example/")
            try batch.createShare(by: guest.id, tracks: [opening.id, hikari.id], description: "fixture share", expires: nil)
            try batch.setPlaylistOwner(playlist, guest.id, public: true)
        }
        // One track's sonic features (schema 13), fixed numbers: the fixture keeps no clock but the row's.
        let features = try #require(SonicFeatures(values: (0..<SonicFeatures.count).map { Float($0) / 4 + 1 }))
        try await library.storeSonic(key: Library.sonicKey(opening), outcome: SonicOutcome(status: .ok, features: features, seconds: 12))
        let last = try await library.currentToken()
        try #require(last.storeID == storeID && afterImport < afterEdits && afterEdits < last.transaction)
        return Facts(
            storeID: storeID, afterImport: afterImport, afterEdits: afterEdits, last: last.transaction, editedTrack: opening.id.rawValue,
            deletedTrack: deleted.rawValue, playlist: playlist.rawValue, smartPlaylist: smart.rawValue, apiKey: apiKey)
    }

    /// A new store at the current version whose ID is `storeID`.
    static func createStore(at path: String) throws {
        let db = try Connection(path: path)
        try Migrations.run(on: db, from: 0)
        try db.execute("UPDATE meta SET value = ? WHERE key = 'store_id'", [storeID.uuidString])
    }

    /// An empty store of `version` made by that version's schema code (the legacy layout for 1,
    /// the migration steps up to `version` otherwise, each as `Migrations.run` applies it), then
    /// the source's rows copied into the tables and columns that version has.
    static func makeStore(version: Int, at path: String, from source: String, musicPrefixes: [String]) throws {
        let db = try Connection(path: path)
        if version == 1 {
            try db.execute(script: Schema.legacyVersion1 + "; PRAGMA user_version = 1;")
        } else {
            for step in Migrations.steps where step.to <= version {
                try db.transaction(.immediate) {
                    try step.apply(db)
                    try db.execute(script: "PRAGMA user_version = \(step.to)")
                }
            }
        }
        try #require(try db.scalar(Int.self, "PRAGMA user_version") == version)
        // Rows go in table by table, so a child may come before its parent.
        try db.execute(script: "PRAGMA foreign_keys = OFF;")
        try db.execute("ATTACH DATABASE ? AS src", [source])
        try db.transaction(.immediate) {
            let tables = try db.query("SELECT name FROM main.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name", []) {
                try $0.string(0)
            }
            let sourceTables = Set(try db.query("SELECT name FROM src.sqlite_master WHERE type = 'table'", []) { try $0.string(0) })
            // `meta` keeps what this version's own steps wrote (group_log_start from 8 on), with the source's identity.
            for table in tables where table != "meta" && sourceTables.contains(table) {
                let theirs = Set(try columns(db, "src", table))
                let common = try columns(db, "main", table).filter(theirs.contains).map { "\"\($0)\"" }.joined(separator: ", ")
                // `library` holds the row the 10 → 11 step made (Music): the source's replaces it.
                let verb = table == "library" ? "INSERT OR REPLACE" : "INSERT"
                try db.execute(script: "\(verb) INTO main.\"\(table)\" (\(common)) SELECT \(common) FROM src.\"\(table)\";")
            }
            try db.execute(script: "INSERT OR REPLACE INTO main.meta (key, value) SELECT key, value FROM src.meta WHERE key IN ('store_id', 'created');")
            if version == 1 {
                // Version 1 kept each track's picture in its own row.
                try db.execute(
                    script: """
                        UPDATE main.track SET artwork_data = (
                          SELECT a.data FROM src.track AS s JOIN src.artwork AS a ON a.id = s.artwork_id WHERE s.id = track.id);
                        """)
            }
            if (2..<5).contains(version) {
                // Play queues came with version 5: an older store could not have logged one.
                try db.execute("DELETE FROM main.change_log WHERE object_type = ?", [Int64(ObjectType.playQueue.rawValue)])
            }
            // The history's positions live in sqlite_sequence (change_transaction's is the current token).
            let sequences = try db.query("SELECT name, seq FROM src.sqlite_sequence", []) { (try $0.string(0), try $0.int64(1)) }
            for (name, seq) in sequences where tables.contains(name) {
                try db.execute("DELETE FROM main.sqlite_sequence WHERE name = ?", [name])
                try db.execute("INSERT INTO main.sqlite_sequence (name, seq) VALUES (?, ?)", [name, seq])
            }
            // The same paths whatever temporary directory the source was made in.
            for table in ["track", "music_root"] where tables.contains(table) {
                for prefix in musicPrefixes {
                    try db.execute("UPDATE main.\"\(table)\" SET path = replace(path, ?, '/fixture/music')", [prefix])
                }
            }
        }
        let integrity = try db.query("PRAGMA main.integrity_check", []) { try $0.string(0) }
        try #require(integrity == ["ok"], "schema \(version): integrity_check \(integrity)")
        let violations = try db.query("PRAGMA main.foreign_key_check", []) { "\(try $0.string(0)) → \(try $0.string(2))" }
        try #require(violations.isEmpty, "schema \(version): foreign_key_check \(violations)")
    }

    static func columns(_ db: Connection, _ schema: String, _ table: String) throws -> [String] {
        try db.query("PRAGMA \(schema).table_info(\"\(table)\")", []) { try $0.string(1) }
    }
}
