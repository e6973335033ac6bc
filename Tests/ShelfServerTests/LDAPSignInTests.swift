import Foundation
import Shelf
import ShelfTestSupport
import Testing

/// Sign-in through a real slapd (Debian's, started on a loopback port with its own database):
/// StartTLS checked against the test's CA, a search by a service account, a filter that leaves a
/// disabled account out, admins by group, a password changed in the directory, an account disabled
/// while signed in, the directory going away — and the local users signing in all along.
@Suite(.serialized) struct LDAPSignInTests {
    static let people = "ou=people,\(Slapd.suffix)"

    static func entries() -> String {
        func person(_ uid: String, _ password: String, disabled: Bool = false) -> String {
            """
            dn: uid=\(uid),\(people)
            objectClass: inetOrgPerson
            uid: \(uid)
            cn: \(uid.capitalized)
            sn: \(uid.capitalized)
            userPassword: \(password)
            \(disabled ? "employeeType: disabled\n" : "")
            """
        }
        return """
            dn: \(Slapd.suffix)
            objectClass: dcObject
            objectClass: organization
            o: Example
            dc: example

            dn: \(people)
            objectClass: organizationalUnit
            ou: people

            dn: ou=groups,\(Slapd.suffix)
            objectClass: organizationalUnit
            ou: groups

            dn: cn=shelf,\(Slapd.suffix)
            objectClass: organizationalRole
            objectClass: simpleSecurityObject
            cn: shelf
            userPassword: service-secret

            \(person("alice", "alice-pass"))
            \(person("bruno", "bruno-pass"))
            \(person("dora", "dora-pass", disabled: true))
            \(person("ann", "not-ann's"))
            dn: cn=admins,ou=groups,\(Slapd.suffix)
            objectClass: groupOfNames
            cn: admins
            member: uid=alice,\(people)

            """
    }

