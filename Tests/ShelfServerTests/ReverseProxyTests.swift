import Foundation
import ShelfTestSupport
import Testing

/// `shelf serve` behind the reverse proxies self-hosters use, from Debian, started by
/// `proxy_test.py` on loopback with their own temporary configuration: nginx at the root (with and
/// without upstream keep-alive, and signing people in itself with `auth_basic`), nginx at `/music/`
/// and Caddy's `handle_path /music/*`, and the page in Chromium through the sub-path. Skipped with
/// the reason where nginx or Python is missing (`make deps-test` installs them).
@Suite struct ReverseProxyTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func python() -> URL? {
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx") else {
            print("ReverseProxyTests: nginx is not installed (make deps-test installs nginx and caddy); skipped")
            return nil
        }
        let venv = repository.appendingPathComponent(".venv/bin/python")
        return FileManager.default.isExecutableFile(atPath: venv.path) ? venv : URL(fileURLWithPath: "/usr/bin/python3")
    }

    /// Runs proxy_test.py in `mode` against `server`; every line it prints is checked by the caller.
    static func run(_ mode: String, python: URL, server: ServerProcess, work: URL, web: [String] = []) throws -> ProcessResult {
        let script = repository.appendingPathComponent("Tests/proxy_test.py")
        let arguments = [script.path, mode, "\(server.port)", "ann", ServedLibrary.annPassword, work.path] + web
        return try ChildProcess.run(python, arguments, environment: ["SE_AVOID_STATS": "true", "SE_OFFLINE": "true"])
    }

    @Test func behindNginxAtTheRootAndItsSignIn() async throws {
        try await offCooperativePool {
            guard let python = Self.python() else { return }
            let fixture = try ServedLibrary()
            defer { fixture.remove() }
            let server = try ServerProcess(
                library: fixture.library,
                arguments: [
                    "--trusted-proxies", "127.0.0.1", "--auth-header", "Remote-User", "--auth-header-create-users", "--auth-header-admin-group",
                    "admins",
                ])
            defer { server.stop() }
            let result = try Self.run("root", python: python, server: server, work: fixture.root)
            print(result.stdout)
            #expect(result.status == 0, "\(result.stdout)\n\(result.stderr.suffix(3000))")
            for check in [
                "nginx: 200 clients, each from its own address, none refused", "nginx with keep-alive: 200 clients, each from its own address, none refused",
                "nginx: events arrive", "nginx with keep-alive: an OpenSubsonic client syncs",
                "nginx: the sign-in throttle locks out one client, not the next", "nginx: requests in flight are limited per client",
                "direct: forged forwarding and sign-in headers are ignored", "nginx auth_basic: the proxy's user is signed in and made",
            ] {
                #expect(result.stdout.contains("ok   \(check)"), "\(check)")
            }
            // The log names the people behind the proxy, not the proxy.
            let log = server.log
            #expect(log.contains { $0.hasSuffix(" 127.0.1.7") }, "no request line from 127.0.1.7")
            #expect(log.contains { $0.contains("POST /api/session 429") && $0.hasSuffix(" 127.0.2.1") })
            #expect(log.contains { $0.contains("created user carol (admin") })
            #expect(!log.contains { $0.hasSuffix(" 203.0.113.66") }, "a forged X-Forwarded-For was believed")
        }
    }

    @Test func atASubPathBehindNginxAndCaddy() async throws {
        try await offCooperativePool {
            guard let python = Self.python() else { return }
            // Three seconds a track, so the page is seen to play.
            let fixture = try ServedLibrary(tracks: 8, seconds: 3)
            defer { fixture.remove() }
            let library = fixture.library
            let shelf = ServedLibrary.shelfBinary()
            let server = try ServerProcess(library: library, arguments: ["--trusted-proxies", "127.0.0.1", "--base-path", "/music"])
            defer { server.stop() }
            var web: [String] = []
            if let browser = WebPageTests.browserPython() {
                web = [
                    browser.path, Self.repository.appendingPathComponent("Tests/web_page_test.py").path, "ann", ServedLibrary.annPassword, library, shelf.path,
                    WebPageTests.artifacts.path,
                ]
            }
            let result = try Self.run("subpath", python: python, server: server, work: fixture.root, web: web)
            print(result.stdout)
            #expect(result.status == 0, "\(result.stdout)\n\(result.stderr.suffix(3000))")
            for check in [
                "nginx at /music/: the page, sign-in, cookie and links under the base", "nginx at /music/: events arrive",
                "nginx at /music/: a stream and a range", "caddy handle_path /music/*: the page, sign-in, cookie and links under the base",
                "caddy handle_path /music/*: events arrive", "caddy handle_path /music/*: an OpenSubsonic client syncs",
            ] {
                #expect(result.stdout.contains("ok   \(check)"), "\(check)")
            }
            if !web.isEmpty {
                for check in ["the first rows through the proxy", "play a track through the proxy", "the service worker under the base path"] {
                    #expect(result.stdout.contains("ok   \(check)"), "\(check)")
                }
            }
        }
    }
}
