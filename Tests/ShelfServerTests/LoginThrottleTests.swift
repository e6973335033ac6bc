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

    /// Twenty wrong passwords in parallel over real connections (curl --parallel): ten answered
    /// "wrong", ten refused with 429, and the right password from another client still works.
    @Test func twentyWrongPasswordsAtOnceOverHTTP() async throws {
        try await offCooperativePool {
            let fixture = try ServedLibrary(tracks: 1)
            defer { fixture.remove() }
            let server = try ServerProcess(library: fixture.library)
            defer { server.stop() }
            let url = "\(server.base)/rest/ping?u=ann&p=guess&v=1.16.1&c=burst&f=json"
            let burst = try ChildProcess.run(
                URL(fileURLWithPath: "/usr/bin/curl"),
                ["-s", "--parallel", "--parallel-immediate", "--parallel-max", "20", "-w", "%{http_code}\n"]
                    + Array(repeating: ["-o", "/dev/null", url], count: 20).flatMap { $0 })
            let codes = burst.stdout.split(separator: "\n").map(String.init)
            #expect(codes.count == 20, "\(burst.stdout) \(burst.stderr)")
            #expect(codes.filter { $0 == "200" }.count == 10, "\(codes)")
            #expect(codes.filter { $0 == "429" }.count == 10, "\(codes)")
        }
    }
}
