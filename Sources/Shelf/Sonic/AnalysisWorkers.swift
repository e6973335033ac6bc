import Foundation
import ShelfCore

/// One file for a worker: an ID the reply repeats, the path and the slice (CUE tracks).
struct WorkerRequest: Codable, Sendable {
    var id: Int
    var path: String
    var start: Double?
    var end: Double?
}

/// A worker's answer about one file.
struct WorkerReply: Codable, Sendable {
    var id: Int
    var status: SonicStatus
    var reason: String?
    var seconds: Double
    var features: [Float]?

    var outcome: SonicOutcome {
        guard status == .ok else { return SonicOutcome(status: status, reason: reason, seconds: seconds) }
        guard let features = features.flatMap(SonicFeatures.init(values:)) else {
            return SonicOutcome(status: .failed, reason: "the worker sent no usable descriptors", seconds: seconds)
        }
        return SonicOutcome(status: .ok, features: features, seconds: seconds)
    }
}

/// The worker's side: `shelf analyze-worker` reads one JSON request a line on stdin and answers
/// each with one JSON line on stdout, until stdin closes. A decoder crash ends only this process;
/// the engine marks the file it was given as failed and starts another worker.
public enum AnalysisWorker {
    /// Serves requests from `input` to `output` (file descriptors) until `input` ends. With
    /// `niceness`, the process lowers its own priority first (the server's background runs).
    /// `SHELF_ANALYZE_HOLD` (a path fragment) and `SHELF_ANALYZE_HOLD_FILE` are for the tests:
    /// on a matching path the worker writes its PID to that file and waits to be killed, a point
    /// the test knows was reached.
    public static func serve(input: Int32 = 0, output: Int32 = 1, niceness: Int32? = nil) {
        // Foundation's Process starts children with the spawning thread's signals blocked: unblock
        // them, so that Ctrl-C (SIGINT to the terminal's process group) stops the worker too.
        var none = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, nil)
        signal(SIGINT, SIG_DFL)
        signal(SIGPIPE, SIG_IGN)
        if let niceness { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, niceness) }
        let environment = ProcessInfo.processInfo.environment
        let hold = environment["SHELF_ANALYZE_HOLD"].flatMap { $0.isEmpty ? nil : $0 }
        let holdFile = environment["SHELF_ANALYZE_HOLD_FILE"]
        let encoder = JSONEncoder()
        var reader = LineReader(fd: input)
        while let line = reader.next(timeout: -1) {
            guard let request = try? JSONDecoder().decode(WorkerRequest.self, from: Data(line.utf8)) else { continue }
            if let hold, let holdFile, request.path.contains(hold) {
                try? Data("\(getpid())\n".utf8).write(to: URL(fileURLWithPath: holdFile))
                while true { sleep(60) }
            }
            let outcome =
                (try? SonicAnalyzer.analyze(path: request.path, start: request.start, end: request.end))
                ?? SonicOutcome(status: .failed, reason: "cancelled")
            let reply = WorkerReply(
                id: request.id, status: outcome.status, reason: outcome.reason, seconds: outcome.seconds, features: outcome.features?.values)
            guard var data = try? encoder.encode(reply) else { continue }
            data.append(0x0A)
            guard FileDescriptor.writeAll(output, data) else { return }
        }
    }
}

/// Reads newline-ended lines from a descriptor, waiting at most a given time for each.
struct LineReader {
    let fd: Int32
    private var buffer: [UInt8] = []

    init(fd: Int32) { self.fd = fd }

    /// The next line without its newline; nil at the end of input or after `timeout` seconds
    /// (negative: no limit), `timedOut` telling which.
    mutating func next(timeout: Double, timedOut: UnsafeMutablePointer<Bool>? = nil) -> String? {
        let deadline = timeout >= 0 ? Date().addingTimeInterval(timeout) : nil
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            var wait: Int32 = -1
            if let deadline {
                let left = deadline.timeIntervalSinceNow
                if left <= 0 {
                    timedOut?.pointee = true
                    return nil
                }
                wait = Int32(min(left * 1000, 60_000))
            }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, wait)
            if ready < 0, errno == EINTR { continue }
            if ready == 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = read(fd, &chunk, chunk.count)
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return nil }
            buffer += chunk[..<count]
        }
    }
}

