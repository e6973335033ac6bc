import Foundation
import Shelf
import ShelfCore

/// One mpv process and a connection to its JSON IPC socket: commands with request IDs, answers
/// matched to them, and events handed on.
final class MPV: @unchecked Sendable {
    // `process` and `socket` are set once at start; `pending` and `nextID` are under `lock`.
    private let process: RunningProgram
    private let socket: Int32
    private let path: String
    private let lock = NSCondition()
    private var answers: [Int: [String: Any]] = [:]
    private var nextID = 1
    private var closed = false
    private let onEndOfFile: @Sendable (Int?) -> Void

    private init(process: RunningProgram, socket: Int32, path: String, onEndOfFile: @escaping @Sendable (Int?) -> Void) {
        self.process = process
        self.socket = socket
        self.path = path
        self.onEndOfFile = onEndOfFile
    }

    var isRunning: Bool { process.isRunning && !lock.withLock { closed } }

    // The descriptor is closed here only, once nothing can use it: closing it when mpv went away
    // would let the number be reused by another connection that a late command then wrote to.
    deinit { close(socket) }

    static func start(_ settings: JukeboxSettings, onEndOfFile: @escaping @Sendable (Int?) -> Void) throws(JukeboxError) -> MPV {
        let executable: String
        do {
            executable = try ProgramRunner.locate(.mpv, path: settings.mpvPath)
        } catch {
            throw JukeboxError(message: "the jukebox plays through mpv: \(error.description)")
        }
        let socketPath = NSTemporaryDirectory() + "shelf-mpv-\(getpid())-\(UUID().uuidString.prefix(8)).sock"
        var arguments = ["--idle=yes", "--no-video", "--no-terminal", "--no-config", "--keep-open=no", "--input-ipc-server=\(socketPath)"]
        if let output = settings.audioOutput, !output.isEmpty { arguments.append("--ao=\(output)") }
        let process: RunningProgram
        do {
            process = try ProgramRunner.start(executable, arguments)
        } catch {
            throw JukeboxError(message: "could not start mpv: \(error.description)")
        }
        // mpv makes its socket as it starts: connect as soon as it is there (bounded, for a stuck mpv).
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, process.isRunning {
            let fd = Self.connect(socketPath)
            if fd >= 0 {
                let mpv = MPV(process: process, socket: fd, path: socketPath, onEndOfFile: onEndOfFile)
                Thread.detachNewThread { mpv.readLoop() }
                return mpv
            }
            usleep(20_000)
        }
        process.finish()
        throw JukeboxError(message: "mpv did not open its control socket \(socketPath) within 10 seconds")
    }

    private static func connect(_ path: String) -> Int32 {
        let fd = Foundation.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return -1 }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            return -1
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Foundation.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        if result != 0 {
            close(fd)
            return -1
        }
        return fd
    }

    /// Sends a command (an array of arguments, or a dictionary of named ones) and waits (up to
    /// 5 s) for mpv's answer; its `data`, or nil.
    @discardableResult
    func command(_ arguments: Any) throws(JukeboxError) -> Any? {
        let name = (arguments as? [Any])?.first ?? (arguments as? [String: Any])?["name"] ?? ""
        let taken = lock.withLock { () -> Int? in
            guard !closed else { return nil }
            defer { nextID += 1 }
            return nextID
        }
        guard let id = taken else { throw JukeboxError(message: "mpv's control socket closed") }
        guard let json = try? JSONSerialization.data(withJSONObject: ["command": arguments, "request_id": id]) else {
            throw JukeboxError(message: "could not encode an mpv command")
        }
        let line = json + Data("\n".utf8)
        let sent = line.withUnsafeBytes { raw -> Bool in
            var offset = 0
            while offset < raw.count {
                let n = send(socket, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if n < 0, errno == EINTR { continue }
                if n <= 0 { return false }
                offset += n
            }
            return true
        }
        guard sent else { throw JukeboxError(message: "mpv's control socket closed") }
        let deadline = Date().addingTimeInterval(5)
        lock.lock()
        defer { lock.unlock() }
        while answers[id] == nil, !closed {
            if !lock.wait(until: deadline) { throw JukeboxError(message: "mpv did not answer \(name) within 5 seconds") }
        }
        guard let answer = answers.removeValue(forKey: id) else { throw JukeboxError(message: "mpv's control socket closed") }
        let error = answer["error"] as? String ?? "success"
        guard error == "success" else { throw JukeboxError(message: "mpv refused \(name): \(error)") }
        return answer["data"]
    }

    /// A command whose failure does not matter.
    func command(_ arguments: [Any], ignoringErrors: Bool) {
        _ = try? command(arguments)
    }

    /// A property's value.
    func property(_ name: String) throws(JukeboxError) -> Any? { try command(["get_property", name]) }

    /// Asks mpv to quit, and makes sure it does.
    func quit() {
        command(["quit"], ignoringErrors: true)
        let deadline = Date().addingTimeInterval(2)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        process.finish()
        shutdown(socket, Int32(SHUT_RDWR))
        unlink(path)
    }

    private func readLoop() {
        var pending = Data()
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            pending.append(contentsOf: buffer[0..<count])
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = pending[pending.startIndex..<newline]
                pending = Data(pending[pending.index(after: newline)...])
                guard let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any] else { continue }
                if let id = object["request_id"] as? Int {
                    lock.withLock {
                        answers[id] = object
                        lock.broadcast()
                    }
                } else if object["event"] as? String == "end-file", object["reason"] as? String == "eof" {
                    onEndOfFile(object["playlist_entry_id"] as? Int)
                }
            }
        }
        lock.withLock {
            closed = true
            lock.broadcast()
        }
    }
}
