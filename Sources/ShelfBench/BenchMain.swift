import CShelfBuild
import Foundation
import Shelf
import ShelfTestSupport

/// `shelf-bench`: the dataset generator and the benchmark tables. Timings are only meaningful in
/// release builds, so a debug build says so loudly on every run.
@main
struct BenchMain {
    static let usage = """
        usage: shelf-bench COMMAND … [--json]  |  shelf-bench --version
            Every command prints Markdown tables, or with --json one JSON document on stdout (its figures under
            camelCase keys with their units, plus "build" and "machine"); progress goes to stderr.
        usage: shelf-bench generate --tracks N [--seed S] --library DIR [--chunk N] [--artwork-px PX [--artwork-per-track] [--artwork-flat]]
            Fill a new library with a deterministic catalogue through the batch API; print the time and bytes per track.
            --artwork-px gives each album (or track) a PX×PX JPEG of noise (or a flat gradient).
        usage: shelf-bench history [--tracks N] [--bulk-updates N] [--tail N] [--small-tracks N] [--library DIR] [--small-library DIR]
            Time changes(since:) over the last 100 transactions and changeSummary over the last --tail (10,000),
            on a 500,500-track library with a log of over 1,000,000 entries beside a 1,000-track one; print the ratios.
            Given directories are filled once and reused by later runs.
        usage: shelf-bench artwork --library DIR [--tracks 3000]
            Seed 000's tables, each measurement in a fresh process: listing a legacy store against its migrated copy
            (RSS, time), the loader over 600×600 JPEGs at 60 and 600 px (cache, RSS), thumbnails per second
            with DCT scaling, without, and Pillow's draft mode.
        usage: shelf-bench import [--files 10000] --dir DIR
            Files per second of a first import and an unchanged rescan (fresh processes, peak RSS), beside mutagen.
        usage: shelf-bench import --realistic [--files 2000] --dir DIR [--peers supysonic,beets,musickit|none]
            Real files of real sizes (scripts/realistic_files.py, made once: 4-minute MP3 320k, FLAC 16/44.1 and 24/96, Opus,
            AAC; pictures of 500 KB-2 MB in a third) imported cold (page cache dropped; root only) and warm by Shelf and by
            the peers (scripts/import_peers.py) on the same files: files/s, MB read and CPU per file, peak RSS; issue 43's targets.
        usage: shelf-bench rescan --dir DIR [--files 500500] [--added 1000] [--warm]
            Unchanged rescans of --files sample files on disk (written once, 0.3 s, no pictures): the import of the root and
            `shelf scan`, cold (page cache dropped; root only) and warm, each a fresh process (seconds, MB read, CPU, commits);
            then --added files in as many new folders, found and imported cold; each beside issue 43's target (--warm:
            never drop the cache).
        usage: shelf-bench soak --minutes 60 --dir DIR [--tracks 100000] [--warmup 5] [--sample 10] [--workers 4]
            shelf serve under a fixed mix (pages, search, syncs, streams with ranges and transcodes, artwork, event streams,
            edits, files copied in and deleted under the watcher, backups every 10 minutes, wrong passwords) for --minutes:
            RSS, open descriptors and each kind's p99 over time (soak.svg), 5xx, streams cut short, integrity and the mirror
            at the end; issue 44's targets.
        usage: shelf-bench sample-files --tracks N --dir DIR [--seconds S]
            Write N real, tagged audio files (FLAC, MP3, Ogg Opus, WAV, AIFF; a cover per album) for `shelf import`.
        usage: shelf-bench legacy-store --tracks N [--artwork-kib K] [--distinct N] --library DIR
            Write a schema-1 store (real JPEGs of about K KiB inline in the track rows; N distinct) for `shelf migrate`.
        usage: shelf-bench mirror [--tracks 10000,50000,100000,500500] [--library DIR] [--writes-only]
            Seed 002's table at each scale: direct path, mirror and raw SQL side by side; mirror build time,
            bytes per track, and a 100-track metadata batch with the mirror on and off (--writes-only: just
            that, on the mirror already built).
        usage: shelf-bench libraries [--tracks 100000] [--library DIR] [--runs 11]
            Issue 40's table: the library split into three (50/30/20 %), every read of a reader limited to one
            or two of them beside an admin's (pages by every sort and at 90 %, sections, anchor, search, the
            views), each with its ratio and target; getMusicDirectory of 2,000 tracks and getIndexes.
        usage: shelf-bench listens [--tracks 50000] [--listens 200000] [--library DIR] [--runs 11]
            Issue 41's table: a play counted one a transaction (nothing linked, two services linked) beside a star; the
            listen log's first page and a page at 90 %; the statistics of a week, month, year and all time; the export,
            and import-from listenbrainz of it into another user, then again (which writes nothing).
        usage: shelf-bench sonic --library DIR [--tracks 500500] [--runs 5] [--no-peers] [--similarity-only]
            Issue 42's table: analysis with its decode of a 4-minute MP3 and FLAC (made once in DIR) in CPU seconds, beside
            librosa computing the same descriptors and essentia's MusicExtractor (.venv/audio); then getSonicSimilarTracks
            and findSonicPath through `shelf serve` (a child) and in process at --tracks generated tracks with feature
            vectors, the similarity index's memory and the bytes stored per track.
        usage: shelf-bench serve --library DIR [--tracks 500500] [--connections 64] [--duration 10] [--threads 2] [--wrk PATH]
            `shelf serve` as a child driven by wrk: first page, cursor page at 90 %, sections, anchor, search, album
            tracks, artwork warm and cold; requests/s, p50/p99, non-2xx, beside the same read in-process; peak RSS.
            DIR is generated (with a picture per album), given a user and an API key once, and reused.
        usage: shelf-bench subsonic --library DIR [--tracks 500500] [--connections 16] [--duration 5] [--threads 2] [--wrk PATH] [--peer supysonic [--files 2000]]
            The OpenSubsonic API of `shelf serve` (a child; apiKey, f=json): a whole search3 "" sync at 500 a page
            (every song once), getAlbumList2 at offsets 0, 10,000 and 40,000, getRandomSongs, getArtists, getCoverArt
            warm and cold under wrk, stream time to first byte raw and mp3; each beside issue 23's target. DIR as for serve.
            With --peer supysonic: supysonic from PyPI (into .venv) and Shelf on the same --files real files under DIR,
            the same calls against both, each median, the ratio and whether the counts agree.
        usage: shelf-bench sync --library DIR [--tracks 500500] --small-library DIR [--small-tracks 5000]
            The shelfSync extension (getLibraryChanges) of `shelf serve` (a child): every page of the changes since a token
            after 1, 10, 100 and 1,000 songs edited in one transaction, and 100 in 100, on both libraries side by side
            (the time should follow the answer, not the library). The DIRs are generated (no pictures) once and reused.
        usage: shelf-bench watch --dir DIR [--folders 40000]
            The folder watcher (inotify) over DIR/music laid out as Artist/Album folders (made once): the time to watch
            them all, the watcher's resident memory, and an album copied in until its tracks are in the library.
        usage: shelf-bench loudness --dir DIR [--files 8] [--seconds 300]
            Shelf's loudness measurement (libebur128 on ffmpeg's decode) beside ffmpeg -af ebur128=peak=true on the same
            FLACs (made once in DIR): throughput in times real time per core, and the ratio (target ≥ 1×).
        usage: shelf-bench web --library DIR [--tracks 500500] [--scroll-rows 100000]
            The web page in headless Chromium (Selenium from .venv) against `shelf serve` (a child): navigation to first
            rows painted, jump to a letter, a fast scroll (long animation frames, frames dropped), the album grid's
            first covers, JS heap and DOM nodes after scrolling the whole list; each beside issue 17's target. DIR as for serve.
        """

