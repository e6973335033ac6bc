import Foundation
import ShelfCore

/// Named points in the write path where a crash test can halt the process: with
/// `SHELF_CRASH_POINT=NAME@N` the process prints `crash-point NAME N` on stderr and stops itself
/// (SIGSTOP) the Nth time it reaches NAME, so a SIGKILL sent on reading that line lands exactly
/// there on any machine. Without the variable each check is one comparison of a cached nil.
enum CrashPoint {
    /// After a write batch's rows and change log are written, before its COMMIT.
    static let beforeCommit = "before-commit"
    /// After the store's COMMIT, before the mirror commits the same batch.
    static let beforeMirrorCommit = "before-mirror-commit"

    private static let wanted: (name: String, count: Int)? = {
        guard let text = ProcessInfo.processInfo.environment["SHELF_CRASH_POINT"], !text.isEmpty else { return nil }
        guard let at = text.lastIndex(of: "@"), let count = Int(text[text.index(after: at)...]) else { return (text, 1) }
        return (String(text[..<at]), count)
    }()
    /// With `SHELF_CRASH_ARM=FILE`, counting starts only once FILE exists: a server's own writes
    /// at start and sign-in are not counted, the test's request is.
    private static let armFile = ProcessInfo.processInfo.environment["SHELF_CRASH_ARM"].flatMap { $0.isEmpty ? nil : $0 }
    private static let seen = Locked<[String: Int]>([:])

    /// Halts the process here when this is the point and the time the environment names.
    static func reached(_ name: String) {
        guard let wanted, wanted.name == name else { return }
        if let armFile, access(armFile, F_OK) != 0 { return }
        let count = seen.withLock { seen in
            seen[name, default: 0] += 1
            return seen[name]!
        }
        guard count == wanted.count else { return }
        FileHandle.standardError.write(Data("crash-point \(name) \(count)\n".utf8))
        raise(SIGSTOP)
    }
}
