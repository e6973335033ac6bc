import Foundation
import Shelf
import ShelfCore
import ShelfTestSupport

/// `shelf-bench rescan`: a library of `--files` real files on disk (the 0.3 s sample files, 500,500
/// by default) rescanned when nothing changed, with a cold page cache and a warm one — the import
/// of the root (every file's size and time compared, nothing read, nothing committed) and `shelf
/// scan` (the missing-file check) — then `--added` files written in as many new folders, found
/// and imported with a cold cache. Each run is a fresh process (`import-probe`, `scan-probe`).
struct RescanBench {
    let files: Int
    let added: Int
    let directory: URL
    /// `--warm`: never empty the page cache (every run is warm).
    let warmOnly: Bool

    /// Reads `--dir DIR [--files 500500] [--added 1000] [--warm]`.
    init(_ words: [String]) throws {
        let flags = try Flags(words, known: ["--dir", "--files", "--added"], switches: ["--warm"])
        warmOnly = flags.bool("--warm")
        guard let path = flags.string("--dir") else { throw BenchUsageError(message: "--dir is required") }
        directory = URL(fileURLWithPath: path)
        files = max(10, try flags.int("--files", default: 500_500))
        added = max(1, try flags.int("--added", default: 1_000))
    }

    private func log(_ text: String) { FileHandle.standardError.write(Data("rescan: \(text)\n".utf8)) }

    /// One probe's JSON answer.
    struct Probe {
        let values: [String: Any]
        /// The probe's whole time, opening the library included (the import's own where absent).
        var seconds: Double { values["wallSeconds"] as? Double ?? values["seconds"] as? Double ?? .nan }
        var readMB: Double? { (values["readBytes"] as? Int).map { Double($0) / 1e6 } }
        var cpuSeconds: Double? { values["cpuSeconds"] as? Double }
        var peakMiB: Double? { (values["peak"] as? Int).map { Double($0) / 1_048_576 } }
        func int(_ key: String) -> Int { values[key] as? Int ?? 0 }
        var tokenMoved: Bool { values["tokenMoved"] as? Bool ?? true }
    }

    private func probe(_ arguments: [String]) throws -> Probe { Probe(values: try ProbeChild.run(arguments)) }

