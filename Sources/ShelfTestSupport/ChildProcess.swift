import Foundation

/// What a finished child process printed and how it ended.
public struct ProcessResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String

    /// A result from its parts, for tests that run a child their own way.
    public init(status: Int32, stdout: String, stderr: String) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }
}

/// Runs programs for end-to-end tests: the built `shelf` binaries, and Python as a second process
/// contending for a library's locks.
public enum ChildProcess {
    /// The directory holding the built products (`shelf`, `shelf-bench`) of the current build.
    public static func productsDirectory(file: String = #filePath) -> URL {
        // The test bundle lives in the products directory; fall back to the package's debug folder.
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL,
            Bundle.main.bundleURL.deletingLastPathComponent(),
            URL(fileURLWithPath: file).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent(".build/debug"),
        ]
        for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate.appendingPathComponent("shelf").path) {
            return candidate
        }
        return candidates.last!
    }

    /// Runs `executable` with `arguments` to completion and captures its output; `stdin` is fed to
    /// its standard input and then closed (nil: standard input is /dev/null).
    public static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String] = [:], stdin: Data? = nil, currentDirectory: URL? = nil
    ) throws -> ProcessResult {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { $1 }
        process.environment = env
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let input = stdin.map { _ in Pipe() }
        process.standardInput = input ?? FileHandle.nullDevice
        try process.run()
        if let input, let stdin {
            // A child that exits without reading must fail its test, not kill the test process.
            signal(SIGPIPE, SIG_IGN)
            // Written from another thread: a child that stops reading must not block the test.
            let writer = input.fileHandleForWriting
            DispatchQueue.global().async {
                try? writer.write(contentsOf: stdin)
                try? writer.close()
            }
        }
        return finish(process, stdout: out, stderr: err)
    }

    /// Reads a started child's two pipes to their end, then waits for it: both before waiting,
    /// so a chatty child cannot block on a full pipe.
    public static func finish(_ process: Process, stdout out: Pipe, stderr err: Pipe) -> ProcessResult {
        let group = DispatchGroup()
        nonisolated(unsafe) var errData = Data()
        group.enter()
        DispatchQueue.global().async {
            errData = err.fileHandleForReading.allBytes()
            group.leave()
        }
        let outData = out.fileHandleForReading.allBytes()
        group.wait()
        process.waitUntilExit()
        return ProcessResult(
            status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }

    /// Starts `executable` with `SHELF_PROGRESS=lines` and reads its stderr line by line; kills it
    /// with SIGKILL as soon as `killWhen` accepts a line, so the kill lands at a point the work is
    /// known to have reached, on any machine, however fast. Waits for it either way and returns
    /// whether the kill ended it, with the lines read. Its stdout is discarded; `stdin` is fed to it.
    public static func runKilling(
        _ executable: URL, _ arguments: [String], environment: [String: String] = [:], stdin: Data? = nil, killWhen: (String) -> Bool
    ) throws -> (killed: Bool, lines: [String]) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { $1 }
        env["SHELF_PROGRESS"] = "lines"
        process.environment = env
        let err = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = err
        let input = stdin.map { _ in Pipe() }
        process.standardInput = input ?? FileHandle.nullDevice
        try process.run()
        if let input, let stdin {
            signal(SIGPIPE, SIG_IGN)
            try? input.fileHandleForWriting.write(contentsOf: stdin)
            try? input.fileHandleForWriting.close()
        }
        var sentKill = false
        let lines = forEachLine(of: err.fileHandleForReading) { line in
            if !sentKill, killWhen(line) {
                kill(process.processIdentifier, SIGKILL)
                sentKill = true
            }
            return true
        }
        process.waitUntilExit()
        return (sentKill && process.terminationReason == .uncaughtSignal, lines)
    }

    /// Reads `handle` line by line as the lines arrive, until its end or until `onLine` returns
    /// false; returns the lines read.
    public static func forEachLine(of handle: FileHandle, _ onLine: (String) -> Bool) -> [String] {
        var lines: [String] = []
        var pending = Data()
        while true {
            let chunk = handle.nextBytes()
            if chunk.isEmpty { return lines }
            pending += chunk
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                pending = Data(pending[pending.index(after: newline)...])
                lines.append(line)
                if !onLine(line) { return lines }
            }
        }
    }

    /// Starts `executable` so that it halts itself (SHELF_PROGRESS_STOP_AT) right after its first
    /// report of `label` with at least `done` done, and kills it there: the kill lands at exactly
    /// that point of the work on any machine. Returns whether the kill ended it, with the lines.
    public static func runKilling(
        _ executable: URL, _ arguments: [String], environment: [String: String] = [:], stopAt label: String, done: Int = 0
    ) throws -> (killed: Bool, lines: [String]) {
        try runKilling(executable, arguments, environment: environment.merging(["SHELF_PROGRESS_STOP_AT": "\(label)@\(done)"]) { $1 }) { line in
            progress(line, label: label).map { $0.done >= done } ?? false
        }
    }

    /// The `done` count of a `progress LABEL DONE/TOTAL` line with `label`, else nil.
    public static func progress(_ line: String, label: String) -> (done: Int, total: Int)? {
        guard line.hasPrefix("progress \(label) ") else { return nil }
        let numbers = line.dropFirst("progress \(label) ".count).split(separator: "/").compactMap { Int($0) }
        return numbers.count == 2 ? (numbers[0], numbers[1]) : nil
    }
}

/// A second process (Python's sqlite3) holding a database's write lock until stopped.
public final class LockHolder {
    private let process = Process()
    private let input = Pipe()

    /// Starts the holder and returns once it owns the write lock.
    public init(databasePath: String) throws {
        let script = """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=0)
            db.execute("BEGIN IMMEDIATE")
            print("locked", flush=True)
            sys.stdin.read()
            db.execute("ROLLBACK")
            """
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, databasePath]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = input
        try process.run()
        var seen = Data()
        while !String(decoding: seen, as: UTF8.self).contains("locked") {
            let chunk = output.fileHandleForReading.nextBytes()
            if chunk.isEmpty { throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "lock holder exited"]) }
            seen += chunk
        }
    }

    /// Releases the lock and waits for the process to end.
    public func release() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    deinit { if process.isRunning { release() } }
}