    static func main() async {
        // Before the debug warning: a version line is for scripts, which want stdout alone.
        if CommandLine.arguments.dropFirst().first == "--version" {
            return print("shelf-bench \(EngineVersions.version) (\(String(cString: shelf_build_commit())))")
        }
        #if DEBUG
            FileHandle.standardError.write(Data("warning: shelf-bench is a DEBUG build; timings are not representative (use -c release)\n".utf8))
        #endif
        var words = Array(CommandLine.arguments.dropFirst())
        guard let command = words.first else { usageError("missing command") }
        words.removeFirst()
        // `--json` belongs to the reporter, not to any one command, so it may stand anywhere.
        let json = words.contains("--json")
        words.removeAll { $0 == "--json" }
        var report = Report(benchmark: command, arguments: words)
        do {
            switch command {
            case "generate": try await Generate(words).run(&report)
            case "history": try await HistoryBench(words).run(&report)
            case "mirror": try await MirrorBench(words).run(&report)
            case "libraries": try await LibrariesBench(words).run(&report)
            case "listens": try await ListensBench(words).run(&report)
            case "sonic": try await SonicBench(words).run(&report)
            case "legacy-store": try LegacyStoreCommand(words).run(&report)
            case "sample-files": try SampleFiles(words).run(&report)
            case "import": try await ImportBench(words).run(&report)
            case "rescan": try await RescanBench(words).run(&report)
            case "soak": try await SoakBench(words).run(&report)
            case "artwork": try await ArtworkBench(words).run(&report)
            case "serve": try await ServeBench(words).run(&report)
            case "subsonic": try await SubsonicBench(words).run(&report)
            case "sync": try await SyncBench(words).run(&report)
            case "web": try await WebBench(words).run(&report)
            case "watch": try await WatchBench(words).run(&report)
            case "loudness": try await LoudnessBench(words).run(&report)
            // The probes are this executable's own children: they always answer one JSON line.
            case "import-probe": return try await ImportBench.probe(words)
            case "scan-probe": return try await RescanBench.scanProbe(words)
            case "artwork-probe": return try await ArtworkProbe.run(words)
            case "help", "--help", "-h": return print(usage)
            default: usageError("unknown command '\(command)'", json: json)
            }
            print(json ? try report.json() : report.text())
        } catch let error as BenchUsageError {
            usageError(error.message, json: json)
        } catch {
            fail("failed", "\(error)", status: 2, json: json)
        }
    }

