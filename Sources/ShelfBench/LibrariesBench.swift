import Foundation
import Shelf
import ShelfCore
import ShelfTestSupport

/// `shelf-bench libraries`: issue 40's table. A generated library split into three libraries of
/// about 50 %, 30 % and 20 % of the album artists; every read measured for a reader limited to one
/// of them (the 30 %) and to two (the 50 % and the 20 %) beside the same read by an admin, in one
/// run, each row with its ratio and whether it meets its target.
struct LibrariesBench {
    let tracks: Int
    let directory: URL?
    let runs: Int

    init(_ words: [String]) throws {
        let flags = try Flags(words, known: ["--tracks", "--library", "--runs"])
        tracks = try flags.int("--tracks", default: 100_000)
        guard tracks >= 1_000 else { throw BenchUsageError(message: "--tracks expects at least 1000") }
        directory = flags.string("--library").map { URL(fileURLWithPath: $0) }
        runs = max(3, try flags.int("--runs", default: 11))
    }

    /// One measured read: the limited reader's median beside the admin's.
    struct Line {
        let measure: String
        let reader: String
        let ms: Double
        let adminMs: Double
        let target: String
        let met: Bool
        var ratio: Double { adminMs > 0 ? ms / adminMs : 0 }
    }

    private func log(_ text: String) { FileHandle.standardError.write(Data("\(text)\n".utf8)) }

    /// The folder of 2,000 tracks getMusicDirectory opens.
    static let bigFolder = "/music/L1/A Folder Of Two Thousand"

