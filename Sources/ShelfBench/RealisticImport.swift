import Foundation
import Shelf
import ShelfTestSupport

/// `shelf-bench import --realistic`: real files of real sizes (`scripts/realistic_files.py`: four-
/// minute MP3 320k, FLAC 16/44.1 and 24/96, Opus and AAC, pictures of 500 KB–2 MB embedded in a
/// third, `cover.jpg` and `.lrc` beside some), imported with a cold page cache and a warm one by
/// Shelf and, in the same run on the same files, by supysonic, beets and musickit
/// (`scripts/import_peers.py`): files/s, MB read from the disk and CPU seconds per file, peak RSS.
struct RealisticImport {
    let files: Int
    let directory: URL
    /// A comma-separated list for import_peers.py; nil: all of them; "none": Shelf alone.
    let peers: String?

    private func log(_ text: String) { FileHandle.standardError.write(Data("import: \(text)\n".utf8)) }

    /// One import of the set: by whom, cold or warm, and what it cost.
    struct Run {
        let who: String
        let cache: String
        let files: Int
        let imported: Int?
        let seconds: Double
        let readBytes: Int?
        let cpuSeconds: Double?
        let peakBytes: Int?
        var filesPerSecond: Double { Double(files) / seconds }
        var row: [any ReportValue] {
            [
                who, cache, files, imported, seconds, filesPerSecond, readBytes.map { Double($0) / 1e6 / Double(files) },
                cpuSeconds.map { $0 / Double(files) * 1000 }, peakBytes.map { Double($0) / 1_048_576 },
            ]
        }
    }

    func run(_ results: inout Report) throws {
        let repository = WebBench.repository
        let python = repository.appendingPathComponent(".venv/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw BenchUsageError(message: "needs the project's .venv with mutagen (make subsonic-client)")
        }
        let music = directory.appendingPathComponent("music")
        log("the file set (written once, then reused): \(files) files under \(music.path)")
        let made = try ChildProcess.run(
            python, [repository.appendingPathComponent("scripts/realistic_files.py").path, "--dir", music.path, "--files", String(files)])
        guard made.status == 0, let summaryLine = made.stdout.split(separator: "\n").last,
            let summary = try JSONSerialization.jsonObject(with: Data(summaryLine.utf8)) as? [String: Any]
        else { throw BenchUsageError(message: "realistic_files.py failed: \(made.stderr.suffix(3000))") }
        let bytes = summary["bytes"] as? Int ?? 0
        let pictured = summary["withPictures"] as? Int ?? 0
        results.sentence(
            "The set: \(figure: "files", files) files, \(figure: "gigabytes", Double(bytes) / 1e9, decimals: 2) GB, \(figure: "withPictures", pictured) with embedded pictures of 500 KB–2 MB."
        )
        let canDrop = ProcessUse.dropPageCache()
        if !canDrop { log("cannot drop the page cache (not root): the cold runs are warm") }
        var runs: [Run] = []
        func shelfImport(_ paths: [String], cold: Bool, label: String) throws -> Run {
            let library = directory.appendingPathComponent("shelf-library")
            try? FileManager.default.removeItem(at: library)
            if cold { _ = ProcessUse.dropPageCache() }
            log("Shelf: \(label), \(cold ? "cold" : "warm")")
            // The whole child's time, start-up included, as the peers' figures are.
            let started = DispatchTime.now().uptimeNanoseconds
            let values = try ProbeChild.run(["import-probe"] + paths + [library.path])
            let wall = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            let handled = values["files"] as? Int ?? 0
            return Run(
                who: label, cache: cold && canDrop ? "cold" : "warm", files: handled, imported: values["added"] as? Int,
                seconds: wall, readBytes: values["readBytes"] as? Int,
                cpuSeconds: values["cpuSeconds"] as? Double, peakBytes: values["peak"] as? Int)
        }
        for cold in [true, false] { runs.append(try shelfImport([music.path], cold: cold, label: "Shelf")) }
        // The albums without embedded pictures alone: what the audio identity and the tags cost to read.
        let plainFolders = (summary["plainAlbums"] as? [String]) ?? []
        var plain: Run?
        if !plainFolders.isEmpty {
            plain = try shelfImport(plainFolders.map { music.appendingPathComponent($0).path }, cold: true, label: "Shelf, albums without embedded pictures")
            runs.append(plain!)
        }
        // The peers, in the same run on the same files.
        var peerRuns: [Run] = []
        if peers != "none" {
            log("peers: \(peers ?? "supysonic, beets, musickit") (scripts/import_peers.py)")
            var arguments = [
                repository.appendingPathComponent("scripts/import_peers.py").path, "--music", music.path, "--work",
                directory.appendingPathComponent("peers").path,
            ]
            if let peers { arguments += ["--peers", peers] }
            let result = try ChildProcess.run(URL(fileURLWithPath: "/usr/bin/python3"), arguments)
            for line in result.stdout.split(separator: "\n") {
                guard let values = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], let who = values["peer"] as? String
                else { continue }
                if let error = values["error"] as? String {
                    results.sentence("\(who) (\(values["run"] as? String ?? "")): not measured: \(error)")
                    continue
                }
                let run = values["run"] as? String ?? "warm"
                let dropped = values["cold"] as? Bool ?? false
                let version = values["version"] as? String ?? ""
                peerRuns.append(
                    Run(
                        who: "\(who) \(version)", cache: run == "cold" && !dropped ? "cold (not dropped)" : run, files: values["files"] as? Int ?? 0,
                        imported: values["imported"] as? Int,
                        seconds: values["seconds"] as? Double ?? .nan, readBytes: values["readBytes"] as? Int,
                        cpuSeconds: values["cpuSeconds"] as? Double, peakBytes: values["peakRSSBytes"] as? Int))
            }
            if result.status != 0 { log("import_peers.py: \(result.stderr.suffix(2000))") }
        }
        results.table(
            "Importing \(files) real files (a fresh library each run; cold: page cache dropped first)", key: "runs",
            [
                .init("who", "who"), .init("cache", "cache"), .init("files", "files"), .init("imported", "imported"),
                .init("seconds", "seconds", decimals: 1), .init("files/s", "filesPerSecond", decimals: 1),
                .init("MB read per file", "readMBPerFile", decimals: 2), .init("CPU ms per file", "cpuMsPerFile", decimals: 1),
                .init("peak RSS MiB", "peakMiB", decimals: 1),
            ], (runs + peerRuns).map(\.row))
        var targets: [[any ReportValue]] = []
        for cache in ["cold", "warm"] {
            guard let shelf = runs.first(where: { $0.who == "Shelf" && $0.cache == cache }) else { continue }
            for peer in peerRuns where peer.cache == cache {
                let ratio = shelf.filesPerSecond / peer.filesPerSecond
                targets.append(["Shelf ÷ \(peer.who) files/s, \(cache)", ratio, 10.0, ratio >= 10])
            }
        }
        if let plain, let read = plain.readBytes {
            let perFile = Double(read) / 1e6 / Double(max(plain.files, 1))
            targets.append(["MB read per file without embedded pictures, cold", perFile, 1.0, perFile <= 1])
        }
        results.table(
            "targets", key: "targets",
            [.init("target", "target"), .init("measured", "measured", decimals: 2), .init("limit", "limit", decimals: 1), .init("met", "met")],
            targets)
    }
}
