import Foundation
import Glibc
import ShelfCore

/// Why a file could not be rewritten; the original is untouched whenever this is thrown.
public struct RewriteError: ClassifiedError, Equatable {
    /// The file system refused the rewrite; the file is as it was.
    public var kind: ErrorKind { .internal }
    /// "rewriteFailed".
    public var errorCode: String { "rewriteFailed" }
    /// The file that was to be rewritten.
    public var path: String
    public var reason: String
    public var description: String { "cannot rewrite \(path): \(reason)" }
}

/// Rewrites a file so that it is either wholly the old bytes or wholly the new ones: a copy in
/// the same directory (same filesystem, so the rename is atomic) is edited, flushed to disk, given
/// the original's permissions, and renamed over the original. Any failure, or a cancellation
/// seen before the rename, removes the copy and leaves the original as it was.
enum AtomicRewrite {
    /// The temporary copy's name: hidden, unique, and with the original's extension (TagLib
    /// chooses the format by it).
    static func temporaryURL(for url: URL) -> URL {
        let ext = url.pathExtension
        let name = ".\(url.deletingPathExtension().lastPathComponent).shelf-edit-\(UUID().uuidString.prefix(8))" + (ext.isEmpty ? "" : ".\(ext)")
        return url.deletingLastPathComponent().appendingPathComponent(name)
    }

    /// Copies `url`, lets `edit` change the copy, and renames it into place unless `cancelled`
    /// says stop; returns the new file's size and modification date.
    static func rewrite(_ link: URL, cancelled: () -> Bool, edit: (URL) throws -> Void) throws -> (size: Int64, modified: Date) {
        // A write over a file size limit must fail with EFBIG, not kill the process.
        signal(SIGXFSZ, SIG_IGN)
        // A symlinked file is rewritten where it really is, so the link stays a link.
        let url = link.resolvingSymlinksInPath()
        var original = stat()
        guard stat(url.path, &original) == 0 else { throw RewriteError(path: url.path, reason: String(cString: strerror(errno))) }
        let temporary = temporaryURL(for: url)
        var renamed = false
        defer { if !renamed { unlink(temporary.path) } }
        try copy(url.path, to: temporary.path, mode: original.st_mode & 0o7777, owner: (original.st_uid, original.st_gid))
        try edit(temporary)
        try flush(temporary.path)
        if cancelled() { throw CancellationError() }
        guard rename(temporary.path, url.path) == 0 else {
            throw RewriteError(path: url.path, reason: "rename failed: \(String(cString: strerror(errno)))")
        }
        renamed = true
        try? flush(url.deletingLastPathComponent().path)
        var updated = stat()
        _ = stat(url.path, &updated)
        return (Int64(updated.st_size), Date(timeIntervalSince1970: Double(updated.st_mtim.tv_sec) + Double(updated.st_mtim.tv_nsec) / 1e9))
    }

    /// Copies bytes into a new file created with `mode`; a short write (a full disk, a size
    /// limit) is an error.
    private static func copy(_ source: String, to destination: String, mode: mode_t, owner: (uid_t, gid_t)) throws {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw RewriteError(path: source, reason: String(cString: strerror(errno))) }
        defer { close(input) }
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard output >= 0 else { throw RewriteError(path: source, reason: "cannot create a copy beside it: \(String(cString: strerror(errno)))") }
        defer { close(output) }
        // The owner too, where allowed (root editing a user's file must not take it over).
        _ = fchown(output, owner.0, owner.1)
        fchmod(output, mode)
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0 { throw RewriteError(path: source, reason: String(cString: strerror(errno))) }
            if count == 0 { break }
            var written = 0
            while written < count {
                let n = buffer.withUnsafeBytes { write(output, $0.baseAddress! + written, count - written) }
                guard n > 0 else { throw RewriteError(path: source, reason: "copy failed: \(String(cString: strerror(errno)))") }
                written += n
            }
        }
    }

    /// fsync of a file or directory.
    private static func flush(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw RewriteError(path: path, reason: String(cString: strerror(errno))) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw RewriteError(path: path, reason: "flush failed: \(String(cString: strerror(errno)))") }
    }
}
