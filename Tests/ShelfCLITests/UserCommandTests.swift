import Foundation
import Shelf
import ShelfDatabase
import ShelfTestSupport
import Testing

/// `shelf user` end to end: each subcommand's JSON, its exit codes, and what lands in the store.
@Suite struct UserCommandTests {
    let products = ChildProcess.productsDirectory()

    func shelf(_ dir: TemporaryDirectory, _ arguments: [String], stdin: String? = nil) throws -> ProcessResult {
        try ChildProcess.run(
            products.appendingPathComponent("shelf"), ["--library", dir.url.path, "--json"] + arguments, stdin: stdin.map { Data($0.utf8) })
    }

    func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    func errorCode(_ result: ProcessResult) throws -> String? {
        (try json(result.stdout)["error"] as? [String: Any])?["code"] as? String
    }

    @Test func addPrintsTheUserAndTheFirstIsOwnerAndAdmin() async throws {
        let dir = try TemporaryDirectory()
        let added = try shelf(dir, ["user", "add", "ann", "--password-stdin"], stdin: "secret one\n")
        #expect(added.status == 0, "\(added.stderr)")
        let user = try #require(try json(added.stdout)["user"] as? [String: Any])
        #expect(Set(user.keys) == ["id", "name", "admin", "owner", "created", "email", "roles", "maxBitRate"])
        #expect(user["id"] as? Int == 1 && user["name"] as? String == "ann")
        #expect(user["admin"] as? Bool == true && user["owner"] as? Bool == true)
        #expect((user["created"] as? String).flatMap(ISO8601DateFormatter().date(from:)) != nil)

        let bob = try json(try shelf(dir, ["user", "add", "bob", "--password-stdin"], stdin: "pw\n").stdout)["user"] as? [String: Any]
        #expect(bob?["admin"] as? Bool == false && bob?["owner"] as? Bool == false)
        let carol = try json(try shelf(dir, ["user", "add", "carol", "--admin", "--password-stdin"], stdin: "pw").stdout)["user"] as? [String: Any]
        #expect(carol?["admin"] as? Bool == true && carol?["owner"] as? Bool == false)

        // Only the trailing newline is stripped: the spaces are part of the password.
        let library = Library(directory: dir.url)
        #expect(try await library.authenticate(name: "ann", password: "secret one")?.name == "ann")
        #expect(try await library.authenticate(name: "carol", password: "pw")?.name == "carol")

        let again = try shelf(dir, ["user", "add", "ANN", "--password-stdin"], stdin: "x\n")
        #expect(again.status == 2)
        #expect(try errorCode(again) == "userExists")
        #expect(again.stderr.hasPrefix("shelf: a user named 'ann' already exists"))
        let empty = try shelf(dir, ["user", "add", "dave", "--password-stdin"], stdin: "\n")
        #expect(empty.status == 2)
        #expect(try errorCode(empty) == "invalidPassword")
        let badName = try shelf(dir, ["user", "add", " dave", "--password-stdin"], stdin: "pw\n")
        #expect(badName.status == 2)
        #expect(try errorCode(badName) == "invalidUserName")
    }

    @Test func withoutATerminalOrPasswordStdinItIsAUsageError() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            // setsid: no controlling terminal, as under cron or a service manager (--wait: its status).
            let result = try ChildProcess.run(
                URL(fileURLWithPath: "/usr/bin/setsid"),
                ["--wait", products.appendingPathComponent("shelf").path, "--library", dir.url.path, "--json", "user", "add", "ann"])
            #expect(result.status == 1, "\(result.stderr)")
            #expect(try errorCode(result) == "usage")
            #expect(result.stderr.contains("--password-stdin"))
            #expect(try json(try shelf(dir, ["user", "list"]).stdout)["users"] as? [Any] != nil)
            #expect((try json(try shelf(dir, ["user", "list"]).stdout)["users"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func listShowsUsersWithTheirKeys() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            _ = try shelf(dir, ["user", "add", "ann", "--password-stdin"], stdin: "pw\n")
            _ = try shelf(dir, ["user", "add", "bob", "--password-stdin"], stdin: "pw\n")
            let created = try json(try shelf(dir, ["user", "key", "bob"]).stdout)
            let listed = try shelf(dir, ["user", "list"])
            #expect(listed.status == 0, "\(listed.stderr)")
            let users = try #require(try json(listed.stdout)["users"] as? [[String: Any]])
            #expect(users.map { $0["name"] as? String } == ["ann", "bob"])
            #expect(Set(users[1].keys) == ["id", "name", "admin", "owner", "created", "email", "roles", "maxBitRate", "keys", "libraries"])
            #expect(users.allSatisfy { $0["libraries"] as? String == "all" })
            #expect((users[0]["keys"] as? [Any])?.isEmpty == true)
            let keys = try #require(users[1]["keys"] as? [[String: Any]])
            #expect(keys.count == 1)
            #expect(Set(keys[0].keys) == ["id", "created", "lastUsed"])
            #expect(keys[0]["id"] as? String == created["id"] as? String)
            #expect(keys[0]["lastUsed"] is NSNull)
            #expect(!listed.stdout.contains(created["key"] as? String ?? "?"))

