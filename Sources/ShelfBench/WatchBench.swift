import Foundation
import Shelf
import ShelfCore
import ShelfTestSupport

/// `shelf-bench watch`: the folder watcher at the scale of a half-million-track library (about
/// 40,000 folders): the time to watch every folder and the memory it holds (resident bytes before
/// and after, in this process), then how long one new album takes from its copy to the library.
struct WatchBench {
    let folders: Int
    let directory: URL

    /// Reads `--dir DIR [--folders 40000]`.
    init(_ words: [String]) throws {
        let flags = try Flags(words, known: ["--dir", "--folders"])
        guard let path = flags.string("--dir") else { throw BenchUsageError(message: "--dir is required") }
        directory = URL(fileURLWithPath: path)
        folders = max(10, try flags.int("--folders", default: 40_000))
    }

    private func log(_ text: String) { FileHandle.standardError.write(Data("watch: \(text)\n".utf8)) }

    func run(_ results: inout Report) async throws {
        let music = directory.appendingPathComponent("music")
        // Artist/Album folders, 200 albums per artist, as a large library is laid out.
        let marker = directory.appendingPathComponent("folders-\(folders)")
        if !FileManager.default.fileExists(atPath: marker.path) {
            log("making \(folders) folders under \(music.path)")
            try? FileManager.default.removeItem(at: music)
            for index in 0..<folders {
                let artist = index / 200
                try FileManager.default.createDirectory(
                    at: music.appendingPathComponent("Artist \(artist)/Album \(index % 200) (Deluxe Remastered Edition)"),
                    withIntermediateDirectories: true)
            }
            _ = FileManager.default.createFile(atPath: marker.path, contents: nil)
        }
        let limit = (try? String(contentsOfFile: "/proc/sys/fs/inotify/max_user_watches", encoding: .utf8))
            .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        // A new library each run: the album copied in below would otherwise be a duplicate of the last run's.
        try? FileManager.default.removeItem(at: directory.appendingPathComponent("library"))
        let library = Library(directory: directory.appendingPathComponent("library"))
        try await library.rememberRoots([music])
        let before = ArtworkProbe.memory().rss
        let started = Date()
        let changes = Locked(0)
        let watcher = LibraryWatcher(library: library, roots: [music], log: { _ in }) { batch in
            if let imported = batch.imported { changes.withLock { $0 += imported.added } }
        }
        let coverage = try watcher.start()
        let startSeconds = Date().timeIntervalSince(started)
        let after = ArtworkProbe.memory().rss
        // One album copied in: from the copy's end to its tracks in the library.
        let staging = directory.appendingPathComponent("staging")
        try? FileManager.default.removeItem(at: staging)
        let written = try ChildProcess.run(
            ChildProcess.productsDirectory().appendingPathComponent("shelf-bench"),
            ["sample-files", "--tracks", "12", "--dir", staging.path, "--seconds", "2"])
        guard written.status == 0 else { throw BenchUsageError(message: "sample-files: \(written.stderr)") }
        let target = music.appendingPathComponent("New Artist \(UUID().uuidString.prefix(8))")
        let copied = Date()
        try FileManager.default.copyItem(at: staging, to: target)
        while changes.withLock({ $0 }) < 12, Date().timeIntervalSince(copied) < 60 { try await Task.sleep(for: .milliseconds(20)) }
        let visible = Date().timeIntervalSince(copied)
        await watcher.stop()
        try? FileManager.default.removeItem(at: target)
        results.table(
            "The folder watcher (inotify) over a library's folders: time to watch them all, memory held, an album's copy to the library",
            key: "runs",
            [
                .init("folders", "folders"), .init("watched", "watchedFolders"), .init("unwatched", "unwatchedFolders"),
                .init("max_user_watches", "maxUserWatches"), .init("start s", "startSeconds", decimals: 2),
                .init("watcher MiB", "watcherMiB", decimals: 1), .init("album visible s", "albumVisibleSeconds", decimals: 2),
            ],
            [
                [
                    folders + (folders + 199) / 200 + 1, coverage.watchedFolders, coverage.unwatchedCount, limit ?? -1, startSeconds,
                    Double(after - before) / 1_048_576, visible,
                ]
            ])
        results.sentence(
            "Targets: 40,000 folders watched in at most \(figure: "targetWatcherMiB", 20) MiB; a change visible within \(figure: "targetVisibleSeconds", 5) s.")
    }
}