    func run(_ results: inout Report) async throws {
        let music = directory.appendingPathComponent("music-\(files)")
        let library = directory.appendingPathComponent("library-\(files)")
        let written = directory.appendingPathComponent("written-\(files)")
        if !FileManager.default.fileExists(atPath: written.path) {
            try? FileManager.default.removeItem(at: music)
            try? FileManager.default.removeItem(at: library)
            log("writing \(files) sample files (0.3 s, MP3, Ogg Opus and FLAC, no pictures) under \(music.path)")
            let started = Date()
            _ = try SampleFiles.write(tracks: files, to: music, seconds: 0.3, formats: ["mp3", "opus", "flac"], pictures: false)
            log("written in \(Int(Date().timeIntervalSince(started))) s")
            _ = FileManager.default.createFile(atPath: written.path, contents: nil)
        }
        // Files added by an earlier run go, and their tracks with them, so that every run starts
        // from the same files (without importing half a million files again).
        let addedRoot = music.appendingPathComponent("Added")
        if FileManager.default.fileExists(atPath: addedRoot.path) {
            try FileManager.default.removeItem(at: addedRoot)
            if FileManager.default.fileExists(atPath: library.appendingPathComponent("library.sqlite").path) {
                log("removing the last run's added tracks (shelf scan --prune)")
                let pruned = Library(directory: library)
                _ = try await pruned.scanMissing(prune: true)
                try await pruned.waitForMirror()
            }
        }
        var lines: [[any ReportValue]] = []
        var firstImportRatio: Double?
        func line(_ name: String, _ p: Probe, cold: Bool?, handled: Int) {
            lines.append([
                name, cold.map { $0 ? "cold" : "warm" } ?? "–", handled, p.seconds, Double(handled) / p.seconds, p.readMB, p.cpuSeconds, p.peakMiB,
                p.int("commits"), p.tokenMoved ? "yes" : "no",
            ])
        }
        if !FileManager.default.fileExists(atPath: library.appendingPathComponent("library.sqlite").path) {
            log("first import of \(files) files")
            let first = try probe(["import-probe", music.path, library.path])
            line("first import", first, cold: nil, handled: first.int("files"))
            let tenths = first.values["tenths"] as? [Double] ?? []
            results.table(
                "First import: files/s through each tenth (flat when the import is linear in the library's size)", key: "firstImportTenths",
                [.init("tenth", "tenth"), .init("files/s", "filesPerSecond")], tenths.enumerated().map { [$0.offset + 1, $0.element] })
            firstImportRatio = tenths.count > 1 ? tenths.last! / tenths.first! : nil
        }
        let canDrop = !warmOnly && ProcessUse.dropPageCache()
        if !canDrop && !warmOnly { log("cannot drop the page cache (not root): the cold runs are warm") }
        var figures: [String: Probe] = [:]
        for cold in [true, false] {
            if cold && canDrop { _ = ProcessUse.dropPageCache() }
            log("unchanged import of the root, \(cold ? "cold" : "warm")")
            let rescan = try probe(["import-probe", music.path, library.path])
            line("unchanged rescan: import of the root", rescan, cold: cold && canDrop, handled: rescan.int("files"))
            if cold && canDrop { _ = ProcessUse.dropPageCache() }
            log("shelf scan (missing files), \(cold ? "cold" : "warm")")
            let scan = try probe(["scan-probe", library.path])
            line("unchanged rescan: shelf scan (missing files)", scan, cold: cold && canDrop, handled: scan.int("tracks"))
            figures["import-\(cold)"] = rescan
            figures["scan-\(cold)"] = scan
        }
        // New files, each in a new folder of its own (as a tagger that files albums one by one leaves them).
        log("writing \(added) new files in \(added) new folders")
        let staging = directory.appendingPathComponent("staging")
        try? FileManager.default.removeItem(at: staging)
        _ = try SampleFiles.write(tracks: added, to: staging, seconds: 0.3, formats: ["mp3", "opus"], pictures: false, seed: 77, firstIndex: files)
        var placed = 0
        let walker = FileManager.default.enumerator(at: staging, includingPropertiesForKeys: [.isRegularFileKey])
        while let file = walker?.nextObject() as? URL {
            guard (try? file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true else { continue }
            let folder = addedRoot.appendingPathComponent(String(format: "Folder %05d", placed))
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try FileManager.default.moveItem(at: file, to: folder.appendingPathComponent(file.lastPathComponent))
            placed += 1
        }
        try? FileManager.default.removeItem(at: staging)
        if canDrop { _ = ProcessUse.dropPageCache() }
        log("import of the root with \(placed) new files, cold")
        let grown = try probe(["import-probe", music.path, library.path])
        line("\(placed) new files in \(placed) new folders: import of the root", grown, cold: canDrop, handled: grown.int("files"))
        results.table(
            "Rescans of \(files) files on disk (fresh process each; cold: page cache dropped first)", key: "runs",
            [
                .init("run", "run"), .init("cache", "cache"), .init("files", "files"), .init("seconds", "seconds", decimals: 2),
                .init("files/s", "filesPerSecond"), .init("MB read", "readMB", decimals: 1), .init("CPU s", "cpuSeconds", decimals: 2),
                .init("peak RSS MiB", "peakMiB", decimals: 1), .init("commits", "commits"), .init("token moved", "tokenMoved"),
            ], lines)
        let importCold = figures["import-true"]?.seconds ?? .nan
        let importWarm = figures["import-false"]?.seconds ?? .nan
        let scanCold = figures["scan-true"]?.seconds ?? .nan
        let scanWarm = figures["scan-false"]?.seconds ?? .nan
        let unchangedCommitted = [true, false].contains { figures["import-\($0)"]?.tokenMoved ?? true }
        results.table(
            "targets", key: "targets",
            [.init("target", "target"), .init("measured", "measured", decimals: 2), .init("limit", "limit", decimals: 1), .init("met", "met")],
            [
                [
                    "unchanged rescan s, \(canDrop ? "cold" : "warm: the cache could not be dropped") (import of the root + shelf scan)", importCold + scanCold,
                    60.0, importCold + scanCold <= 60,
                ],
                ["unchanged rescan s, warm (import of the root + shelf scan)", importWarm + scanWarm, 15.0, importWarm + scanWarm <= 15],
                ["unchanged rescans commit nothing (1 = yes)", unchangedCommitted ? 0.0 : 1.0, 1.0, !unchangedCommitted],
                [
                    "\(placed) new files in new folders found and imported s, \(canDrop ? "cold" : "warm")", grown.seconds, 70.0,
                    grown.seconds <= 70 && grown.int("added") == placed,
                ],
            ] + (firstImportRatio.map { [["first import linear: last tenth's files/s ÷ first tenth's (≥)", $0, 0.8, $0 >= 0.8]] } ?? []))
        results.sentence("The grown rescan added \(figure: "addedFound", grown.int("added")) of \(figure: "addedWritten", placed) new files.")
    }

    /// `scan-probe LIBRARY`: `shelf scan` (the missing-file check) in this process, as JSON.
    static func scanProbe(_ words: [String]) async throws {
        guard words.count == 1 else { throw BenchUsageError(message: "scan-probe LIBRARY") }
        let readBefore = ProcessUse.readBytes()
        let cpuBefore = ProcessUse.cpuSeconds()
        let started = DispatchTime.now().uptimeNanoseconds
        let library = Library(directory: URL(fileURLWithPath: words[0]))
        try await library.open()
        let before = try await library.currentToken()
        let report = try await library.scanMissing()
        let after = try await library.currentToken()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        let tracks = try await library.info().trackCount
        var values: [String: Any] = [
            "seconds": seconds, "tracks": tracks, "missing": report.missing.count,
            "newlyMissing": report.newlyMissing, "tokenMoved": before != after, "peak": ArtworkProbe.memory().peak,
            "cpuSeconds": ProcessUse.cpuSeconds() - cpuBefore,
        ]
        if let readBefore, let readAfter = ProcessUse.readBytes() { values["readBytes"] = readAfter - readBefore }
        print(String(decoding: try JSONSerialization.data(withJSONObject: values, options: [.sortedKeys]), as: UTF8.self))
    }
}
