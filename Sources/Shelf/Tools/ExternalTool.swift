import Foundation
import ShelfCore

/// A program Shelf starts (ffmpeg, ffprobe, mpv, nice, systemctl) and the Debian package that
/// brings it, so that every "not installed" error says what to install.
public struct ExternalTool: Sendable, Hashable, CustomStringConvertible {
    /// The executable's name, looked for on PATH.
    public let name: String
    /// The Debian package that installs it.
    public let debianPackage: String

    /// A tool called `name`, installed by `debianPackage`.
    public init(name: String, debianPackage: String) {
        self.name = name
        self.debianPackage = debianPackage
    }

    /// Decodes and encodes audio: exports, transcodes, loudness.
    public static let ffmpeg = ExternalTool(name: "ffmpeg", debianPackage: "ffmpeg")
    /// Reads the formats TagLib cannot.
    public static let ffprobe = ExternalTool(name: "ffprobe", debianPackage: "ffmpeg")
    /// Plays the jukebox on the server's own sound card.
    public static let mpv = ExternalTool(name: "mpv", debianPackage: "mpv")
    /// Lowers the priority of background decoding.
    public static let nice = ExternalTool(name: "nice", debianPackage: "coreutils")
    /// Asks systemd about `shelf.service` (`shelf doctor`).
    public static let systemctl = ExternalTool(name: "systemctl", debianPackage: "systemd")

    public var description: String { name }
}

/// Why a program could not be run to its end.
public struct ToolError: ClassifiedError, Equatable {
    /// What went wrong.
    public enum Reason: Sendable, Equatable {
        /// Not on the search path (the directories searched), or not executable at the path given.
        case notInstalled(searched: String, package: String)
        /// It exists but could not be started.
        case cannotStart(String)
        /// It was still running after the time limit, and was killed.
        case timedOut(seconds: Double)
    }

    /// The tool's name or path.
    public let tool: String
    /// What went wrong.
    public let reason: Reason

    /// A failure of `tool`.
    public init(tool: String, reason: Reason) {
        self.tool = tool
        self.reason = reason
    }

    /// A missing program is the machine's to fix; one that fails to start or hangs is internal.
    public var kind: ErrorKind {
        switch reason {
        case .notInstalled: .unavailable
        case .cannotStart, .timedOut: .internal
        }
    }

    /// "toolMissing", "toolFailed" or "toolTimedOut".
    public var errorCode: String {
        switch reason {
        case .notInstalled: "toolMissing"
        case .cannotStart: "toolFailed"
        case .timedOut: "toolTimedOut"
        }
    }

    public var description: String {
        switch reason {
        case .notInstalled(let searched, let package):
            "\(tool) is not installed (looked in \(searched)); install Debian's \(package) package (apt-get install \(package))"
        case .cannotStart(let why): "could not run \(tool): \(why)"
        case .timedOut(let seconds): "\(tool) was still running after \(Int(seconds.rounded())) s and was stopped"
        }
    }
}

/// The one place Shelf starts another program: finding it on PATH (once per tool), running it to
/// its end within a time limit with bounded capture of both outputs, or starting it for a caller
/// that streams its output (transcodes, decoders, mpv).
public enum ProgramRunner {
    /// What a program left when it ended.
    public struct Finished: Sendable {
        /// Its exit status, or the signal that ended it when `signalled`.
        public let status: Int32
        /// Whether a signal ended it (it was killed) rather than an exit.
        public let signalled: Bool
        /// Its standard output, up to the capture limit.
        public let output: Data
        /// The end of its standard error, up to the capture limit (the last lines say why).
        public let errorOutput: Data

        /// Whether it exited with status 0.
        public var succeeded: Bool { !signalled && status == 0 }
        /// The last non-empty line of standard error, where ffmpeg and most tools say why they failed.
        public var lastErrorLine: String? {
            String(decoding: errorOutput, as: UTF8.self).split(whereSeparator: \.isNewline).last { !$0.allSatisfy(\.isWhitespace) }.map(String.init)
        }
        /// "exit status N" or "killed by signal N".
        public var ending: String { signalled ? "killed by signal \(status)" : "exit status \(status)" }
    }

    /// Where a started program's output goes.
    public enum Output: Sendable {
        /// To /dev/null.
        case discard
        /// To a pipe the caller reads (`RunningProgram.outputDescriptor` / `errorDescriptor`).
        case pipe
    }

    private static let found = Locked([String: String]())

    /// The executable of `tool`: `path` when given (it must be executable), else the first on
    /// `searchPath` (PATH by default). A PATH search is done once per tool and remembered.
    public static func locate(_ tool: ExternalTool, path: String? = nil, searchPath: String? = nil) throws(ToolError) -> String {
        if let path, !path.isEmpty {
            guard FileManager.default.isExecutableFile(atPath: path) else {
                throw ToolError(tool: tool.name, reason: .notInstalled(searched: path, package: tool.debianPackage))
            }
            return path
        }
        if searchPath == nil, let known = found.withLock({ $0[tool.name] }) { return known }
        let directories = searchPath ?? ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in directories.split(separator: ":") where !directory.isEmpty {
            let candidate = "\(directory)/\(tool.name)"
            if FileManager.default.isExecutableFile(atPath: candidate) {
                if searchPath == nil { found.withLock { $0[tool.name] = candidate } }
                return candidate
            }
        }
        throw ToolError(tool: tool.name, reason: .notInstalled(searched: directories, package: tool.debianPackage))
    }