/// `shelf-bench loudness`: Shelf's loudness measurement (libebur128 on ffmpeg's decode) beside
/// `ffmpeg -af ebur128=peak=true` on the same files in one run: throughput as audio seconds per
/// wall second (real-time factor; both single-threaded, so per core) and their ratio.
struct LoudnessBench {
    let directory: URL
    let files: Int
    let seconds: Int

    /// Reads `--dir DIR [--files 8] [--seconds 300]`.
    init(_ words: [String]) throws {
        let flags = try Flags(words, known: ["--dir", "--files", "--seconds"])
        guard let path = flags.string("--dir") else { throw BenchUsageError(message: "--dir is required") }
        directory = URL(fileURLWithPath: path)
        files = max(1, try flags.int("--files", default: 8))
        seconds = max(5, try flags.int("--seconds", default: 300))
    }

    private func log(_ text: String) { FileHandle.standardError.write(Data("loudness: \(text)\n".utf8)) }

    func run(_ results: inout Report) async throws {
        let ffmpeg = try Library.findFFmpeg()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // Music-like FLACs: pink noise and tones at different levels, made once and reused.
        var paths: [URL] = []
        for index in 0..<files {
            let file = directory.appendingPathComponent("track-\(index)-\(seconds)s.flac")
            paths.append(file)
            guard !FileManager.default.fileExists(atPath: file.path) else { continue }
            log("making \(file.lastPathComponent)")
            let source =
                index % 2 == 0
                ? "anoisesrc=color=pink:duration=\(seconds):sample_rate=44100:amplitude=\(0.1 + 0.05 * Double(index))"
                : "sine=frequency=\(220 * (index + 1)):duration=\(seconds):sample_rate=44100"
            let made = try ChildProcess.run(
                URL(fileURLWithPath: ffmpeg), ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", source, "-ac", "2", file.path])
            guard made.status == 0 else { throw BenchUsageError(message: "ffmpeg: \(made.stderr)") }
        }
        let meter = LoudnessMeter(ffmpeg: ffmpeg)
        var ours: [Double] = []
        var theirs: [Double] = []
        var oursCPU: [Double] = []
        var theirsCPU: [Double] = []
        /// CPU seconds of this process and its finished children: ours decodes in an ffmpeg child
        /// while this process measures, so wall time alone would hide a second core.
        func cpu() -> Double {
            var own = rusage()
            var children = rusage()
            getrusage(RUSAGE_SELF.rawValue, &own)
            getrusage(RUSAGE_CHILDREN.rawValue, &children)
            func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
            return seconds(own.ru_utime) + seconds(own.ru_stime) + seconds(children.ru_utime) + seconds(children.ru_stime)
        }
        for _ in 0..<3 {
            let started = Date()
            let startedCPU = cpu()
            for path in paths { _ = try meter.measure(LoudnessInput(url: path)) }
            ours.append(Date().timeIntervalSince(started))
            oursCPU.append(cpu() - startedCPU)
            let again = Date()
            let againCPU = cpu()
            for path in paths {
                let run = try ChildProcess.run(
                    URL(fileURLWithPath: ffmpeg), ["-nostdin", "-v", "info", "-i", path.path, "-af", "ebur128=peak=true", "-f", "null", "-"])
                guard run.status == 0 else { throw BenchUsageError(message: "ffmpeg: \(run.stderr)") }
            }
            theirs.append(Date().timeIntervalSince(again))
            theirsCPU.append(cpu() - againCPU)
        }
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        let audio = Double(files * seconds)
        let oursRate = audio / median(ours)
        let theirsRate = audio / median(theirs)
        results.table(
            "EBU R128 integrated loudness and true peak of the same FLACs, one file at a time (median of 3 runs; CPU s counts ffmpeg children too)",
            key: "runs",
            [
                .init("measured by", "tool"), .init("files", "files"), .init("audio s", "audioSeconds"), .init("wall s", "wallSeconds", decimals: 2),
                .init("× real time", "realTimeFactor", decimals: 0), .init("CPU s", "cpuSeconds", decimals: 2),
                .init("× real time per CPU s", "realTimeFactorPerCore", decimals: 0),
            ],
            [
                ["shelf (libebur128)", files, audio, median(ours), oursRate, median(oursCPU), audio / median(oursCPU)],
                ["ffmpeg -af ebur128=peak=true", files, audio, median(theirs), theirsRate, median(theirsCPU), audio / median(theirsCPU)],
            ])
        results.sentence(
            "Shelf measures at \(figure: "throughputRatio", oursRate / theirsRate, decimals: 2)× ffmpeg's throughput (target ≥ 1×), and \(figure: "cpuRatio", median(theirsCPU) / median(oursCPU), decimals: 2)× its work per CPU second."
        )
    }
}
