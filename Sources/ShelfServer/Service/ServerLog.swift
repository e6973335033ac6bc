import Foundation
import ShelfCore

/// The server's log: one line per event, on stderr or in a file, as plain text or one JSON
/// object a line. Lines are written whole with one `write(2)` under a lock, so they never
/// interleave; there are no colours or other control sequences in either format, so a service
/// manager's journal or a file reads clean. `reconfigure` switches format and reopens the file
/// (after a log rotation, on SIGHUP).
public final class ServerLog: Sendable {
    /// How lines are written.
    public enum Format: String, Sendable, CaseIterable {
        /// `GET /api/tracks 200 1234 B 0.8 ms 127.0.0.1`, `shelf: serving …`.
        case text
        /// `{"time":…,"method":"GET","target":…,"status":200,"bytes":1234,"ms":0.8,"address":…}`,
        /// `{"time":…,"level":"info","message":"serving …"}`.
        case json
    }

    private struct State {
        var format: Format
        var descriptor: Int32 = STDERR_FILENO
        var path: String?
    }

    private let state: Locked<State>

    /// A log in `format`, appending to `file` (created 0640 if need be) or on stderr when nil.
    public init(format: Format = .text, file: String? = nil) throws {
        state = Locked(State(format: format))
        try reconfigure(format: format, file: file)
    }

    deinit {
        state.withLock { state in if state.path != nil { close(state.descriptor) } }
    }

    /// The format lines are written in now.
    public var format: Format { state.withLock { $0.format } }

    /// The file written to, nil for stderr.
    public var file: String? { state.withLock { $0.path } }

    /// Switches to `format` and (re)opens `file` (stderr when nil); on a failure to open, the log
    /// stays where it was and the error says why.
    public func reconfigure(format: Format, file: String?) throws {
        var descriptor = STDERR_FILENO
        if let file {
            descriptor = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o640)
            guard descriptor >= 0 else {
                throw CocoaError(
                    .fileWriteNoPermission, userInfo: [NSLocalizedDescriptionKey: "cannot open the log file '\(file)': \(String(cString: strerror(errno)))"])
            }
        }
        let old = state.withLock { state -> Int32? in
            defer { state = State(format: format, descriptor: descriptor, path: file) }
            return state.path != nil ? state.descriptor : nil
        }
        if let old { close(old) }
    }

    /// An event: plain in text (`shelf: ` is the text form's prefix), `{"level","message"}` in JSON.
    public func message(_ text: String, level: String = "info") {
        let format = self.format
        switch format {
        case .text: write(text)
        case .json:
            let message = text.hasPrefix("shelf: ") ? String(text.dropFirst(7)) : text
            // The message comes last so that a reader looking for `…:PORT` at its end finds it.
            write("{\"time\":\(JSONText.quoted(Self.now())),\"level\":\(JSONText.quoted(level)),\"message\":\(JSONText.quoted(message))}")
        }
    }

    /// One finished request.
    public func request(_ entry: AccessLogEntry) {
        switch format {
        case .text: write(entry.line)
        case .json:
            let ms = (entry.milliseconds * 1000).rounded() / 1000
            write(
                "{\"time\":\(JSONText.quoted(Self.now())),\"method\":\(JSONText.quoted(entry.method)),\"target\":\(JSONText.quoted(AccessLogEntry.redact(entry.target))),"
                    + "\"status\":\(entry.status),\"bytes\":\(entry.bytes),\"ms\":\(ms),\"address\":\(JSONText.quoted(entry.remoteAddress))}")
        }
    }

    private func write(_ line: String) {
        var bytes = Array((line + "\n").utf8)
        state.withLock { state in
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeMutableBytes { Glibc.write(state.descriptor, $0.baseAddress! + offset, $0.count - offset) }
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { return }  // a log that cannot be written must not stop the server
                offset += written
            }
        }
    }

    /// Now in UTC, to the millisecond: `2026-12-01T11:52:03.123Z`.
    static func now() -> String {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        var seconds = spec.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
            Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), Int(spec.tv_nsec / 1_000_000))
    }
}
