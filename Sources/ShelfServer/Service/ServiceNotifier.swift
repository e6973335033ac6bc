import Foundation

/// Tells systemd how the service is doing (`sd_notify`'s protocol, without libsystemd): each
/// state is one datagram of `KEY=VALUE` lines sent to the unix socket named in `NOTIFY_SOCKET`,
/// a path, or an abstract name when it starts with `@`. Without `NOTIFY_SOCKET` (not run by
/// systemd as `Type=notify`) it does nothing.
public struct ServiceNotifier: Sendable {
    /// The socket named by the environment; nil when there is none.
    public let socket: String?

    /// A notifier for the socket `environment` names.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let name = environment["NOTIFY_SOCKET"] ?? ""
        socket = name.hasPrefix("/") || (name.hasPrefix("@") && name.count > 1) ? name : nil
    }

    /// Sends `state` (`READY=1`, `STOPPING=1`, `STATUS=…`, lines joined by newlines); returns
    /// whether it was sent. A failure is not an error: the service works without its manager knowing.
    @discardableResult
    public func notify(_ state: String) -> Bool {
        guard let socket else { return false }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(socket.utf8)
        // An abstract name starts with a NUL byte in place of the '@' and is not NUL-terminated.
        if path.first == UInt8(ascii: "@") { path[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.count < capacity else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { bytes in
            for (index, byte) in path.enumerated() { bytes[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + path.count + (path[0] == 0 ? 0 : 1))
        let descriptor = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        let message = Array(state.utf8)
        let sent = message.withUnsafeBytes { body in
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(descriptor, body.baseAddress, body.count, Int32(MSG_NOSIGNAL), $0, length) }
            }
        }
        return sent == message.count
    }

    /// `MONOTONIC_USEC=…`, which systemd wants with `RELOADING=1`.
    public static func monotonicMicroseconds() -> String {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return "MONOTONIC_USEC=\(UInt64(spec.tv_sec) * 1_000_000 + UInt64(spec.tv_nsec) / 1000)"
    }
}
