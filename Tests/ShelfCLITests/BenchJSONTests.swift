import Foundation
import ShelfTestSupport
import Testing

/// Every `shelf-bench` command with `--json`, at a tiny scale: stdout is exactly one JSON document
/// carrying the command's figures, the build and the machine. Scripts compare runs through these
/// keys, so renaming one must fail here.
@Suite struct BenchJSONTests {
    let products = ChildProcess.productsDirectory()

    /// Runs `shelf-bench` with `--json` and returns the one document its stdout holds.
    func bench(_ arguments: [String]) throws -> [String: Any] {
        let result = try ChildProcess.run(products.appendingPathComponent("shelf-bench"), arguments + ["--json"])
        try #require(result.status == 0, "\(arguments[0]): \(result.stderr)")
        // One line, and that line one object: no table, note or second document beside it.
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 1, "\(arguments[0]) printed \(lines.count) lines on stdout")
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(arguments[0]): \(result.stdout)")
        #expect(document["benchmark"] as? String == arguments[0])
        #expect(document["build"] as? String == "debug" || document["build"] as? String == "release")
        let machine = try #require(document["machine"] as? [String: Any])
        #expect((machine["cores"] as? Int ?? 0) > 0)
        #expect((machine["memoryMiB"] as? Int ?? 0) > 0)
        return document
    }

    /// Expects each key of `object` to hold a number above zero.
    func expectPositive(_ object: [String: Any], _ keys: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        for key in keys {
            let value = (object[key] as? NSNumber)?.doubleValue ?? 0
            #expect(value > 0, "\(key) is \(object[key] ?? "missing")", sourceLocation: sourceLocation)
        }
    }

    /// A table's rows, which must be there even when empty.
    func rows(_ document: [String: Any], _ key: String) throws -> [[String: Any]] {
        try #require(document[key] as? [[String: Any]], "no array '\(key)'")
    }

    @Test func generate() async throws {
        try await offCooperativePool { [self] in
            let dir = try TemporaryDirectory()
            let document = try bench(["generate", "--tracks", "120", "--library", dir.path("lib").path])
            #expect(document["tracks"] as? Int == 120)
            expectPositive(document, ["tracks", "albums", "artists", "seconds", "tracksPerSecond", "bytesOnDisk", "bytesPerTrack"])
            #expect(document["generatorSeconds"] is NSNumber)

            // Without --json: the table, and no JSON beside it.
            let text = try ChildProcess.run(products.appendingPathComponent("shelf-bench"), ["generate", "--tracks", "50", "--library", dir.path("text").path])
            #expect(text.status == 0, "\(text.stderr)")
            #expect(text.stdout.hasPrefix("| tracks | albums | artists | seconds |"))
            #expect(text.stdout.contains("| 50 |") && !text.stdout.contains("{"))
        }
    }

    @Test func legacyStore() async throws {
        try await offCooperativePool { [self] in
            let dir = try TemporaryDirectory()
            let document = try bench(["legacy-store", "--tracks", "12", "--artwork-kib", "8", "--distinct", "4", "--library", dir.path("lib").path])
            #expect(document["tracks"] as? Int == 12)
            #expect(document["pictureKiB"] as? Int == 8)
            #expect(document["distinctPictures"] as? Int == 4)
            expectPositive(document, ["meanPictureBytes", "inlineBytes", "seconds"])
            let mean = (document["meanPictureBytes"] as? NSNumber)?.doubleValue ?? 0
            #expect(abs(mean - 8_192) < 820, "pictures within 10% of 8 KiB, got \(mean)")
        }
    }

    @Test func sampleFiles() async throws {
        try await offCooperativePool { [self] in
            let dir = try TemporaryDirectory()
            let document = try bench(["sample-files", "--tracks", "5", "--dir", dir.path("music").path, "--seconds", "0.05"])
            #expect(document["files"] as? Int == 5)
            expectPositive(document, ["files", "audioSeconds", "seconds", "filesPerSecond"])
        }
    }

    @Test func importFiles() async throws {
        try await offCooperativePool { [self] in
            let dir = try TemporaryDirectory()
            let document = try bench(["import", "--files", "5", "--dir", dir.url.path])
            let runs = try rows(document, "runs")
            #expect(runs.count >= 4, "a first import and a rescan of plain and of tagged files (and mutagen when installed)")
            #expect(runs.prefix(4).map { $0["run"] as? String } == ["first import", "unchanged rescan", "first import", "unchanged rescan"])
            #expect(runs.prefix(4).map { $0["catalogue"] as? String } == ["plain", "plain", "tagged", "tagged"])
            for run in runs {
                #expect(run["files"] as? Int == 5)
                expectPositive(run, ["seconds", "filesPerSecond"])
            }
            for run in runs.prefix(4) { expectPositive(run, ["peakMiB"]) }
            #expect((document["taggedOverPlain"] as? NSNumber)?.doubleValue ?? 0 > 0)
        }
    }

    @Test func rescan() async throws {
        try await offCooperativePool { [self] in
            let dir = try TemporaryDirectory()
            // --warm: the suite never empties the machine's page cache under the other tests.
            let document = try bench(["rescan", "--files", "30", "--added", "4", "--warm", "--dir", dir.url.path])
            let runs = try rows(document, "runs")
            #expect(runs.map { $0["cache"] as? String } == ["–", "warm", "warm", "warm", "warm", "warm"])
            #expect(runs.first?["files"] as? Int == 30 && runs.last?["files"] as? Int == 34)
            // Unchanged rescans commit nothing; the grown one commits the four new files.
            #expect(runs.dropFirst().dropLast().allSatisfy { $0["commits"] as? Int == 0 && $0["tokenMoved"] as? String == "no" })
            #expect(runs.last?["tokenMoved"] as? String == "yes")
            #expect(document["addedFound"] as? Int == 4 && document["addedWritten"] as? Int == 4)
            let targets = try rows(document, "targets")
            #expect(targets.count == 4 && targets.allSatisfy { $0["met"] as? Bool == true }, "\(targets)")
        }
    }

    @Test func history() async throws {
        try await offCooperativePool { [self] in
            let document = try bench(["history", "--tracks", "1000", "--small-tracks", "1000", "--bulk-updates", "500", "--tail", "100"])
            let libraries = try rows(document, "libraries")
            #expect(libraries.map { $0["library"] as? String } == ["large", "small"])
            for library in libraries {
                #expect(library["tracks"] as? Int == 1_000)
                #expect(library["changesAnswerTransactions"] as? Int == 100)
                expectPositive(library, ["logEntries", "changesLast100Ms", "changesRawMs", "summaryLastTailMs", "summaryRawMs", "summaryAnswerTracks"])
            }
            #expect(document["tailTransactions"] as? Int == 100)
            expectPositive(document, ["changesLargeToSmallRatio", "summaryLargeToSmallRatio"])
        }
    }

    @Test func libraries() async throws {
        try await offCooperativePool { [self] in
            let document = try bench(["libraries", "--tracks", "1000", "--runs", "3"])
            let rows = try rows(document, "libraries")
            // Every sort's first page and page at 90 %, then sections, anchor, three searches and five views, for two readers.
            let firstPages = rows.filter { ($0["measure"] as? String)?.hasPrefix("first page of 100, by ") == true }.count
            let deepPages = rows.filter { ($0["measure"] as? String)?.hasPrefix("page of 100 at 90 %, by ") == true }.count
            #expect(firstPages >= 2 * 15 && firstPages == deepPages && rows.count == firstPages + deepPages + 2 * 10)
            for row in rows {
                #expect(row["measure"] is String && row["reader"] is String && row["target"] is String)
                #expect(row["met"] as? String == "yes" || row["met"] as? String == "no")
                expectPositive(row, ["ms", "adminMs"])
            }
            let folders = try self.rows(document, "folders")
            #expect(folders.count == 3 && folders.allSatisfy { ($0["ms"] as? Double ?? -1) >= 0 })
            expectPositive(document, ["tracks", "mirrorBytes", "rows"])
        }
    }

    @Test func listens() async throws {
        try await offCooperativePool { [self] in
            let document = try bench(["listens", "--tracks", "1000", "--listens", "2000", "--runs", "3"])
            let writes = try rows(document, "writes")
            #expect(writes.count == 3)
            for row in writes { expectPositive(row, ["ms"]) }
            let reads = try rows(document, "reads")
            #expect(reads.count == 6)
            for row in reads { expectPositive(row, ["ms"]) }
            let imports = try rows(document, "imports")
            #expect(imports.map { $0["listensWritten"] as? Int } == [2_000, 0])
            #expect(document["exported"] as? Int == 2_000 && document["secondImportListens"] as? Int == 0)
            expectPositive(document, ["importListensPerSecond", "listens"])
        }
    }

    @Test func mirror() async throws {
        try await offCooperativePool { [self] in
            let document = try bench(["mirror", "--tracks", "1000", "--write-rounds", "3"])
            let reads = try rows(document, "reads")
            #expect(reads.count >= 10)
            for read in reads {
                #expect(read["tracks"] as? Int == 1_000)
                #expect(read["read"] is String && read.keys.contains("readDetail"))
                expectPositive(read, ["directMs", "mirrorMs", "rawMs", "rawWithColumnsMs", "speedupRatio", "ratioToRaw", "ratioToRawWithColumns"])
            }
            // Rows are found by a name that does not change with the scale (hit counts are in readDetail).
            let names = Set(reads.compactMap { $0["read"] as? String })
            for name in ["first page", "deep page at 90% by cursor", "A–Z anchor jump", "search 'lo'"] { #expect(names.contains(name), "no row '\(name)'") }
            let builds = try rows(document, "builds")
            #expect(builds.count == 1 && builds.first?["tracks"] as? Int == 1_000)
            expectPositive(builds.first ?? [:], ["buildSeconds", "mirrorBytes", "bytesPerTrack", "batchMirrorOnMs", "batchMirrorOffMs", "mirrorUpdatesRawMs"])
        }
    }

    @Test func artwork() async throws {
        try await offCooperativePool { [self] in
            let dir = try TemporaryDirectory()
            let document = try bench(["artwork", "--tracks", "8", "--library", dir.url.path])
            let listing = try rows(document, "listing")
            #expect(listing.count == 2)
            for store in listing {
                #expect(store["titles"] as? Int == 8)
                expectPositive(store, ["rssAfterMiB", "fetchToLastTitleMs"])
                #expect(store["rssGrowthMiB"] is NSNumber)
            }
            let loader = try rows(document, "loader")
            #expect(loader.map { $0["sizePx"] as? Int } == [60, 600])
            for scan in loader {
                #expect(scan["imagesDecoded"] as? Int == 8)
                #expect(scan["cacheWithinLimit"] as? Bool == true)
                expectPositive(scan, ["cacheMiB", "imagesHeld", "rssBeforeMiB", "rssFinalMiB", "peakMiB", "seconds"])
                #expect(scan["evictions"] is NSNumber)
            }
            let thumbnails = try rows(document, "thumbnails")
            #expect(thumbnails.map { $0["sizePx"] as? Int } == [60, 300])
            for row in thumbnails {
                #expect(row["pictures"] as? Int == 8)
                expectPositive(row, ["dctPerSecond", "wholeDecodePerSecond"])
                #expect(row.keys.contains("pillowDraftPerSecond"), "null when Pillow is missing, but present")
            }
        }
    }

    /// Whether the two wrk-driven benchmarks run: each keeps both cores busy for about half a
    /// minute, so `make test` (ten minutes on two cores) leaves them to `make test-full`; the
    /// server under concurrent load is also checked by the proxy suite's wrk runs.
    static let wrkBenchmarks = FileManager.default.isExecutableFile(atPath: "/usr/bin/wrk") && TestScale.full

    /// `shelf serve` under wrk at a tiny scale; skipped where wrk is not installed (`make deps` installs it).
    @Test(.enabled(if: wrkBenchmarks, "wrk is not installed, or not make test-full"))
    func serve() async throws { try await offCooperativePool { try self.serveChecks() } }

    /// The body of `serve`, outside a closure: the 6.3.1 compiler crashes analysing it inside one.
    func serveChecks() throws {
        let dir = try TemporaryDirectory()
        let document = try bench(["serve", "--library", dir.path("lib").path, "--tracks", "300", "--duration", "1", "--connections", "4"])
        let scenarios = try rows(document, "scenarios")
        #expect(scenarios.map { $0["scenario"] as? String }.count == 8)
        let names = scenarios.compactMap { $0["scenario"] as? String }
        for prefix in ["first page", "cursor page at 90 %", "sections", "anchor", "search", "album tracks", "artwork 320 px warm", "artwork 320 px cold"] {
            #expect(names.contains { $0.hasPrefix(prefix) }, "no scenario '\(prefix)'")
        }
        for scenario in scenarios {
            #expect(scenario["non2xx"] as? Int == 0, "\(scenario)")
            #expect(scenario["socketErrors"] as? Int == 0, "\(scenario)")
            expectPositive(scenario, ["requestsPerSecond", "p50Ms", "p99Ms", "inProcessMs"])
            let overhead = scenario["overheadMs"] as? NSNumber
            #expect(overhead != nil)
        }
        expectPositive(document, ["peakRSSMiB", "accessLogLines", "firstPageWireEncodeMs"])
        #expect(document["serverExitStatus"] as? Int == 0)
        #expect(try rows(document, "targets").count == 6)
    }

    /// The OpenSubsonic benchmark at a tiny scale: every scenario measured, the sync complete, the targets judged.
    @Test(.enabled(if: wrkBenchmarks, "wrk is not installed, or not make test-full"))
    func subsonic() async throws {
        try await offCooperativePool { [self] in
            let dir = try TemporaryDirectory()
            let document = try bench(["subsonic", "--library", dir.path("lib").path, "--tracks", "300", "--duration", "1", "--connections", "4"])
            let scenarios = try rows(document, "scenarios")
            let names = scenarios.compactMap { $0["scenario"] as? String }
            for prefix in [
                "search3", "getAlbumList2", "getRandomSongs", "getArtists", "getCoverArt size=300 warm", "getCoverArt size=300 cold", "stream raw",
                "stream format=mp3",
            ] {
                #expect(names.contains { $0.hasPrefix(prefix) }, "no scenario '\(prefix)'")
            }
            for scenario in scenarios { expectPositive(scenario, ["ms"]) }
            #expect(document["syncSongs"] as? Int == 300)
            #expect(document["syncRepeats"] as? Int == 0)
            let targets = try rows(document, "targets")
            #expect(targets.count == 13)
            #expect(targets.first { ($0["target"] as? String)?.hasPrefix("every song exactly once") == true }?["met"] as? Bool == true)
        }
    }

    /// The web page's benchmark at a tiny scale, when the browser and Selenium are there: every
    /// figure taken in the page, the heap and node counts, the targets judged.
    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium") && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver")
                && FileManager.default.isExecutableFile(
                    atPath: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                        .deletingLastPathComponent().appendingPathComponent(".venv/bin/python").path),
            "no chromium, chromium-driver or .venv"))
    func web() async throws { try await offCooperativePool { try self.webChecks() } }

    /// The body of `web`, on a thread of its own while the browser runs.
    func webChecks() throws {
        let dir = try TemporaryDirectory()
        let document = try bench(["web", "--library", dir.path("lib").path, "--tracks", "400", "--scroll-rows", "200"])
        let measured = try rows(document, "measurements")
        let names = measured.compactMap { $0["measurement"] as? String }
        for prefix in ["navigation → first rows painted", "jump to a letter", "fast scroll over 200 rows", "album grid → first covers painted"] {
            #expect(names.contains { $0.hasPrefix(prefix) }, "no measurement '\(prefix)'")
        }
        let first = measured.first { ($0["measurement"] as? String)?.hasPrefix("navigation") == true }
        expectPositive(first ?? [:], ["value"])
        expectPositive(document, ["heapBeforeMB", "heapAfterMB", "nodesBefore", "nodesAfter"])
        #expect(try rows(document, "targets").count == 7)
        for prefix in ["whole list in 200 jumps: long tasks", "the shell's files gzip-compressed"] {
            #expect(names.contains { $0.hasPrefix(prefix) }, "no measurement '\(prefix)'")
        }
    }

    @Test func failuresAreOneJSONDocumentToo() async throws {
        try await offCooperativePool { [self] in
            let result = try ChildProcess.run(products.appendingPathComponent("shelf-bench"), ["generate", "--json"])
            #expect(result.status == 1)
            let document = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            let error = try #require(document["error"] as? [String: Any])
            #expect(error["code"] as? String == "usage")
            #expect((error["message"] as? String)?.contains("--tracks") == true)
        }
    }
}
