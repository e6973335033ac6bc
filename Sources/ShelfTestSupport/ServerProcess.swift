import Foundation
import ShelfCore

/// A real `shelf serve` child on a free loopback port, for end-to-end tests: started, waited for
/// until it prints the address it serves on (a point it is known to have reached), and stopped
/// by a signal. Its stderr (the access log) is collected line by line.
public final class ServerProcess: @unchecked Sendable {
    /// The running child.
    public let process = Process()
    /// The port it listens on.
    public private(set) var port: UInt16 = 0
    /// `http://127.0.0.1:PORT`.
    public var base: String { "http://127.0.0.1:\(port)" }
    private let lines = Locked<[String]>([])
    private let lineArrived = NSCondition()
    private let readerDone = DispatchSemaphore(value: 0)

    /// Starts `shelf --library DIR serve --listen 127.0.0.1:0 EXTRA…` and waits until it serves
    /// (its text or JSON log says so); throws with its output when it exits first. Unless
    /// `environment` says otherwise it reads no config file and has no NOTIFY_SOCKET.
    public init(library: String, arguments: [String] = [], environment: [String: String] = [:]) throws {
        process.executableURL = ChildProcess.productsDirectory().appendingPathComponent("shelf")
        process.arguments = ["--library", library, "serve", "--listen", "127.0.0.1:0"] + arguments
        var env = ProcessInfo.processInfo.environment
        // Hermetic: no config file of the machine's or the user's, no service manager of the test run's.
        env["XDG_CONFIG_HOME"] = "/nonexistent-shelf-test-config"
        env["NOTIFY_SOCKET"] = nil
        env["INVOCATION_ID"] = nil
        env.merge(environment) { $1 }
        process.environment = env
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let reader = err.fileHandleForReading
        let (lines, arrived, done) = (lines, lineArrived, readerDone)
        Thread.detachNewThread {
            var pending = Data()
            while true {
                let chunk = reader.nextBytes()
                if chunk.isEmpty { break }
                pending += chunk
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending = Data(pending[pending.index(after: newline)...])
                    arrived.lock()
                    lines.withLock { $0.append(line) }
                    arrived.broadcast()
                    arrived.unlock()
                }
            }
            arrived.lock()
            lines.withLock { $0.append("<eof>") }
            arrived.broadcast()
            arrived.unlock()
            done.signal()
        }
        guard let line = waitForLine(timeout: 120, { $0.contains(" on http://") || $0.contains(" on https://") || $0 == "<eof>" }),
            line != "<eof>", let colon = line.lastIndex(of: ":"), let port = UInt16(line[line.index(after: colon)...].prefix { $0.isNumber })
        else {
            process.waitUntilExit()
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "shelf serve did not start: \(log.joined(separator: "\n"))"])
        }
        self.port = port
    }

    /// Every stderr line so far.
    public var log: [String] { lines.withLock { $0 } }

    /// Waits (up to `timeout` seconds, a bound for a hung child, not a synchronization) for a
    /// stderr line accepted by `match`, looking at lines already read too.
    @discardableResult
    public func waitForLine(timeout: TimeInterval = 60, _ match: (String) -> Bool) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        lineArrived.lock()
        defer { lineArrived.unlock() }
        while true {
            if let found = lines.withLock({ $0.first(where: match) }) { return found }
            if lines.withLock({ $0.last == "<eof>" }) { return nil }
            if !lineArrived.wait(until: deadline) { return nil }
        }
    }

    /// Sends `signal` and waits for the exit; returns the exit status. Stopping again (a test's
    /// own stop, then its deferred one) returns the same status.
    @discardableResult
    public func stop(signal: Int32 = SIGTERM) -> Int32 {
        stopping.withLock { stopped in
            if !stopped {
                if process.isRunning { kill(process.processIdentifier, signal) }
                process.waitUntilExit()
                readerDone.wait()
                stopped = true
            }
        }
        return process.terminationStatus
    }

    private let stopping = Locked(false)

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// An HTTP exchange made with `curl`, a real client.
public struct HTTPResult: Sendable {
    /// The status of the last response.
    public var status: Int
    /// Header values by lower-case name (of the last response).
    public var headers: [String: String]
    /// The body.
    public var body: Data
    /// curl's own exit status.
    public var exitCode: Int32

    /// The body as text.
    public var text: String { String(decoding: body, as: UTF8.self) }
    /// The body parsed as JSON.
    public var json: Any? { try? JSONSerialization.jsonObject(with: body) }

    /// An exchange from its parts (an in-process client's answer, in the same shape as curl's).
    public init(status: Int, headers: [String: String], body: Data, exitCode: Int32 = 0) {
        self.status = status
        self.headers = headers
        self.body = body
        self.exitCode = exitCode
    }
}

/// Runs `curl` against a server, keeping cookies in a jar so a session persists between calls.
public struct Curl: Sendable {
    /// Where the cookies of this client live.
    public let cookieJar: String
    /// The server's base URL.
    public let base: String

    /// A client of `base` with a fresh cookie jar.
    public init(base: String) {
        self.base = base
        cookieJar = NSTemporaryDirectory() + "shelf-cookies-\(UUID().uuidString)"
    }

