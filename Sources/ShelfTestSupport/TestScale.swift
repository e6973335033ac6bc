import Foundation

/// How much of a large test matrix to run. Under a sanitizer (`make tsan` sets `SHELF_SANITIZER`)
/// everything runs ten to twenty times slower on one core, and what the sanitizer looks for is
/// concurrent access, not the combinatorics of sort fields and random rounds; so the long parity
/// tests keep every shape of their work but run fewer repetitions of it there.
public enum TestScale {
    /// Whether the suite runs under a sanitizer.
    public static let sanitized = ProcessInfo.processInfo.environment["SHELF_SANITIZER"] != nil

    /// `all` normally; under a sanitizer every `stride`-th element (the first always kept).
    public static func sample<T>(_ all: [T], stride: Int) -> [T] {
        sanitized ? all.enumerated().filter { $0.offset % max(1, stride) == 0 }.map(\.element) : all
    }

    /// `count` normally; under a sanitizer `reduced`.
    public static func rounds(_ count: Int, sanitized reduced: Int) -> Int { sanitized ? min(count, reduced) : count }
}
