import Foundation
import Shelf
import ShelfCore

/// Failed sign-ins per client address: at most `limit` in a sliding `window`; beyond that the
/// address gets 429 until the oldest failure ages out, so passwords cannot be guessed quickly.
///
/// Attempts are admitted, not only checked: an address's failures plus its attempts still being
/// verified never exceed `limit`, so twenty wrong passwords sent at once have exactly ten checked
/// (checking and counting apart let eleven through). Attempts past that wait for the ones in
/// flight to end: an app's parallel requests, all right, go on a moment later; a burst of wrong
/// ones finds the limit reached.
public final class LoginThrottle: Sendable {
    /// Failures allowed per window.
    public let limit: Int
    /// The window.
    public let window: TimeInterval

    private struct Address {
        var failures: [Date] = []
        var inFlight = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
        var isIdle: Bool { failures.isEmpty && inFlight == 0 && waiting.isEmpty }
    }

    private let addresses = Locked<[String: Address]>([:])

    /// A throttle allowing `limit` failures per `window` seconds per address.
    public init(limit: Int = 10, window: TimeInterval = 60) {
        self.limit = limit
        self.window = window
    }

    /// An attempt `admit` let through; `end` it once its credentials are judged, whatever happens.
    public struct Attempt: Sendable {
        let address: String
    }

    private enum Decision {
        case admitted
        case refused(Int)
        case wait
    }

    /// Admits one sign-in attempt from `address`, waiting while its failures and the attempts in
    /// flight reach the limit; throws 429 (with `Retry-After`) when its failures alone do.
    public func admit(_ address: String) async throws(HTTPError) -> Attempt {
        while true {
            var decision = Decision.wait
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = Date()
                let decided = addresses.withLock { addresses -> Bool in
                    var entry = addresses[address] ?? Address()
                    defer { addresses[address] = entry.isIdle ? nil : entry }
                    entry.failures.removeAll { now.timeIntervalSince($0) >= window }
                    if entry.failures.count >= limit, let oldest = entry.failures.first {
                        decision = .refused(max(1, Int((window - now.timeIntervalSince(oldest)).rounded(.up))))
                        return true
                    }
                    if entry.failures.count + entry.inFlight < limit {
                        entry.inFlight += 1
                        decision = .admitted
                        return true
                    }
                    // Some attempt is in flight (failures alone are under the limit): its end wakes this one.
                    entry.waiting.append(continuation)
                    return false
                }
                if decided { continuation.resume() }
            }
            switch decision {
            case .admitted: return Attempt(address: address)
            case .refused(let retryAfter):
                throw HTTPError(
                    status: 429, code: "tooManyAttempts", message: "too many failed sign-ins from \(address); try again in \(retryAfter) s",
                    headers: [("Retry-After", "\(retryAfter)")])
            case .wait: continue
            }
        }
    }

    /// Ends an admitted attempt, counting a failure when its credentials were wrong, and lets the
    /// attempts waiting behind it decide again.
    public func end(_ attempt: Attempt, failed: Bool, now: Date = Date()) {
        let waiting = addresses.withLock { addresses -> [CheckedContinuation<Void, Never>] in
            var entry = addresses[attempt.address] ?? Address()
            entry.inFlight = max(0, entry.inFlight - 1)
            if failed { entry.failures.append(now) }
            let waiting = entry.waiting
            entry.waiting = []
            addresses[attempt.address] = entry.isIdle ? nil : entry
            return waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Thrown by a credential check for credentials that are wrong in a way worth its own answer.
    public struct WrongCredentials: Error {
        /// The error to answer with.
        public let error: any Error
    }

    /// A credential check from `address`, admitted and ended here: a failure when it found no
    /// user or threw `WrongCredentials`, none when it threw for another reason (a missing
    /// parameter, the directory down). Throws 429 when the address used up its failures.
    public func judge(_ address: String, _ check: () async throws -> User?) async throws -> User? {
        let attempt = try await admit(address)
        do {
            let user = try await check()
            end(attempt, failed: user == nil)
            return user
        } catch let wrong as WrongCredentials {
            end(attempt, failed: true)
            throw wrong.error
        } catch {
            end(attempt, failed: false)
            throw error
        }
    }
}
