import Foundation
import Shelf
import ShelfCore
import ShelfDatabase
import ShelfTestSupport

/// `shelf-bench sonic`: issue 42's table. Analysis with its decode of a 4-minute MP3 (256 kbit/s)
/// and FLAC (16-bit/44.1 kHz) made once by ffmpeg, in CPU seconds, beside librosa computing the
/// same descriptors and essentia's MusicExtractor on the same files (`.venv/audio`); then a
/// library of `--tracks` generated tracks given feature vectors of 64 clusters, where
/// getSonicSimilarTracks and findSonicPath are timed through `shelf serve` (a child) and in
/// process, beside the index's memory and the bytes stored per track.
struct SonicBench {
    let directory: URL
    let tracks: Int
    let runs: Int
    let peers: Bool
    let similarityOnly: Bool

    init(_ words: [String]) throws {
        let flags = try Flags(words, known: ["--library", "--tracks", "--runs"], switches: ["--no-peers", "--similarity-only"])
        guard let dir = flags.string("--library") else { throw BenchUsageError(message: "sonic needs --library DIR") }
        directory = URL(fileURLWithPath: dir)
        tracks = try flags.int("--tracks", default: 500_500)
        guard tracks >= 1_000 else { throw BenchUsageError(message: "--tracks expects at least 1000") }
        runs = max(3, try flags.int("--runs", default: 5))
        peers = !flags.bool("--no-peers")
        similarityOnly = flags.bool("--similarity-only")
    }

    private func log(_ text: String) { FileHandle.standardError.write(Data("sonic: \(text)\n".utf8)) }

    private static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// The test files, made once: a drum pattern, a bass line and chords, 4 minutes.
    private func files() throws -> [(name: String, url: URL)] {
        let folder = directory.appendingPathComponent("sonic-files")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let music =
            "aevalsrc=exprs=0.6*sin(2*PI*55*t)*exp(-mod(t\\,0.46875)*18)+0.2*(random(0)*2-1)*exp(-mod(t+0.234\\,0.46875)*60)"
            + "+0.25*sin(2*PI*110*t)+0.15*sin(2*PI*261.63*t)*exp(-mod(t\\,1.875)*1.5)+0.12*sin(2*PI*329.63*t)*exp(-mod(t\\,1.875)*1.5)"
            + ":s=44100:c=stereo:d="
        var out: [(String, URL)] = []
        for (name, file, codec, seconds) in [
            ("4-minute MP3, 256 kbit/s", "sonic-4min.mp3", ["-c:a", "libmp3lame", "-b:a", "256k"], 240),
            ("4-minute FLAC, 16-bit/44.1 kHz", "sonic-4min.flac", ["-c:a", "flac", "-sample_fmt", "s16"], 240),
            ("warm-up, 10 s FLAC", "sonic-warmup.flac", ["-c:a", "flac"], 10),
        ] {
            let url = folder.appendingPathComponent(file)
            if !FileManager.default.fileExists(atPath: url.path) {
                log("writing \(file)")
                let made = try ChildProcess.run(
                    URL(fileURLWithPath: "/usr/bin/ffmpeg"), ["-v", "error", "-y", "-f", "lavfi", "-i", music + String(seconds)] + codec + [url.path])
                guard made.status == 0 else { throw BenchUsageError(message: "ffmpeg: \(made.stderr)") }
            }
            out.append((name, url))
        }
        return out
    }

    func run(_ report: inout Report) async throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if similarityOnly { return try await similarity(&report) }
        let inputs = try files()
        let timed = Array(inputs.prefix(2))

