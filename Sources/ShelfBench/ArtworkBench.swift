import Foundation
import Shelf
import ShelfCore
import ShelfDatabase
import ShelfTestSupport

/// `shelf-bench artwork`: seed 000's measurements, each in a fresh process (this executable run
/// again with `artwork-probe`), reported as tables or one JSON document.
struct ArtworkBench {
    let directory: URL
    let tracks: Int

    init(_ words: [String]) throws {
        let flags = try Flags(words, known: ["--library", "--tracks"])
        guard let path = flags.string("--library") else { throw BenchUsageError(message: "--library is required") }
        directory = URL(fileURLWithPath: path)
        tracks = try flags.int("--tracks", default: 3_000)
    }

    private func log(_ text: String) { FileHandle.standardError.write(Data("\(text)\n".utf8)) }

    /// Runs one probe in a new process and returns its last stdout line as JSON.
    private func probe(_ arguments: [String]) throws -> [String: Any] {
        let result = try ChildProcess.run(URL(fileURLWithPath: CommandLine.arguments[0]), ["artwork-probe"] + arguments)
        guard result.status == 0, let line = result.stdout.split(separator: "\n").last,
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        else { throw BenchUsageError(message: "probe \(arguments) failed: \(result.stderr)") }
        return object
    }

    func run(_ results: inout Report) async throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let legacy = directory.appendingPathComponent("legacy")
        let migrated = directory.appendingPathComponent("migrated")
        let covers = directory.appendingPathComponent("covers")
        let me = URL(fileURLWithPath: CommandLine.arguments[0])

        // (a) Listing every title: the legacy rows (pictures inline) against the migrated store.
        if !FileManager.default.fileExists(atPath: legacy.path) {
            log("writing the legacy store (\(tracks) × 100 KiB pictures)")
            _ = try ChildProcess.run(me, ["legacy-store", "--tracks", "\(tracks)", "--artwork-kib", "100", "--library", legacy.path])
        }
        if !FileManager.default.fileExists(atPath: migrated.path) {
            log("copying and migrating it")
            try FileManager.default.copyItem(at: legacy, to: migrated)
            _ = try await Library(directory: migrated).migrateLegacyStore()
        }
        let legacyList = try probe(["list-legacy", legacy.path])
        let migratedList = try probe(["list", migrated.path])
        results.table(
            "(a) listing \(tracks) titles, each in a fresh process", key: "listing",
            [
                .init("store", "store"), .init("RSS after listing MiB", "rssAfterMiB", decimals: 1),
                .init("RSS growth MiB", "rssGrowthMiB", decimals: 1), .init("fetch to last title ms", "fetchToLastTitleMs", decimals: 1),
                .init("titles", "titles"),
            ],
            [("legacy (pictures inline)", legacyList), ("migrated (artwork table)", migratedList)].map { name, values in
                [name, Self.mib(values["rssAfter"]), Self.mib(values["rssGrowth"]), Self.figure(values["ms"]), Self.figure(values["titles"])]
            })

        // (b) The loader over 3,000 600×600 JPEGs at 60 px and at 600 px, in separate processes.
        if !FileManager.default.fileExists(atPath: covers.path) {
            log("generating \(tracks) tracks with a 600×600 noise JPEG each")
            _ = try ChildProcess.run(me, ["generate", "--tracks", "\(tracks)", "--library", covers.path, "--artwork-px", "600", "--artwork-per-track"])
        }
        var scans: [(Int, [String: Any])] = []
        for size in [60, 600] { scans.append((size, try probe(["scan", covers.path, "\(size)"]))) }
        results.table(
            "(b) the loader reading every picture once, 32 MiB cache", key: "loader",
            [
                .init("size px", "sizePx"), .init("images decoded", "imagesDecoded"), .init("cache MiB", "cacheMiB", decimals: 1),
                .init("images held", "imagesHeld"), .init("evictions", "evictions"), .init("RSS before MiB", "rssBeforeMiB", decimals: 1),
                .init("final RSS MiB", "rssFinalMiB", decimals: 1), .init("peak RSS MiB", "peakMiB", decimals: 1),
                .init("cache within limit after every load", "cacheWithinLimit"), .init("seconds", "seconds", decimals: 1),
            ],
            scans.map { size, v in
                [
                    size, Self.figure(v["decodes"]), Self.mib(v["cachedBytes"]), Self.figure(v["imagesHeld"]), Self.figure(v["evictions"]),
                    Self.mib(v["rssBefore"]), Self.mib(v["rssFinal"]), Self.mib(v["rssPeak"]), (v["withinLimit"] as? Bool) == true, Self.figure(v["seconds"]),
                ]
            })

