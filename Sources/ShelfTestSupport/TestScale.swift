import Foundation

/// How much of a large test matrix to run. `make test` must finish in ten minutes on two cores,
/// and under a sanitizer (`make tsan` sets `SHELF_SANITIZER`) everything runs ten to twenty times
/// slower; so the long parity tests keep every shape of their work but run fewer repetitions of
/// it there. `make test-full` (`SHELF_TEST_FULL=1`) runs every element and every round.
public enum TestScale {
    /// Whether the suite runs under a sanitizer.
    public static let sanitized = ProcessInfo.processInfo.environment["SHELF_SANITIZER"] != nil
    /// Whether the long matrices run whole (`make test-full`), which a sanitizer overrides.
    public static let full = ProcessInfo.processInfo.environment["SHELF_TEST_FULL"] != nil
    /// Whether the long matrices are sampled: always under a sanitizer, else unless `full`.
    public static var reduced: Bool { sanitized || !full }

    /// `all` in `make test-full`; otherwise every `stride`-th element (the first always kept).
    public static func sample<T>(_ all: [T], stride: Int) -> [T] {
        reduced ? all.enumerated().filter { $0.offset % max(1, stride) == 0 }.map(\.element) : all
    }

    /// `count` in `make test-full`; otherwise `reduced`.
    public static func rounds(_ count: Int, sanitized reduced: Int) -> Int { Self.reduced ? min(count, reduced) : count }
}
