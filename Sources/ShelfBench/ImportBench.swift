import Foundation
import Shelf
import ShelfCore
import ShelfTestSupport

/// `shelf-bench import`: files per second of a first import and of an unchanged rescan, each in a
/// fresh process with its peak RSS, beside Python's mutagen reading the same files' tags.
struct ImportBench {
    let files: Int
    let directory: URL
    /// `--realistic`: real files of real sizes (see `RealisticImport`) instead of the sample files.
    let realistic: Bool
    let peers: String?

    init(_ words: [String]) throws {
        let flags = try Flags(words, known: ["--files", "--dir", "--peers"], switches: ["--realistic"])
        realistic = flags.bool("--realistic")
        files = try flags.int("--files", default: realistic ? 2_000 : 10_000)
        guard let path = flags.string("--dir") else { throw BenchUsageError(message: "--dir is required") }
        directory = URL(fileURLWithPath: path)
        peers = flags.string("--peers")
    }

    private func log(_ text: String) { FileHandle.standardError.write(Data("\(text)\n".utf8)) }

    struct Line {
        let files: Int
        /// "plain" or "tagged" sample files (mutagen's line: the tagged ones).
        let catalogue: String
        let run: String
        let seconds: Double
        let filesPerSecond: Double
        let peakRSSBytes: Int?
    }

    func run(_ results: inout Report) async throws {
        if realistic { return try RealisticImport(files: files, directory: directory, peers: peers).run(&results) }
        var lines: [Line] = []
        // The plain sample files and the tagged ones (as Picard leaves a library: several
        // artists, IDs, gains, cover.jpg and .lrc files beside the audio), side by side.
        var music = directory.appendingPathComponent("music")
        for tagged in [false, true] {
            music = directory.appendingPathComponent(tagged ? "music-tagged" : "music")
            let library = directory.appendingPathComponent(tagged ? "library-tagged" : "library")
            if !FileManager.default.fileExists(atPath: music.path) {
                log("writing \(files) \(tagged ? "tagged " : "")sample files")
                _ = try SampleFiles.write(tracks: files, to: music, seconds: 0.1, tagged: tagged)
            }
            try? FileManager.default.removeItem(at: library)
            for run in ["first import", "unchanged rescan"] {
                let values = try ProbeChild.run(["import-probe", music.path, library.path])
                guard let seconds = values["seconds"] as? Double, let handled = values["files"] as? Int
                else { throw BenchUsageError(message: "import probe answered without seconds or files: \(values)") }
                lines.append(
                    Line(
                        files: handled, catalogue: tagged ? "tagged" : "plain", run: run, seconds: seconds,
                        filesPerSecond: Double(handled) / seconds, peakRSSBytes: values["peak"] as? Int))
            }
        }
        // mutagen: bare tag parsing of the same files, the reference reader.
        let script = """
            import os, sys, time
            try:
                import mutagen
            except ImportError:
                print("absent"); sys.exit(0)
            paths = [os.path.join(d, f) for d, _, fs in os.walk(sys.argv[1]) for f in fs]
            start = time.perf_counter()
            for p in paths:
                f = mutagen.File(p)
                if f is not None and f.tags is not None:
                    _ = list(f.tags.keys())
            print(len(paths), time.perf_counter() - start)
            """
        let mutagen = try ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, music.path])
        let parts = mutagen.stdout.split(whereSeparator: \.isWhitespace)
        if parts.count == 2, let count = Int(parts[0]), let seconds = Double(parts[1]) {
            lines.append(
                Line(
                    files: count, catalogue: "tagged", run: "mutagen (tags only)", seconds: seconds, filesPerSecond: Double(count) / seconds, peakRSSBytes: nil)
            )
        } else {
            log("mutagen skipped: not installed (pip install mutagen)")
        }
        if let plain = lines.first(where: { $0.catalogue == "plain" && $0.run == "first import" }),
            let tagged = lines.first(where: { $0.catalogue == "tagged" && $0.run == "first import" })
        {
            results.sentence(
                "tagged files import at \(figure: "taggedOverPlain", tagged.filesPerSecond / plain.filesPerSecond, decimals: 2)× the plain files' rate")
        }
        results.table(
            key: "runs",
            [
                .init("files", "files"), .init("catalogue", "catalogue"), .init("run", "run"), .init("seconds", "seconds", decimals: 2),
                .init("files/s", "filesPerSecond"), .init("peak RSS MiB", "peakMiB", decimals: 1),
            ], lines.map { [$0.files, $0.catalogue, $0.run, $0.seconds, $0.filesPerSecond, $0.peakRSSBytes.map { Double($0) / 1_048_576 }] })
    }

    /// One import in this process: prints files handled, seconds, peak RSS, bytes read from the
    /// disk, CPU seconds, commits and whether the change token moved, as JSON.
    static func probe(_ words: [String]) async throws {
        guard words.count >= 2, let last = words.last else { throw BenchUsageError(message: "import-probe MUSIC... LIBRARY") }
        let readBefore = ProcessUse.readBytes()
        let cpuBefore = ProcessUse.cpuSeconds()
        let started = DispatchTime.now().uptimeNanoseconds
        let library = Library(directory: URL(fileURLWithPath: last))
        try await library.open()
        let before = try await library.currentToken()
        // Files per second through each tenth of the import: flat when the import is linear in the
        // library's size, falling when each chunk costs more than the last.
        let marks = Locked<[(done: Int, at: UInt64)]>([(0, DispatchTime.now().uptimeNanoseconds)])
        let report = try await library.importFiles(at: words.dropLast().map { URL(fileURLWithPath: $0) }) { progress in
            marks.withLock { marks in
                let tenth = max(1, progress.total / 10)
                if progress.done / tenth > marks.last!.done / tenth || progress.done == progress.total {
                    marks.append((progress.done, DispatchTime.now().uptimeNanoseconds))
                }
            }
        }
        let tenths = marks.withLock { marks in
            zip(marks, marks.dropFirst()).map { Double($1.done - $0.done) / (Double($1.at - $0.at) / 1e9) }
        }
        let after = try await library.currentToken()
        let handled = report.added + report.updated + report.unchanged + report.moved + report.duplicates.count + report.failed.count
        let peak = ArtworkProbe.memory().peak
        var values: [String: Any] = [
            "files": handled, "seconds": report.seconds, "peak": peak, "added": report.added, "updated": report.updated,
            "unchanged": report.unchanged, "failed": report.failed.count, "duplicates": report.duplicates.count, "commits": report.commits,
            "tokenMoved": before != after, "cpuSeconds": ProcessUse.cpuSeconds() - cpuBefore, "tenths": tenths,
            // With opening the library: what the command costs, not only its import.
            "wallSeconds": Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9,
        ]
        if let readBefore, let readAfter = ProcessUse.readBytes() { values["readBytes"] = readAfter - readBefore }
        let json = try JSONSerialization.data(withJSONObject: values, options: [.sortedKeys])
        print(String(decoding: json, as: UTF8.self))
    }
}