            let text = try ChildProcess.run(products.appendingPathComponent("shelf"), ["--library", dir.url.path, "user", "list"])
            #expect(text.status == 0)
            #expect(text.stdout.hasPrefix("ID\tNAME\tROLE\tKEYS\tLIBRARIES\tCREATED\n1\tann\towner\t0\tall\t"))
            #expect(text.stdout.contains("\n2\tbob\tuser\t1\tall\t"))
        }
    }

    @Test func passwdChangesThePassword() async throws {
        let dir = try TemporaryDirectory()
        _ = try shelf(dir, ["user", "add", "ann", "--password-stdin"], stdin: "old\n")
        let changed = try shelf(dir, ["user", "passwd", "Ann", "--password-stdin"], stdin: "new\nignored\n")
        #expect(changed.status == 0, "\(changed.stderr)")
        let user = try #require(try json(changed.stdout)["user"] as? [String: Any])
        #expect(user["name"] as? String == "ann" && user["id"] as? Int == 1)
        let library = Library(directory: dir.url)
        #expect(try await library.authenticate(name: "ann", password: "new") != nil)
        #expect(try await library.authenticate(name: "ann", password: "old") == nil)
        let missing = try shelf(dir, ["user", "passwd", "zed", "--password-stdin"], stdin: "pw\n")
        #expect(missing.status == 2)
        #expect(try errorCode(missing) == "userNotFound")
    }

    @Test func deleteRemovesAUserButNotTheLastAdmin() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            _ = try shelf(dir, ["user", "add", "ann", "--password-stdin"], stdin: "pw\n")
            _ = try shelf(dir, ["user", "add", "bob", "--password-stdin"], stdin: "pw\n")
            let deleted = try shelf(dir, ["user", "delete", "bob"])
            #expect(deleted.status == 0, "\(deleted.stderr)")
            #expect(try json(deleted.stdout)["deleted"] as? String == "bob")
            let last = try shelf(dir, ["user", "delete", "ann"])
            #expect(last.status == 2)
            #expect(try errorCode(last) == "lastAdmin")
            let gone = try shelf(dir, ["user", "delete", "bob"])
            #expect(gone.status == 2)
            #expect(try errorCode(gone) == "userNotFound")
            #expect((try json(try shelf(dir, ["user", "list"]).stdout)["users"] as? [[String: Any]])?.count == 1)
        }
    }

    @Test func keyIsShownOnceStoredAsAHashAndRevoked() async throws {
        let dir = try TemporaryDirectory()
        _ = try shelf(dir, ["user", "add", "ann", "--password-stdin"], stdin: "pw\n")
        _ = try shelf(dir, ["user", "add", "bob", "--password-stdin"], stdin: "pw\n")
        let made = try shelf(dir, ["user", "key", "ann"])
        #expect(made.status == 0, "\(made.stderr)")
        let document = try json(made.stdout)
        #expect(Set(document.keys) == ["id", "key"])
        let id = try #require(document["id"] as? String)
        let key = try #require(document["key"] as? String)
        #expect(key.hasPrefix("shelf_\(id)_"))
        #expect(try await Library(directory: dir.url).user(forAPIKey: key)?.name == "ann")
        let db = try Connection(path: dir.path("library.sqlite").path, mode: .readOnly)
        #expect(try db.scalar(Int.self, "SELECT count(*) FROM api_key WHERE instr(quote(sha256) || id, ?) > 0", [key]) == 0)

        let wrongUser = try shelf(dir, ["user", "key", "bob", "--revoke", id])
        #expect(wrongUser.status == 2)
        #expect(try errorCode(wrongUser) == "apiKeyNotFound")
        let revoked = try shelf(dir, ["user", "key", "ann", "--revoke", id])
        #expect(revoked.status == 0, "\(revoked.stderr)")
        #expect(try json(revoked.stdout)["revoked"] as? String == id)
        #expect(try await Library(directory: dir.url).user(forAPIKey: key) == nil)
        let twice = try shelf(dir, ["user", "key", "ann", "--revoke", id])
        #expect(twice.status == 2)
        #expect(try errorCode(twice) == "apiKeyNotFound")
    }

    @Test func mistakesAreUsageErrors() async throws {
        try await offCooperativePool {
            let dir = try TemporaryDirectory()
            for arguments in [
                ["user"], ["user", "frob"], ["user", "list", "extra"], ["user", "add"], ["user", "add", "a", "b"],
                ["user", "delete", "ann", "--admin"], ["user", "list", "--password-stdin"], ["user", "passwd", "ann", "--revoke", "x"],
                ["user", "key"], ["user", "add", "ann", "--bogus"],
            ] {
                let result = try shelf(dir, arguments)
                #expect(result.status == 1, "\(arguments): \(result.stderr)")
                #expect(try errorCode(result) == "usage", "\(arguments)")
            }
        }
    }
}
