import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Reading a whole file of outside input (a playlist, a sheet, lyrics, a config file) with POSIX
/// calls. Foundation's `FileManager.contents(atPath:)` leaks a 4 KiB buffer for every empty file
/// (found by the m3u fuzz target's leak checker), and blocks on a FIFO.
public enum FileContents {
    /// The bytes of the regular file at `path`; nil when it cannot be opened or is no regular file.
    public static func read(_ path: String) -> Data? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        var data = Data(capacity: max(0, Int(info.st_size)))
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { return data }
            data.append(contentsOf: buffer[0..<count])
        }
    }
}