    static func usageError(_ message: String, json: Bool = false) -> Never {
        if json { fail("usage", message, status: 1, json: true) }
        FileHandle.standardError.write(Data("shelf-bench: \(message)\n\n\(usage)\n".utf8))
        exit(1)
    }

    /// Ends the run: the message on stderr, and with `--json` also `{"error":{"code":…,"message":…}}`
    /// on stdout (as `shelf` does), so a script reading stdout always gets one document.
    static func fail(_ code: String, _ message: String, status: Int32, json: Bool) -> Never {
        FileHandle.standardError.write(Data("shelf-bench: \(message)\n".utf8))
        if json, let data = try? JSONSerialization.data(withJSONObject: ["error": ["code": code, "message": message]], options: [.sortedKeys]) {
            print(String(decoding: data, as: UTF8.self))
        }
        exit(status)
    }
}

struct BenchUsageError: Error {
    let message: String
}

/// Reads `--name value` pairs; every flag must be known and every value well-formed.
struct Flags {
    private var values: [String: String] = [:]

    /// `switches` are flags without a value.
    init(_ words: [String], known: Set<String>, switches: Set<String> = []) throws {
        var index = 0
        while index < words.count {
            let word = words[index]
            if switches.contains(word) {
                values[word] = "yes"
                index += 1
                continue
            }
            guard known.contains(word) else { throw BenchUsageError(message: "unknown argument '\(word)'") }
            guard index + 1 < words.count else { throw BenchUsageError(message: "\(word) needs a value") }
            values[word] = words[index + 1]
            index += 2
        }
    }

    func string(_ name: String) -> String? { values[name] }

    /// Whether a switch was given.
    func bool(_ name: String) -> Bool { values[name] != nil }

    func int(_ name: String, default fallback: Int? = nil) throws -> Int {
        guard let text = values[name] else {
            if let fallback { return fallback }
            throw BenchUsageError(message: "\(name) is required")
        }
        guard let value = Int(text.replacingOccurrences(of: "_", with: "")), value >= 0 else {
            throw BenchUsageError(message: "\(name) expects a whole number, got '\(text)'")
        }
        return value
    }
}