    func run(_ report: inout Report) async throws {
        let scratch = try TemporaryDirectory(prefix: "shelf-bench-libraries")
        let dir = directory ?? scratch.url
        let library = Library(directory: dir, configuration: .init(buildsMirrorInBackground: false))
        if try await library.info().trackCount == 0 {
            log("generating \(tracks) tracks in three library folders (50/30/20 %) and a folder of 2,000")
            var generator = DatasetGenerator(tracks: tracks, seed: 7)
            generator.libraryShares = [50, 30, 20]
            _ = try await generator.fill(library)
            try await library.write { batch in
                for index in 0..<2_000 {
                    _ = try batch.insert(
                        Track(
                            path: "\(Self.bigFolder)/track \(String(format: "%04d", index)).flac", fileSize: 1_000, title: "Track \(index)",
                            artist: "Folder Artist", album: "Folder Album", duration: 180))
                }
            }
        }
        log("building the mirror")
        _ = try await library.completeMirror()
        let mirrorBytes = try await library.mirrorStatus().bytesOnDisk
        var ids: [String: Int] = [:]
        for (name, folder) in [("Half", "L1"), ("Third", "L2"), ("Fifth", "L3")] {
            ids[name] = try await library.addLibrary(name: name, roots: [URL(fileURLWithPath: "/music/\(folder)")], evenIfAbsent: true).id
        }
        let readers: [(String, LibraryScope)] = [
            ("one library (30 %)", try await library.scope(libraries: [ids["Third"]!])),
            ("two libraries (50 % + 20 %)", try await library.scope(libraries: [ids["Half"]!, ids["Fifth"]!])),
        ]
        let runs = self.runs
        /// The median of `body` within `scope`.
        func time(_ scope: LibraryScope, _ body: @escaping @Sendable () async throws -> Void) async throws -> Double {
            try await LibraryScope.$current.withValue(scope) { try await Measure.median(runs: runs, warmup: 1) { try await body() } }
        }
        var lines: [Line] = []
        func compare(_ measure: String, target: String, limit: Double?, ratio: Double = 1.5, _ body: @escaping @Sendable () async throws -> Void) async throws {
            let admin = try await time(.all, body)
            for (name, scope) in readers {
                let ms = try await time(scope, body)
                let met = ms / max(admin, 0.000_001) <= ratio && (limit.map { ms <= $0 } ?? true)
                lines.append(Line(measure: measure, reader: name, ms: ms, adminMs: admin, target: target, met: met))
            }
        }

        log("pages, sections, search")
        for sort in SortField.allCases {
            let query = LibraryQuery(sort: sort)
            try await compare("first page of 100, by \(sort.rawValue)", target: "≤ 1.5× and ≤ 1 ms", limit: 1) {
                _ = try await library.list(query, limit: 100)
            }
            // The cursor at 90 % of each reader's own list, found once, then the page after it timed.
            let adminCursor = try await library.list(query, offset: max(0, (try await library.list(query, limit: 0).total) * 9 / 10 - 1), limit: 1).nextCursor
            let admin = try await time(.all) { _ = try await library.list(query, after: adminCursor, limit: 100) }
            for (name, scope) in readers {
                let cursor = try await LibraryScope.$current.withValue(scope) {
                    try await library.list(query, offset: max(0, (try await library.list(query, limit: 0).total) * 9 / 10 - 1), limit: 1).nextCursor
                }
                let ms = try await time(scope) { _ = try await library.list(query, after: cursor, limit: 100) }
                lines.append(
                    Line(
                        measure: "page of 100 at 90 %, by \(sort.rawValue)", reader: name, ms: ms, adminMs: admin, target: "≤ 1.5× and ≤ 1 ms",
                        met: ms / max(admin, 0.000_001) <= 1.5 && ms <= 1))
            }
        }
        let byArtist = LibraryQuery(sort: .artist)
        try await compare("sections, by artist", target: "≤ 1.5×", limit: nil) { _ = try await library.sections(byArtist) }
        try await compare("anchor M, by artist", target: "≤ 1.5×", limit: nil) { _ = try await library.anchor("M", byArtist) }
        for text in ["s", "the", "宇多"] {
            try await compare("search '\(text)', 50 hits", target: "≤ 1.5×", limit: nil) { _ = try await library.search(text, limit: 50) }
        }

        log("views")
        // getArtists: every album artist; "first" is the first call after a write (a limited
        // reader's views are made again then), "warm" the calls after it.
        let touch = try await library.snapshot(LibraryQuery()).first!
        @Sendable func play() async throws {
            try await library.write { batch in _ = try batch.updateTrack(touch) { $0.playCount += 1 } }
        }
        @Sendable func retag() async throws {
            try await library.write { batch in _ = try batch.updateTrack(touch) { $0.comment = UUID().uuidString } }
        }
        @Sendable func artists() async throws {
            var cursor: PageCursor?
            repeat {
                let page = try await library.groups(GroupQuery(kind: .albumArtist), after: cursor, limit: 5_000, artwork: false)
                cursor = page.nextCursor
            } while cursor != nil
        }
        // A write's own cost is in both columns; what differs is what the views cost after it.
        try await compare("getArtists, first call after a play (write included)", target: "≤ 1.5×", limit: nil) {
            try await play()
            try await artists()
        }
        try await compare("getArtists, first call after a retag (write included)", target: "≤ 1.5×", limit: nil) {
            try await retag()
            try await artists()
        }
        try await compare("getArtists, warm", target: "≤ 1.5×", limit: nil) { try await artists() }
        for offset in [0, 10_000] {
            try await compare("getAlbumList2 alphabeticalByName, 500 at \(offset), warm", target: "≤ 1.5×", limit: nil) {
                _ = try await library.groups(GroupQuery(kind: .album), offset: offset, limit: 500)
            }
        }

        log("folders")
        let big = FolderID(path: Self.bigFolder)
        var folderLines: [(String, Double, String, Bool)] = []
        let halfScope = try await library.scope(libraries: [ids["Half"]!])
        let directory = try await time(halfScope) { _ = try await library.folder(big) }
        folderLines.append(("getMusicDirectory of a folder of 2,000 tracks (the engine's read)", directory, "≤ 10 ms", directory <= 10))
        // getIndexes: the top folders of the 50 % library's root; the first call in a fresh
        // process (a new Library, so nothing is known of the folders), then warm.
        let top = try await LibraryScope.$current.withValue(halfScope) { try await library.rootFolders() }
        let topCount = try await LibraryScope.$current.withValue(halfScope) { try await library.folder(top[0].id)?.folders.count ?? 0 }
        let fresh = Library(directory: dir, configuration: .init(buildsMirrorInBackground: false))
        let firstStart = DispatchTime.now().uptimeNanoseconds
        try await LibraryScope.$current.withValue(halfScope) {
            for root in try await fresh.rootFolders() { _ = try await fresh.folder(root.id, pictures: false) }
        }
        let first = Double(DispatchTime.now().uptimeNanoseconds - firstStart) / 1e6
        folderLines.append(("getIndexes of a library of \(topCount) top folders, first call", first, "≤ 50 ms", first <= 50))
        let warm = try await time(halfScope) {
            for root in try await library.rootFolders() { _ = try await library.folder(root.id, pictures: false) }
        }
        folderLines.append(("getIndexes of a library of \(topCount) top folders, warm", warm, "≤ 50 ms", warm <= 50))

        report.table(
            key: "libraries",
            [
                .init("measure", "measure"), .init("reader", "reader"), .init("ms", "ms", decimals: 3), .init("admin ms", "adminMs", decimals: 3),
                .init("ratio", "ratio", decimals: 2, suffix: "×"), .init("target", "target"), .init("met", "met"),
            ],
            lines.map { [$0.measure, $0.reader, $0.ms, $0.adminMs, $0.ratio, $0.target, $0.met ? "yes" : "no"] })
        report.table(
            key: "folders",
            [.init("measure", "measure"), .init("ms", "ms", decimals: 3), .init("target", "target"), .init("met", "met")],
            folderLines.map { [$0.0, $0.1, $0.2, $0.3 ? "yes" : "no"] })
        report.sentence(
            "\(figure: "tracks", tracks) tracks (and a folder of 2,000); the mirror is \(figure: "mirrorBytes", mirrorBytes) bytes with or without libraries: a reader's libraries narrow its reads by the roots' paths, so the mirror has no library columns or indexes (+0 %, target ≤ +10 %); \(figure: "metRows", lines.filter(\.met).count) of \(figure: "rows", lines.count) rows meet their targets."
        )
    }
}