    @Test func peopleSignInThroughTheDirectoryBesideTheLocalUsers() async throws {
        try await offCooperativePool {
            guard Slapd.available else {
                print("LDAPSignInTests: slapd, ldap-utils or openssl is not installed (make deps-test); skipped")
                return
            }
            let slapd = try Slapd(entries: Self.entries())
            let fixture = try ServedLibrary(tracks: 2)
            defer { fixture.remove() }
            let server = try ServerProcess(
                library: fixture.library,
                arguments: [
                    "--ldap-url", slapd.url, "--ldap-ca-file", slapd.caFile, "--ldap-base", Self.people,
                    "--ldap-filter", "(&(objectClass=inetOrgPerson)(uid={user})(!(employeeType=disabled)))",
                    "--ldap-bind-dn", "cn=shelf,\(Slapd.suffix)", "--ldap-admin-group", "cn=admins,ou=groups,\(Slapd.suffix)",
                ],
                // The service password from the environment, as a container passes it; no caching, so
                // each change in the directory counts at once.
                environment: ["SHELF_LDAP_BIND_PASSWORD": "service-secret", "SHELF_LDAP_CACHE_SECONDS": "0"])
            defer { server.stop() }
            // Each check from its own loopback address, so the sign-in throttle (ten failures per
            // address) counts one check's failures, not the whole test's.
            var source = 1
            func signIn(_ name: String, _ password: String) throws -> (Int, [String: Any], Curl) {
                let client = Curl(base: server.base)
                source += 1
                let result = try client.request(
                    "POST", "/api/session", body: Curl.json(["name": name, "password": password]), extra: ["--interface", "127.0.0.\(source)"])
                return (result.status, (result.json as? [String: Any])?["user"] as? [String: Any] ?? [:], client)
            }

            // First sign-ins make the users, an admin by the group.
            let alice = try signIn("alice", "alice-pass")
            #expect(alice.0 == 200 && alice.1["admin"] as? Bool == true, "\(alice.0) \(alice.1)")
            let bruno = try signIn("bruno", "bruno-pass")
            #expect(bruno.0 == 200 && bruno.1["admin"] as? Bool == false)
            #expect(server.log.contains { $0.contains("ldap: created user alice (uid=alice,\(Self.people)), an admin") })
            // What the directory refuses, and a local user's name it may not take.
            for (name, password) in [("alice", "wrong"), ("nobody", "x"), ("dora", "dora-pass"), ("bruno", ""), ("ann", "not-ann's"), ("al*", "alice-pass")] {
                #expect(try signIn(name, password).0 == 401, "\(name)")
            }
            // The local admin signs in as ever.
            #expect(try signIn("ann", ServedLibrary.annPassword).0 == 200)

            // Subsonic: a plain or enc: password is checked by a bind; the token cannot be.
            let plain = SubsonicClient(server, auth: [("u", "bruno"), ("p", "bruno-pass")])
            _ = try plain.ok("ping")
            let hex = Array("bruno-pass".utf8).map { String(format: "%02x", $0) }.joined()
            _ = try SubsonicClient(server, auth: [("u", "bruno"), ("p", "enc:\(hex)")]).ok("ping")
            let salt = "abc123"
            let token = Library.subsonicToken(password: "bruno-pass", salt: salt)
            #expect(try SubsonicClient(server, auth: [("u", "bruno"), ("t", token), ("s", salt)]).errorCode("ping") == 40)

            // A password changed in the directory: the old one stops working, the new one works.
            try slapd.setPassword("uid=bruno,\(Self.people)", "bruno-new")
            #expect(try signIn("bruno", "bruno-pass").0 == 401)
            #expect(try plain.errorCode("ping") == 40)
            #expect(try signIn("bruno", "bruno-new").0 == 200)

            // Alice's account disabled while she is signed in: her session ends at its next use.
            #expect(try alice.2.request("GET", "/api/me").status == 200)
            try slapd.modify("dn: uid=alice,\(Self.people)\nchangetype: modify\nadd: employeeType\nemployeeType: disabled\n")
            let after = try alice.2.request("GET", "/api/me")
            #expect(after.status == 401, "\(after.status) \(after.text)")
            #expect(try signIn("alice", "alice-pass").0 == 401)
            #expect(server.log.contains { $0.contains("alice's account") && $0.contains("no longer in the directory") })

            // The directory gone: its people cannot sign in (a clear 503), the local admin still can.
            slapd.stop()
            let down = try signIn("bruno", "bruno-new")
            #expect(down.0 == 503, "\(down.0)")
            #expect(try signIn("ann", ServedLibrary.annPassword).0 == 200)
        }
    }

    @Test func aDNTemplateWithoutASearchAndNoStartTLS() async throws {
        try await offCooperativePool {
            guard Slapd.available else { return }
            let slapd = try Slapd(entries: Self.entries())
            let fixture = try ServedLibrary(tracks: 1)
            defer { fixture.remove() }
            let server = try ServerProcess(
                library: fixture.library,
                arguments: ["--ldap-url", slapd.url, "--ldap-starttls", "off", "--ldap-user-dn", "uid={user},\(Self.people)"])
            defer { server.stop() }
            let client = Curl(base: server.base)
            #expect(try client.request("POST", "/api/session", body: Curl.json(["name": "bruno", "password": "bruno-pass"])).status == 200)
            #expect(try client.request("POST", "/api/session", body: Curl.json(["name": "bruno", "password": "nope"])).status == 401)
            // A name that would change the DN's meaning is escaped, not obeyed.
            #expect(try client.request("POST", "/api/session", body: Curl.json(["name": "bruno,ou=people", "password": "bruno-pass"])).status == 401)
            // StartTLS is on by default: against a CA the machine does not know, the directory is unavailable, not skipped.
            let strict = try ServerProcess(library: fixture.library, arguments: ["--ldap-url", slapd.url, "--ldap-user-dn", "uid={user},\(Self.people)"])
            defer { strict.stop() }
            let refused = try Curl(base: strict.base).request("POST", "/api/session", body: Curl.json(["name": "bruno", "password": "bruno-pass"]))
            #expect(refused.status == 503 && refused.text.contains("StartTLS"), "\(refused.status) \(refused.text)")
        }
    }
}
