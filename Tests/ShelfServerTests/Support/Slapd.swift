import Foundation
import ShelfTestSupport
import Testing

/// A real OpenLDAP server (Debian's slapd) on a loopback port with its own temporary database and
/// configuration, StartTLS by a certificate from a CA made here: people in `ou=people`, an admins
/// group, a service account for the search, and the directory tools (ldap-utils) to change them.
final class Slapd: @unchecked Sendable {
    static let suffix = "dc=example,dc=org"
    static let admin = "cn=admin,dc=example,dc=org"
    static let adminPassword = "directory-root"
    let root: URL
    let port: Int
    let process = Process()
    var url: String { "ldap://127.0.0.1:\(port)" }
    var caFile: String { root.appendingPathComponent("ca.pem").path }

    /// Whether slapd, ldap-utils and openssl are installed (`make deps-test`).
    static var available: Bool {
        ["/usr/sbin/slapd", "/usr/bin/ldapadd", "/usr/bin/ldapmodify", "/usr/bin/ldappasswd", "/usr/bin/openssl"].allSatisfy {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    init(entries: String) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("shelf-slapd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("db"), withIntermediateDirectories: true)
        let dir = root.path
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: "\(dir)/san.cnf", atomically: true, encoding: .utf8)
        for command in [
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "\(dir)/ca.key", "-out", "\(dir)/ca.pem", "-days", "2", "-subj", "/CN=Shelf test CA"],
            ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "\(dir)/server.key", "-out", "\(dir)/server.csr", "-subj", "/CN=127.0.0.1"],
            [
                "x509", "-req", "-in", "\(dir)/server.csr", "-CA", "\(dir)/ca.pem", "-CAkey", "\(dir)/ca.key", "-CAcreateserial", "-out",
                "\(dir)/server.pem", "-days", "2", "-extfile", "\(dir)/san.cnf",
            ],
        ] {
            let made = try ChildProcess.run(URL(fileURLWithPath: "/usr/bin/openssl"), command)
            try #require(made.status == 0, "openssl \(command[0]): \(made.stderr)")
        }
        let config = """
            include /etc/ldap/schema/core.schema
            include /etc/ldap/schema/cosine.schema
            include /etc/ldap/schema/inetorgperson.schema
            include /etc/ldap/schema/nis.schema
            modulepath /usr/lib/ldap
            moduleload back_mdb
            pidfile \(dir)/slapd.pid
            TLSCACertificateFile \(dir)/ca.pem
            TLSCertificateFile \(dir)/server.pem
            TLSCertificateKeyFile \(dir)/server.key
            database mdb
            suffix "\(Self.suffix)"
            rootdn "\(Self.admin)"
            rootpw \(Self.adminPassword)
            directory \(dir)/db

            """
        try config.write(toFile: "\(dir)/slapd.conf", atomically: true, encoding: .utf8)
        // A free port: bound, read and let go; slapd takes it at once.
        let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(probe, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(probe, $0, &length) } }
        port = Int(UInt16(bigEndian: address.sin_port))
        close(probe)
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/slapd")
        // -d keeps it in the foreground (a child the test stops), logging nothing at level 0.
        process.arguments = ["-d", "0", "-f", "\(dir)/slapd.conf", "-h", "ldap://127.0.0.1:\(port)/"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Ready when an anonymous search of the root DSE answers.
        var ready = false
        for _ in 0..<600 where !ready {
            ready = try ChildProcess.run(URL(fileURLWithPath: "/usr/bin/ldapsearch"), ["-x", "-H", url, "-s", "base", "-b", "", "1.1"]).status == 0
            if !ready {
                guard process.isRunning else { break }
                usleep(50_000)  // polling for a port that is not open yet; the loop ends when it answers
            }
        }
        try #require(ready, "slapd did not start on \(port)")
        try modify(entries, add: true)
    }

    /// Runs ldapadd or ldapmodify as the directory's root with `ldif`.
    func modify(_ ldif: String, add: Bool = false) throws {
        let result = try ChildProcess.run(
            URL(fileURLWithPath: add ? "/usr/bin/ldapadd" : "/usr/bin/ldapmodify"), ["-x", "-H", url, "-D", Self.admin, "-w", Self.adminPassword],
            stdin: Data(ldif.utf8))
        try #require(result.status == 0, "ldap\(add ? "add" : "modify"): \(result.stderr)")
    }

    /// Sets `dn`'s password as the directory's tools do.
    func setPassword(_ dn: String, _ password: String) throws {
        let result = try ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/ldappasswd"), ["-x", "-H", url, "-D", Self.admin, "-w", Self.adminPassword, "-s", password, dn])
        try #require(result.status == 0, "ldappasswd: \(result.stderr)")
    }

    /// Stops slapd at once: SIGKILL, because the test runner's threads block SIGTERM and a spawned
    /// child inherits that mask, so slapd would never see a SIGTERM (its database is thrown away).
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: root)
    }
}