        // (c) Thumbnails per second: DCT scaling, whole decode then scaling, and Pillow's draft mode.
        let thumbs = try probe(["thumbs", covers.path, "200"])
        let pillowSkipped = Report.Value.absent("skipped (\(thumbs["pillowNote"] ?? "no Pillow"))")
        results.table(
            "(c) thumbnails per second over \(thumbs["pictures"] as? Int ?? 0) of the 600×600 JPEGs", key: "thumbnails",
            [
                .init("size px", "sizePx"), .init("pictures", "pictures"), .init("Shelf, DCT scaling /s", "dctPerSecond"),
                .init("Shelf, whole decode then scale /s", "wholeDecodePerSecond"), .init("Pillow draft() /s", "pillowDraftPerSecond"),
            ],
            [60, 300].map { size in
                [
                    size, Self.figure(thumbs["pictures"]), Self.figure(thumbs["dct\(size)"]), Self.figure(thumbs["full\(size)"]),
                    thumbs["pillow\(size)"].map(Self.figure) ?? pillowSkipped,
                ]
            })
    }

    /// A probe's byte count in MiB.
    static func mib(_ value: Any?) -> Double? {
        (value as? Int).map { Double($0) / 1_048_576 } ?? (value as? Double).map { $0 / 1_048_576 }
    }

    /// A probe's JSON number (or flag) as a report figure; anything else is absent.
    static func figure(_ value: Any?) -> Report.Value {
        switch value {
        case let value as Int: .int(value)
        case let value as Double: .number(value)
        case let value as Bool: .flag(value)
        default: .absent("–")
        }
    }
}

