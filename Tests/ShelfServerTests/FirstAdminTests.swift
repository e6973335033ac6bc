import Foundation
import ShelfTestSupport
import Testing

/// A new library's first admin, the way a container gets one: `admin-user` with
/// `admin-password-file` (SHELF_ADMIN_USER, SHELF_ADMIN_PASSWORD_FILE) on the first start, or a
/// server that starts anyway (`start-without-users`) and logs the command that makes one.
@Suite struct FirstAdminTests {
    @Test func theVariablesMakeTheFirstAdminOnce() async throws {
        try await offCooperativePool {
            let root = try TemporaryDirectory()
            let secret = root.path("secret").path
            try "boss's secret\nignored second line\n".write(toFile: secret, atomically: true, encoding: .utf8)
            let environment = ["SHELF_ADMIN_USER": "boss", "SHELF_ADMIN_PASSWORD_FILE": secret]
            let server = try ServerProcess(library: root.path("library").path, environment: environment)
            #expect(server.log.contains { $0.contains("made the first user, boss (the owner and an admin)") })
            let client = Curl(base: server.base)
            let signedIn = try client.request("POST", "/api/session", body: Curl.json(["name": "boss", "password": "boss's secret"]))
            #expect(signedIn.status == 200 && ((signedIn.json as? [String: Any])?["user"] as? [String: Any])?["admin"] as? Bool == true)
            server.stop()
            // Once there is a user the variables change nothing (a new password in the file is not taken).
            try "another\n".write(toFile: secret, atomically: true, encoding: .utf8)
            let again = try ServerProcess(library: root.path("library").path, environment: environment)
            defer { again.stop() }
            #expect(!again.log.contains { $0.contains("made the first user") })
            #expect(try Curl(base: again.base).request("POST", "/api/session", body: Curl.json(["name": "boss", "password": "boss's secret"])).status == 200)
        }
    }

    @Test func withoutThemTheServerStartsAndSaysHowToMakeOne() async throws {
        try await offCooperativePool {
            let root = try TemporaryDirectory()
            let server = try ServerProcess(library: root.path("library").path, environment: ["SHELF_START_WITHOUT_USERS": "true"])
            defer { server.stop() }
            #expect(server.log.contains { $0.contains("no users yet") && $0.contains("podman exec -it CONTAINER shelf user add NAME --admin") })
            #expect(try Curl(base: server.base).request("GET", "/api/me").status == 401)
        }
    }

    @Test func anEmptyPasswordFileStopsServeNamingIt() async throws {
        try await offCooperativePool {
            let root = try TemporaryDirectory()
            let secret = root.path("empty").path
            try "\n".write(toFile: secret, atomically: true, encoding: .utf8)
            let result = try ChildProcess.run(
                ChildProcess.productsDirectory().appendingPathComponent("shelf"),
                ["--library", root.path("library").path, "serve", "--listen", "127.0.0.1:0", "--admin-user", "boss", "--admin-password-file", secret])
            #expect(result.status == 2 && result.stderr.contains("the first line of '\(secret)' is empty"), "\(result.status) \(result.stderr)")
            // One without the other is a mistake, said at once.
            let half = try ChildProcess.run(
                ChildProcess.productsDirectory().appendingPathComponent("shelf"),
                ["--library", root.path("library").path, "serve", "--listen", "127.0.0.1:0", "--admin-user", "boss"])
            #expect(half.status == 1 && half.stderr.contains("admin-user and admin-password-file go together"), "\(half.status) \(half.stderr)")
        }
    }
}
