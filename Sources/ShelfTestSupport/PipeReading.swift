import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension FileHandle {
    /// The bytes ready now, or the next bytes to arrive; empty at the end. POSIX `read`, retried
    /// when a signal interrupts it: Foundation's `availableData` and `readDataToEndOfFile` trap on
    /// EINTR (a `try!` inside), which a child exiting while another thread reads can cause, and
    /// which stopped a whole `make test` run.
    public func nextBytes() -> Data {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fileDescriptor, $0.baseAddress, $0.count) }
            if count > 0 { return Data(buffer[0..<count]) }
            if count < 0 && errno == EINTR { continue }
            return Data()
        }
    }

    /// Every byte to the end, read as `nextBytes` reads.
    public func allBytes() -> Data {
        var data = Data()
        while true {
            let chunk = nextBytes()
            if chunk.isEmpty { return data }
            data += chunk
        }
    }
}