/// Writing whole buffers to a descriptor.
enum FileDescriptor {
    /// Writes all of `data`; false when the other end is gone.
    static func writeAll(_ fd: Int32, _ data: Data) -> Bool {
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if written < 0, errno == EINTR { continue }
                if written <= 0 { return false }
                offset += written
            }
            return true
        }
    }
}

/// The engine's side of one worker: a child `shelf analyze-worker` over two pipes, restarted by
/// its owner when it dies.
final class WorkerProcess: @unchecked Sendable {
    // Touched by one analysis task at a time (its owner), and by `interrupt` from a cancellation
    // handler, which only reads the PID.
    private let process = Process()
    private let toWorker: Int32
    private var reader: LineReader
    private var nextID = 0

    /// Starts `command` (the `shelf` executable and its arguments).
    init(command: [String]) throws {
        guard let executable = command.first else { throw LibraryError.invalidValue(field: "worker", value: "", reason: "is empty") }
        signal(SIGPIPE, SIG_IGN)
        let input = Pipe()
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = Array(command.dropFirst())
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw LibraryError.invalidValue(field: "analysis worker", value: executable, reason: "cannot be started (\(error.localizedDescription))")
        }
        toWorker = input.fileHandleForWriting.fileDescriptor
        reader = LineReader(fd: output.fileHandleForReading.fileDescriptor)
        // Keep the pipes' handles alive as long as the process: they close the descriptors.
        handles = [input, output]
    }

    private var handles: [Pipe]

    /// The worker's PID.
    var pid: Int32 { process.processIdentifier }

    /// How one request ended.
    enum Answer {
        case reply(SonicOutcome)
        /// The worker died (`signal` when killed by one) or stopped answering within the time.
        case died(signal: Int32?, status: Int32)
        case timedOut
    }

    /// Sends one file and waits for its answer (blocking: run it off the cooperative pool).
    func analyze(_ path: String, start: Double?, end: Double?, timeout: Double) -> Answer {
        nextID += 1
        let request = WorkerRequest(id: nextID, path: path, start: start, end: end)
        guard var data = try? JSONEncoder().encode(request) else { return .reply(SonicOutcome(status: .failed, reason: "path is not text")) }
        data.append(0x0A)
        if FileDescriptor.writeAll(toWorker, data) {
            var timedOut = false
            while let line = reader.next(timeout: timeout, timedOut: &timedOut) {
                if let reply = try? JSONDecoder().decode(WorkerReply.self, from: Data(line.utf8)), reply.id == nextID {
                    return .reply(reply.outcome)
                }
            }
            if timedOut {
                kill(pid, SIGKILL)
                process.waitUntilExit()
                return .timedOut
            }
        }
        process.waitUntilExit()
        let signalled = process.terminationReason == .uncaughtSignal
        return .died(signal: signalled ? process.terminationStatus : nil, status: process.terminationStatus)
    }

    /// Sends SIGINT, as Ctrl-C at a terminal would, and SIGKILL two seconds later if the worker
    /// is still there (a decoder stuck in a loop does not see signals it never checks for).
    func interrupt() {
        let pid = pid
        kill(pid, SIGINT)
        DispatchQueue.global().asyncAfter(deadline: .now() + 2) { [weak self] in
            if self?.process.isRunning ?? false { kill(pid, SIGKILL) }
        }
    }

    /// Closes its input (the worker exits) and waits for it.
    func finish() {
        try? handles[0].fileHandleForWriting.close()
        process.waitUntilExit()
    }

    deinit {
        if process.isRunning { kill(pid, SIGKILL) }
    }
}
