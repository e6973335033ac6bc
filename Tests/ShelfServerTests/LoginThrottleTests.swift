import Foundation
import ShelfCore
import ShelfServer
import ShelfTestSupport
import Testing

/// The sign-in throttle counts attempts atomically: a burst of wrong passwords sent at once has
/// exactly the limit checked (it had eleven of twenty), while right ones in parallel all pass.
@Suite struct LoginThrottleTests {
    @Test func attemptsInFlightCountTowardTheLimit() async throws {
        let throttle = LoginThrottle(limit: 10, window: 600)
        let checked = Locked(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    guard let attempt = try? await throttle.admit("192.0.2.1") else { return }
                    checked.withLock { $0 += 1 }
                    // The check takes a while (a password hash, a directory bind): others arrive meanwhile.
                    await Task.yield()
                    throttle.end(attempt, failed: true)
                }
            }
        }
        #expect(checked.withLock { $0 } == 10)
        do {
            _ = try await throttle.admit("192.0.2.1")
            Issue.record("the eleventh attempt was admitted")
        } catch {
            #expect(error.status == 429 && error.headers.contains { $0.0 == "Retry-After" })
        }
        // Right credentials, twenty at once from another address: each waits its turn, none is refused.
        let admitted = Locked(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    guard let attempt = try? await throttle.admit("192.0.2.2") else { return }
                    admitted.withLock { $0 += 1 }
                    await Task.yield()
                    throttle.end(attempt, failed: false)
                }
            }
        }
        #expect(admitted.withLock { $0 } == 20)
    }
}