    /// One request: `method` on `path` (appended to `base`), with headers and an optional body.
    public func request(
        _ method: String = "GET", _ path: String, headers: [String: String] = [:], body: Data? = nil, extra: [String] = []
    ) throws -> HTTPResult {
        let directory = NSTemporaryDirectory() + "shelf-curl-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var arguments = ["-sS", "-X", method, "-b", cookieJar, "-c", cookieJar, "-D", "\(directory)/headers", "-o", "\(directory)/body", "--max-time", "120"]
        if method == "HEAD" {
            arguments = ["-sS", "-I", "-b", cookieJar, "-c", cookieJar, "-D", "\(directory)/headers", "-o", "\(directory)/body", "--max-time", "120"]
        }
        for (name, value) in headers { arguments += ["-H", "\(name): \(value)"] }
        if let body {
            try body.write(to: URL(fileURLWithPath: "\(directory)/request"))
            arguments += ["--data-binary", "@\(directory)/request"]
            if headers["Content-Type"] == nil { arguments += ["-H", "Content-Type: application/json"] }
        }
        arguments += extra
        arguments.append(path.hasPrefix("http") ? path : base + path)
        let result = try ChildProcess.run(URL(fileURLWithPath: "/usr/bin/curl"), arguments)
        let headerText = (try? String(contentsOfFile: "\(directory)/headers", encoding: .utf8)) ?? ""
        // With redirects or 100-continue there are several header blocks; the last is the answer.
        let block = headerText.components(separatedBy: "\r\n\r\n").filter { !$0.isEmpty }.last ?? ""
        var status = 0
        var parsed: [String: String] = [:]
        for (index, line) in block.components(separatedBy: "\r\n").enumerated() {
            if index == 0 {
                status = Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
            } else if let colon = line.firstIndex(of: ":") {
                let name = line[..<colon].lowercased()
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                parsed[name] = parsed[name].map { "\($0), \(value)" } ?? value
            }
        }
        let data = FileManager.default.contents(atPath: "\(directory)/body") ?? Data()
        return HTTPResult(status: status, headers: parsed, body: data, exitCode: result.status)
    }

    /// A JSON request body from a dictionary.
    public static func json(_ object: Any) -> Data { (try? JSONSerialization.data(withJSONObject: object)) ?? Data() }
}

/// A plain TCP client for what curl will not do: send broken requests, trickle bytes, stop
/// reading, or hang up in the middle of a response.
public final class RawConnection: @unchecked Sendable {
    private let socket: Int32
    private let closed = Locked(false)

    /// Connects to 127.0.0.1:`port`; `receiveBuffer` shrinks the socket's receive buffer first
    /// (so a client that stops reading backs the server up quickly).
    public init(port: UInt16, receiveBuffer: Int32? = nil) throws {
        socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw POSIXError(.EMFILE) }
        if var size = receiveBuffer { setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
        // A bound for a server that never answers: the test fails instead of hanging.
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard status == 0 else {
            // The deinit, which runs for a fully initialized object whose init throws, closes it.
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .ECONNREFUSED)
        }
    }

    /// Sends `bytes` (all of them).
    public func send(_ bytes: Data) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Foundation.send(socket, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent < 0 { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EPIPE) }
            offset += sent
        }
    }

    /// Sends `text` as UTF-8.
    public func send(_ text: String) throws { try send(Data(text.utf8)) }

    /// Reads until `done` accepts what has arrived, or the peer closes; returns it.
    public func read(until done: (Data) -> Bool = { _ in false }) -> Data {
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !done(received) {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            // Appended as one block: appending an array slice goes byte by byte, which cost the
            // benchmark's client more than the server's answer (200 ms for a 2 MB artist index).
            buffer.withUnsafeBufferPointer { received.append($0.baseAddress!, count: count) }
        }
        return received
    }

    /// Reads one whole response's head (through the blank line) and returns it with what followed.
    public func readHead() -> (head: String, rest: Data) {
        let data = read { $0.range(of: Data("\r\n\r\n".utf8)) != nil }
        guard let end = data.range(of: Data("\r\n\r\n".utf8)) else { return (String(decoding: data, as: UTF8.self), Data()) }
        return (String(decoding: data[..<end.lowerBound], as: UTF8.self), Data(data[end.upperBound...]))
    }

    /// Closes the connection; closing again (or the deinit after it) does nothing. Closing a
    /// descriptor twice is not harmless in a test process: between the two calls another test's
    /// SQLite may have been given the same number, and the second close takes its file away.
    public func close() {
        let open = closed.withLock { closed -> Bool in
            defer { closed = true }
            return !closed
        }
        if open { Foundation.close(socket) }
    }

    deinit { close() }
}

/// Runs a test body that blocks (child processes, curl, socket reads) on a thread of its own, off
/// Swift's cooperative pool: that pool has a thread per core, and a blocking test that held one
/// would starve the tests whose servers and handlers run on it.
public func offCooperativePool(_ body: @escaping @Sendable () throws -> Void) async throws {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.stackSize = 8 << 20
        thread.start()
    }
}
