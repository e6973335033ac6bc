import Foundation
import Shelf
import ShelfCore
import ShelfTestSupport

/// `shelf-bench web`: the web page in headless Chromium (Debian's `chromium` and `chromium-driver`,
/// driven by Selenium from the project's `.venv`) against `shelf serve` on a large library, each
/// figure measured inside the page (scripts/web_bench.py) and set beside issue 17's target.
struct WebBench {
    let directory: URL
    let tracks: Int
    let scrollRows: Int

    /// Reads the command's flags.
    init(_ words: [String]) throws {
        let flags = try Flags(words, known: ["--library", "--tracks", "--scroll-rows"])
        guard let path = flags.string("--library") else { throw BenchUsageError(message: "--library is required") }
        directory = URL(fileURLWithPath: path)
        tracks = max(1, try flags.int("--tracks", default: 500_500))
        scrollRows = max(1, try flags.int("--scroll-rows", default: 100_000))
    }

    private func log(_ text: String) { FileHandle.standardError.write(Data("web: \(text)\n".utf8)) }

    /// The repository this executable was built from (the script and the venv live there).
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Prepares the library and a session, runs the browser against the server, and fills `results`.
    func run(_ results: inout Report) async throws {
        let python = Self.repository.appendingPathComponent(".venv/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path), FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium"),
            FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver")
        else {
            throw BenchUsageError(message: "needs .venv with selenium (make subsonic-client) and Debian's chromium and chromium-driver (make deps)")
        }
        let shelf = try ServeBench.shelfBinary()
        let (library, _) = try await ServeBench.openLibrary(directory, tracks: tracks, log: log)
        let count = try await library.info().trackCount
        guard let admin = try await library.users().first(where: \.isAdmin) else { throw BenchUsageError(message: "the library has no admin") }
        let session = try await library.createSession(user: admin.id)

        let server = try ServerProcess(shelf: shelf, library: directory)
        log("server pid \(server.pid) on port \(server.port); the browser scrolls \(scrollRows) rows of \(count)")
        let script = Self.repository.appendingPathComponent("scripts/web_bench.py")
        let run: ProcessResult
        do {
            run = try ChildProcess.run(
                python, [script.path, "http://127.0.0.1:\(server.port)", session, "\(scrollRows)"], environment: ["SE_AVOID_STATS": "true"])
        } catch {
            _ = server.stop()
            throw error
        }
        _ = server.stop()
        guard run.status == 0, let line = run.stdout.split(separator: "\n").last,
            let figures = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        else {
            throw BenchUsageError(message: "the browser run failed: \(run.stdout)\n\(run.stderr.suffix(3000))")
        }
        func number(_ key: String) -> Double { (figures[key] as? NSNumber)?.doubleValue ?? .nan }
        // A figure the run could not take (a small library without those sections) is shown as such, never as NaN.
        func figure(_ key: String) -> any ReportValue {
            let value = number(key)
            return value.isNaN ? Report.Value.absent("not measured") : value
        }

        let heapBefore = number("heapBeforeBytes")
        let heapAfter = number("heapAfterBytes")
        let nodesBefore = number("nodesBefore")
        let nodesAfter = number("nodesAfter")
        let rows: [[any ReportValue]] = [
            ["navigation → first rows painted (median of 3 loads), ms", figure("firstRowsMs")],
            ["navigation → first rows painted (slowest of the 3), ms", figure("firstRowsMaxMs")],
            ["jump to a letter → its rows painted (median of M, か, S, #, B), ms", figure("jumpMs")],
            ["jump to a letter, slowest of the five, ms", figure("jumpMaxMs")],
            ["fast scroll over \(scrollRows) rows in \(Int(number("scrollFrames"))) frames: long animation frames > 50 ms", figure("scrollLongFrames")],
            ["fast scroll: longest frame, ms", figure("scrollLongestFrameMs")],
            [
                "fast scroll: frames dropped (gap > 1.5 × the median \(String(format: "%.1f", number("scrollFrameIntervalMs"))) ms)",
                figure("scrollDroppedFrames"),
            ],
            ["fast scroll: placeholder rows seen, summed over frames", figure("scrollPlaceholderRowFrames")],
            ["album grid → first covers painted, ms", figure("albumGridMs")],
            ["whole list in 200 jumps: long tasks > 50 ms", figure("wholeListLongTasks")],
            ["whole list in 200 jumps: longest task, ms", figure("wholeListLongestTaskMs")],
            ["the shell's \(Int(number("shellFiles"))) files, KB as sent", number("shellBytes") / 1024],
            ["the shell's files gzip-compressed, KB", number("shellGzipBytes") / 1024],
        ]
        results.table(
            "The web page in headless Chromium at \(count) tracks, 1280×800, over 127.0.0.1", key: "measurements",
            [.init("measurement", "measurement"), .init("value", "value", decimals: 1)], rows)
        results.sentence(
            "After scrolling the whole list: JS heap \(figure: "heapBeforeMB", heapBefore / 1e6, decimals: 2) → \(figure: "heapAfterMB", heapAfter / 1e6, decimals: 2) MB, DOM nodes \(figure: "nodesBefore", Int(nodesBefore)) → \(figure: "nodesAfter", Int(nodesAfter))."
        )
        let heapChange = abs(heapAfter - heapBefore) / heapBefore
        let targets: [[any ReportValue]] = [
            ["first rows ms (median of 3 loads)", figure("firstRowsMs"), 300.0, number("firstRowsMs") <= 300],
            ["jump ms (median)", figure("jumpMs"), 100.0, number("jumpMs") < 100],
            ["long frames > 50 ms during the scroll", figure("scrollLongFrames"), 0.0, number("scrollLongFrames") == 0],
            ["long tasks > 50 ms over the whole list", figure("wholeListLongTasks"), 0.0, number("wholeListLongTasks") == 0],
            ["shell KB compressed", number("shellGzipBytes") / 1024, 150.0, number("shellGzipBytes") <= 150 * 1024],
            ["heap change after the whole list (fraction)", heapChange, 0.2, heapChange <= 0.2],
            ["DOM nodes change after the whole list", nodesAfter - nodesBefore, 100.0, abs(nodesAfter - nodesBefore) <= 100],
        ]
        results.table(
            "targets", key: "targets",
            [
                .init("target", "target"), .init("measured", "measured", decimals: 2), .init("limit", "limit", decimals: 1), .init("met", "met"),
            ], targets)
    }
}