    /// Starts `executable` with `arguments`, standard input from /dev/null; the caller reads what
    /// it piped and must `wait()` (or `kill()` then `wait()`) to reap it.
    public static func start(
        _ executable: String, _ arguments: [String], output: Output = .discard, errors: Output = .discard
    ) throws(ToolError) -> RunningProgram {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        let outputPipe = output == .pipe ? Pipe() : nil
        let errorPipe = errors == .pipe ? Pipe() : nil
        process.standardOutput = outputPipe ?? FileHandle.nullDevice
        process.standardError = errorPipe ?? FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw ToolError(tool: executable, reason: .cannotStart(error.localizedDescription))
        }
        return RunningProgram(process: process, output: outputPipe, errors: errorPipe)
    }

    /// Runs `executable` to its end and returns its status and both outputs, each kept up to its
    /// limit (standard output's head, standard error's tail). It is killed, and the call throws,
    /// when `timeout` passes (`ToolError.timedOut`) or `isCancelled` answers true
    /// (`CancellationError`).
    public static func run(
        _ executable: String, _ arguments: [String], timeout: Double? = nil, outputLimit: Int = 64 << 20, errorLimit: Int = 64 << 10,
        isCancelled: () -> Bool = { false }
    ) throws -> Finished {
        let program = try start(executable, arguments, output: .pipe, errors: .pipe)
        defer { program.finish() }
        var output = Data()
        var errorOutput = Data()
        let deadline = timeout.map { Date().addingTimeInterval($0) }
        var descriptors = [
            pollfd(fd: program.outputDescriptor ?? -1, events: Int16(POLLIN), revents: 0),
            pollfd(fd: program.errorDescriptor ?? -1, events: Int16(POLLIN), revents: 0),
        ]
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        // Both pipes are drained to their ends, so the program can never block on a full one;
        // poll skips a negative descriptor, which marks a pipe done.
        while descriptors.contains(where: { $0.fd >= 0 }) {
            if isCancelled() {
                program.kill()
                throw CancellationError()
            }
            if let deadline, Date() >= deadline {
                program.kill()
                throw ToolError(tool: executable, reason: .timedOut(seconds: timeout ?? 0))
            }
            // A short timeout, so that a cancellation or the deadline is noticed while the program is silent.
            let ready = poll(&descriptors, nfds_t(descriptors.count), 100)
            if ready < 0, errno != EINTR {
                program.kill()
                throw ToolError(tool: executable, reason: .cannotStart("cannot wait for it: \(String(cString: strerror(errno)))"))
            }
            if ready <= 0 { continue }
            for index in descriptors.indices where descriptors[index].fd >= 0 && descriptors[index].revents != 0 {
                let count = buffer.withUnsafeMutableBytes { read(descriptors[index].fd, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR || errno == EAGAIN { continue }
                if count <= 0 {
                    descriptors[index].fd = -1
                } else if index == 0 {
                    if output.count < outputLimit { output.append(contentsOf: buffer[0..<min(count, outputLimit - output.count)]) }
                } else {
                    errorOutput.append(contentsOf: buffer[0..<count])
                    if errorOutput.count > errorLimit { errorOutput = errorOutput.suffix(errorLimit) }
                }
            }
        }
        let (status, signalled) = program.wait()
        return Finished(status: status, signalled: signalled, output: output, errorOutput: errorOutput)
    }

    /// `run` off the cooperative pool (it blocks on the program's pipes), killed when the calling
    /// task is cancelled.
    public static func run(
        _ executable: String, _ arguments: [String], timeout: Double? = nil, outputLimit: Int = 64 << 20, errorLimit: Int = 64 << 10
    ) async throws -> Finished {
        let cancelled = Locked(false)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Finished, any Error>) in
                Thread.detachNewThread {
                    continuation.resume(
                        with: Result {
                            try run(
                                executable, arguments, timeout: timeout, outputLimit: outputLimit, errorLimit: errorLimit,
                                isCancelled: { cancelled.withLock { $0 } })
                        })
                }
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
        }
    }
}

/// A program started by `ProgramRunner.start`, with the descriptors of the pipes it writes to.
/// `Process` is not Sendable; this owns it alone and only calls its thread-safe members
/// (`processIdentifier`, `isRunning`, `waitUntilExit`, the termination fields after it).
public final class RunningProgram: @unchecked Sendable {
    private let process: Process
    private let outputPipe: Pipe?
    private let errorPipe: Pipe?

    init(process: Process, output: Pipe?, errors: Pipe?) {
        self.process = process
        self.outputPipe = output
        self.errorPipe = errors
    }

    /// Its process ID.
    public var pid: Int32 { process.processIdentifier }
    /// Whether it has not ended yet.
    public var isRunning: Bool { process.isRunning }
    /// The read end of its standard output, when piped.
    public var outputDescriptor: Int32? { outputPipe?.fileHandleForReading.fileDescriptor }
    /// The read end of its standard error, when piped.
    public var errorDescriptor: Int32? { errorPipe?.fileHandleForReading.fileDescriptor }

    /// Kills it with SIGKILL if it still runs. SIGKILL rather than SIGTERM: on SIGTERM ffmpeg
    /// tries to finish its output and could block on a pipe nobody reads any more.
    public func kill() {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
    }

    /// Waits for it to end: its exit status (or signal) and whether a signal ended it.
    @discardableResult
    public func wait() -> (status: Int32, signalled: Bool) {
        process.waitUntilExit()
        return (process.terminationStatus, process.terminationReason == .uncaughtSignal)
    }

    /// Kills it if it still runs, reaps it and closes the pipes' read ends: the cleanup for every path.
    public func finish() {
        kill()
        process.waitUntilExit()
        try? outputPipe?.fileHandleForReading.close()
        try? errorPipe?.fileHandleForReading.close()
    }
}