/// The measurements `shelf-bench artwork` runs, one per process.
enum ArtworkProbe {
    /// Resident and peak resident bytes of this process (from /proc).
    static func memory() -> (rss: Int, peak: Int) {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return (0, 0) }
        func field(_ name: String) -> Int {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name) }) else { return 0 }
            return (Int(line.split(separator: " ").dropFirst().first { Int($0) != nil } ?? "0") ?? 0) * 1024
        }
        return (field("VmRSS:"), field("VmHWM:"))
    }

    static func emit(_ values: [String: Any]) throws {
        print(String(decoding: try JSONSerialization.data(withJSONObject: values, options: [.sortedKeys]), as: UTF8.self))
    }

    static func run(_ words: [String]) async throws {
        guard let mode = words.first, words.count >= 2 else { throw BenchUsageError(message: "artwork-probe MODE DIR …") }
        let directory = URL(fileURLWithPath: words[1])
        switch mode {
        case "list-legacy":
            // The seed's first design: every row fetched whole into the model, picture included.
            let db = try Connection(path: directory.appendingPathComponent("library.sqlite").path, mode: .readOnly)
            let before = memory().rss
            let start = DispatchTime.now().uptimeNanoseconds
            struct Row {
                let id: Int64
                let title: String?
                let artist: String?
                let album: String?
                let picture: Data?
            }
            let rows = try db.query("SELECT id, title, artist, album, artwork_data FROM track ORDER BY id", []) { row in
                Row(
                    id: try row.int64(0), title: row.optionalString(1), artist: row.optionalString(2), album: row.optionalString(3),
                    picture: row.optionalData(4))
            }
            let titles = rows.compactMap(\.title)
            let ms = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
            let after = memory().rss
            try emit(["rows": rows.count, "titles": titles.count, "ms": ms, "rssAfter": after, "rssGrowth": after - before])
        case "list":
            let library = Library(directory: directory)
            try await library.open()
            // The steady state: the read mirror built (a migrated store builds it once, at its first open).
            try await library.waitForMirror()
            let before = memory().rss
            let start = DispatchTime.now().uptimeNanoseconds
            var titles: [String] = []
            var cursor: PageCursor?
            repeat {
                let page = try await library.list(LibraryQuery(sort: .title), after: cursor, limit: 500)
                titles += page.items.compactMap(\.title)
                cursor = page.nextCursor
            } while cursor != nil
            let ms = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
            let after = memory().rss
            try emit(["titles": titles.count, "ms": ms, "rssAfter": after, "rssGrowth": after - before])
        case "scan":
            let size = Int(words.count > 2 ? words[2] : "60") ?? 60
            let library = Library(directory: directory)
            let loader = library.makeArtworkLoader()
            let ids = try await library.snapshot(LibraryQuery(sort: .title))
            var within = true
            let rssBefore = memory().rss
            let start = Date()
            for id in ids {
                guard let track = try await library.track(id), let artwork = track.artworkID else { continue }
                _ = try await loader.image(for: ArtworkRequest(trackID: id, artworkID: artwork), maxPixelSize: size)
                if !loader.cache.invariantViolations().isEmpty { within = false }
            }
            let stats = loader.cache.stats
            let memory = memory()
            try emit([
                "decodes": loader.stats.decodes, "cachedBytes": stats.cachedBytes, "imagesHeld": stats.imagesHeld,
                "evictions": stats.evictions, "rssFinal": memory.rss, "rssPeak": memory.peak, "rssBefore": rssBefore, "withinLimit": within,
                "seconds": Date().timeIntervalSince(start),
            ])
        case "thumbs":
            let count = Int(words.count > 2 ? words[2] : "200") ?? 200
            let db = try Connection(path: directory.appendingPathComponent("library.sqlite").path, mode: .readOnly)
            let pictures = try db.query("SELECT data FROM artwork LIMIT ?", [count]) { try $0.data(0) }
            var values: [String: Any] = ["pictures": pictures.count]
            for size in [60, 300] {
                for (name, dct) in [("dct", true), ("full", false)] {
                    let start = DispatchTime.now().uptimeNanoseconds
                    for picture in pictures { _ = try ImageCodec.decode(picture, maxPixelSize: size, dctScaling: dct) }
                    values["\(name)\(size)"] = Double(pictures.count) / (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
                }
            }
            // Pillow on the same bytes, written to files, with draft() (libjpeg-turbo's DCT scaling).
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("shelf-thumbs-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            for (index, picture) in pictures.enumerated() { try picture.write(to: folder.appendingPathComponent("\(index).jpg")) }
            let script = """
                import sys, time, glob
                try:
                    from PIL import Image
                except ImportError:
                    print("absent"); sys.exit(0)
                files = [open(f, "rb").read() for f in sorted(glob.glob(sys.argv[1] + "/*.jpg"))]
                import io
                for size in (60, 300):
                    start = time.perf_counter()
                    for data in files:
                        image = Image.open(io.BytesIO(data))
                        image.draft("RGB", (size, size))
                        image = image.convert("RGBA")
                        image.thumbnail((size, size), Image.Resampling.BOX)
                    print(size, len(files) / (time.perf_counter() - start))
                """
            let result = try ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, folder.path])
            if result.stdout.contains("absent") || result.status != 0 {
                values["pillowNote"] = "Pillow not installed: pip install Pillow"
            } else {
                for line in result.stdout.split(separator: "\n") {
                    let parts = line.split(separator: " ")
                    if parts.count == 2, let rate = Double(parts[1]) { values["pillow\(parts[0])"] = rate }
                }
            }
            try emit(values)
        default:
            throw BenchUsageError(message: "unknown probe \(mode)")
        }
    }
}