        // Shelf in this process (the worker runs the same code), CPU seconds per file.
        var analysis: [[any ReportValue]] = []
        var shelfCPU: [String: Double] = [:]
        for (name, url) in timed {
            var cpu: [Double] = []
            var audio = 0.0
            for _ in 0..<runs {
                let before = Self.cpuSeconds()
                let outcome = try SonicAnalyzer.analyze(path: url.path)
                cpu.append(Self.cpuSeconds() - before)
                audio = outcome.seconds
                guard outcome.status == .ok else { throw BenchUsageError(message: "\(url.path): \(outcome.reason ?? "")") }
            }
            let median = cpu.sorted()[cpu.count / 2]
            shelfCPU[url.path] = median
            analysis.append(["Shelf", name, median, audio / median, "≥ 200× (≤ 1.2 s)", audio / median >= 200 ? "yes" : "no"])
        }
        var ratios: [[any ReportValue]] = []
        if peers {
            let python = WebBench.repository.appendingPathComponent(".venv/audio/bin/python")
            if FileManager.default.isExecutableFile(atPath: python.path) {
                log("librosa and essentia on the same files")
                let script = WebBench.repository.appendingPathComponent("scripts/sonic_peers.py")
                let result = try ChildProcess.run(python, [script.path, inputs[2].url.path] + timed.map(\.url.path))
                for line in result.stdout.split(separator: "\n") {
                    guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], let tool = object["tool"] as? String
                    else { continue }
                    guard let file = object["file"] as? String, let cpu = object["cpuSeconds"] as? Double, let audio = object["audioSeconds"] as? Double,
                        let name = timed.first(where: { $0.url.path == file })?.name, let ours = shelfCPU[file]
                    else {
                        log("\(tool): \(object["error"] ?? "no figures")")
                        continue
                    }
                    let target = tool == "librosa" ? 3.0 : 2.0
                    analysis.append([tool, name, cpu, audio / cpu, "", ""])
                    ratios.append(["Shelf ÷ \(tool)", name, cpu / ours, "≥ \(Int(target))×", cpu / ours >= target ? "yes" : "no"])
                }
            } else {
                log("no .venv/audio (make test makes it): librosa and essentia are left out")
            }
        }
        report.table(
            "Analysis including decode, CPU seconds per file (median of \(runs) for Shelf)", key: "analysis",
            [
                .init("tool", "tool"), .init("file", "file"), .init("CPU s", "cpuSeconds", decimals: 3),
                .init("× real time per CPU s", "realTimePerCPUSecond", decimals: 0), .init("target", "target"), .init("met", "met"),
            ], analysis)
        if !ratios.isEmpty {
            report.table(
                "Shelf against the peers, per CPU second", key: "peers",
                [
                    .init("comparison", "comparison"), .init("file", "file"), .init("ratio", "ratio", decimals: 1), .init("target", "target"),
                    .init("met", "met"),
                ],
                ratios)
        }
        if let perTrack = shelfCPU.values.max() {
            for cores in [2, 8] {
                let hours = 500_000 * perTrack / Double(cores) / 3_600
                let label = String(cores)
                let each = String(format: "%.2f", perTrack)
                report.sentence(
                    "500,000 four-minute tracks on \(label) cores: about \(figure: "hoursFor500kOn\(label)Cores", hours, decimals: 1) h of analysis (\(each) CPU s a track)"
                )
            }
        }
        try await similarity(&report)
    }

    /// Feature vectors for every generated track: 64 clusters of musically plausible centres,
    /// each track its cluster's centre with noise, written straight into `sonic`.
    private func seed(_ library: Library) async throws {
        let store = directory.appendingPathComponent("library").appendingPathComponent("library.sqlite")
        let db = try Connection(path: store.path)
        if try db.scalar(Int.self, "SELECT count(*) FROM sonic") ?? 0 > 0 { return }
        log("writing feature vectors for \(tracks) tracks")
        var random = SeededRandom(seed: 42)
        let centres: [[Float]] = (0..<64).map { _ in
            var v = [Float](repeating: 0, count: SonicFeatures.count)
            v[0] = Float(random.double(70..<170))
            v[1] = Float(random.double(0.3..<0.95))
            v[2] = Float(random.double(1..<6))
            v[3] = Float(random.double(0.02..<0.2))
            v[5] = Float(random.double(800..<4_000))
            v[7] = Float(random.double(1_000..<3_500))
            v[9] = Float(random.double(2_000..<9_000))
            v[11] = Float(random.double(0.001..<0.2))
            v[13] = Float(random.double(-35 ..< -8))
            v[14] = Float(random.double(1..<8))
            v[15] = Float(random.double(2..<15))
            for k in 16..<42 { v[k] = Float(random.double(-30..<30)) }
            for k in 42..<54 { v[k] = Float(random.double(0.1..<1)) }
            v[54] = Float(Int(random.double(0..<12)))
            v[55] = random.double(0..<1) < 0.5 ? 0 : 1
            v[56] = Float(random.double(0.3..<0.9))
            return v
        }
        // The generator writes no CUE tracks: a track's key is its audio hash or its path (its
        // duplicates share a hash, and so their features).
        let keys = try db.query("SELECT coalesce(audio_hash, 'path:' || path) FROM track ORDER BY id") { try $0.string(0) }
        try db.execute("DELETE FROM sonic")
        for start in stride(from: 0, to: keys.count, by: 20_000) {
            try db.execute("BEGIN")
            let insert = try db.prepare("INSERT OR IGNORE INTO sonic (audio, version, status, seconds, features, analyzed) VALUES (?, ?, 'ok', 240, ?, 0)")
            for key in keys[start..<min(keys.count, start + 20_000)] {
                let centre = centres[Int(random.double(0..<64))]
                let values = centre.enumerated().map { k, x in k >= 54 ? x : x * Float(1 + random.double(-0.08..<0.08)) }
                guard let features = SonicFeatures(values: values) else { continue }
                try insert.bind([key, SonicFeatures.version, Data(features.blob)])
                _ = try insert.step()
                insert.reset()
            }
            try db.execute("COMMIT")
        }
    }

    private func similarity(_ report: inout Report) async throws {
        let libraryDirectory = directory.appendingPathComponent("library")
        try FileManager.default.createDirectory(at: libraryDirectory, withIntermediateDirectories: true)
        // Generated once without pictures (the similarity reads none) and reused.
        let library = Library(directory: libraryDirectory, configuration: .init(buildsMirrorInBackground: false))
        if try await library.info().trackCount == 0 {
            log("generating \(tracks) tracks")
            _ = try await DatasetGenerator(tracks: tracks, seed: 42).fill(library)
        }
        log("completing the read mirror")
        _ = try await library.completeMirror()
        let key = try await ServeBench.apiKey(library, libraryDirectory)
        try await seed(library)
        let ids = try await library.snapshot(LibraryQuery())
        var random = SeededRandom(seed: 7)
        func pick() -> TrackID { ids[Int(random.double(0..<Double(ids.count)))] }

        func residentMiB() -> Double {
            let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
            let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
            return Double(line.split(separator: " ").dropFirst().first ?? "0").map { $0 / 1024 } ?? 0
        }
        let rssBefore = residentMiB()
        let buildStart = DispatchTime.now().uptimeNanoseconds
        let size = try await library.similarityIndexSize()
        let buildSeconds = Double(DispatchTime.now().uptimeNanoseconds - buildStart) / 1e9
        let rssAfter = residentMiB()
        var engine: [Double] = []
        for _ in 0..<100 {
            let seed = pick()
            let start = DispatchTime.now().uptimeNanoseconds
            _ = try await library.similarTracks(to: seed, count: 10)
            engine.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
        }
        var enginePaths: [Double] = []
        for _ in 0..<20 {
            let (a, b) = (pick(), pick())
            let start = DispatchTime.now().uptimeNanoseconds
            _ = try await library.sonicPath(from: a, to: b, count: 25)
            enginePaths.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
        }
        let bytes = try await library.sonicStoredBytesPerTrack()

        log("through shelf serve")
        let server = try ServerProcess(shelf: try ServeBench.shelfBinary(), library: libraryDirectory)
        defer { _ = server.stop() }
        let client = try SubsonicBench.Client(port: Int(server.port), key: key)
        _ = try client.call("getSonicSimilarTracks", "id=tr-\(pick().rawValue)&count=10")  // builds the server's index
        var served: [Double] = []
        for _ in 0..<100 {
            let (ms, response) = try client.call("getSonicSimilarTracks", "id=tr-\(pick().rawValue)&count=10")
            guard (response["sonicMatch"] as? [Any])?.count == 10 else { throw BenchUsageError(message: "getSonicSimilarTracks gave no 10 matches") }
            served.append(ms)
        }
        var paths: [Double] = []
        for _ in 0..<20 {
            let (ms, _) = try client.call("findSonicPath", "startSongId=tr-\(pick().rawValue)&endSongId=tr-\(pick().rawValue)&count=25")
            paths.append(ms)
        }
        func median(_ v: [Double]) -> Double { v.sorted()[v.count / 2] }
        let rows: [[any ReportValue]] = [
            ["getSonicSimilarTracks count=10, median (server)", median(served), "≤ 10 ms", median(served) <= 10 ? "yes" : "no"],
            ["getSonicSimilarTracks count=10, max (server)", served.max() ?? 0, "≤ 30 ms", (served.max() ?? 0) <= 30 ? "yes" : "no"],
            ["similarTracks count=10, median (engine)", median(engine), "", ""],
            ["findSonicPath count=25, median (server)", median(paths), "≤ 50 ms", median(paths) <= 50 ? "yes" : "no"],
            ["findSonicPath count=25, max (server)", paths.max() ?? 0, "", ""],
            ["sonicPath count=25, median (engine)", median(enginePaths), "", ""],
        ]
        report.table(
            "Similarity at \(size.tracks) analysed tracks (\(runs) runs of files above; 100 seeds, 20 paths here)", key: "similarity",
            [.init("measure", "measure"), .init("ms", "ms", decimals: 2), .init("target", "target"), .init("met", "met")], rows)
        report.table(
            "Memory and storage", key: "memory",
            [.init("measure", "measure"), .init("value", "value", decimals: 1), .init("target", "target"), .init("met", "met")],
            [
                ["similarity index, MiB", Double(size.bytes) / 1_048_576, "≤ 48 MiB", Double(size.bytes) / 1_048_576 <= 48 ? "yes" : "no"],
                [
                    "similarity index, bytes a track", Double(size.bytes) / Double(max(size.tracks, 1)), "≤ 100",
                    size.bytes / max(size.tracks, 1) <= 100 ? "yes" : "no",
                ],
                ["resident growth while building it, MiB", rssAfter - rssBefore, "", ""],
                ["index build, s", buildSeconds, "", ""],
                ["stored per track (row and key index), bytes", bytes, "≤ 512", bytes <= 512 ? "yes" : "no"],
            ])
    }
}
