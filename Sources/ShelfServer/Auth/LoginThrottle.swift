import Foundation
import Shelf
import ShelfCore

/// Failed sign-ins per client address: at most `limit` in a sliding `window`; beyond that the
/// address gets 429 until the oldest failure ages out, so passwords cannot be guessed quickly.
public final class LoginThrottle: Sendable {
    /// Failures allowed per window.
    public let limit: Int
    /// The window.
    public let window: TimeInterval
    private let failures = Locked<[String: [Date]]>([:])

    /// A throttle allowing `limit` failures per `window` seconds per address.
    public init(limit: Int = 10, window: TimeInterval = 60) {
        self.limit = limit
        self.window = window
    }

    /// Throws 429 (with `Retry-After`) when `address` used up its failures.
    public func check(_ address: String, now: Date = Date()) throws(HTTPError) {
        let retryAfter = failures.withLock { failures -> Int? in
            let recent = (failures[address] ?? []).filter { now.timeIntervalSince($0) < window }
            failures[address] = recent.isEmpty ? nil : recent
            guard recent.count >= limit, let oldest = recent.first else { return nil }
            return max(1, Int((window - now.timeIntervalSince(oldest)).rounded(.up)))
        }
        if let retryAfter {
            throw HTTPError(
                status: 429, code: "tooManyAttempts", message: "too many failed sign-ins from \(address); try again in \(retryAfter) s",
                headers: [("Retry-After", "\(retryAfter)")])
        }
    }

    /// Counts one failure for `address`.
    public func fail(_ address: String, now: Date = Date()) {
        failures.withLock { failures in
            var recent = (failures[address] ?? []).filter { now.timeIntervalSince($0) < window }
            recent.append(now)
            failures[address] = recent
        }
    }
}
