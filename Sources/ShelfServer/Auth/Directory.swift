import CLDAP
import Foundation
import Shelf
import ShelfCore

/// The `ldap-*` settings: where the directory is, how a name becomes an entry, and which group
/// makes an admin.
public struct DirectorySettings: Sendable, Equatable {
    /// `ldap://host:port` (StartTLS unless `startTLS` is off) or `ldaps://host:port`.
    public var url: String
    /// Whether an `ldap://` connection is upgraded with StartTLS before any password is sent.
    public var startTLS = true
    /// A DN template with `{user}` (`uid={user},ou=people,dc=example,dc=org`); nil: search instead.
    public var userDN: String?
    /// Where the search for a name starts.
    public var base: String?
    /// The search filter with `{user}`.
    public var filter = "(uid={user})"
    /// The service account the search binds as (nil: anonymous).
    public var bindDN: String?
    /// The service account's password.
    public var bindPassword: String?
    /// The DN of the group whose members are admins (by the group's `member`/`uniqueMember`/`memberUid`, or the user's `memberOf`).
    public var adminGroup: String?
    /// The CA certificate(s) that sign the directory's certificate; nil: the system's.
    public var caFile: String?
    /// Seconds a directory call may take.
    public var timeout = 10
    /// How long a checked password (Subsonic `p`) and an account's "still there" stay good.
    public var cacheSeconds: Double = 60

    /// Settings for the directory at `url`.
    public init(url: String) { self.url = url }
}

/// The directory could not answer (unreachable, TLS refused, a bad service password): sign-in by
/// the directory is unavailable, local users are not affected.
public struct DirectoryError: ClassifiedError {
    /// What failed, in the directory library's words.
    public let reason: String
    public var kind: ErrorKind { .unavailable }
    public var errorCode: String { "directoryUnavailable" }
    public var description: String { "the LDAP directory cannot be used: \(reason)" }
}

/// An account the directory vouched for.
struct DirectoryAccount: Sendable {
    let dn: String
    let admin: Bool
}

/// One connection to the directory, used by one call and closed at its end. libldap's calls block,
/// so the calls run on a thread of their own, never on the cooperative pool.
private final class LDAPConnection {
    let handle: OpaquePointer
    let settings: DirectorySettings

    init(_ settings: DirectorySettings) throws(DirectoryError) {
        self.settings = settings
        var ld: OpaquePointer?
        guard ldap_initialize(&ld, settings.url) == LDAP_SUCCESS, let ld else {
            throw DirectoryError(reason: "'\(settings.url)' is not an LDAP URL")
        }
        handle = ld
        var version = LDAP_VERSION3
        ldap_set_option(ld, LDAP_OPT_PROTOCOL_VERSION, &version)
        var timeout = timeval(tv_sec: settings.timeout, tv_usec: 0)
        ldap_set_option(ld, LDAP_OPT_NETWORK_TIMEOUT, &timeout)
        ldap_set_option(ld, LDAP_OPT_TIMEOUT, &timeout)
        ldap_set_option(ld, LDAP_OPT_REFERRALS, nil)
        var demand = LDAP_OPT_X_TLS_DEMAND
        ldap_set_option(ld, LDAP_OPT_X_TLS_REQUIRE_CERT, &demand)
        if let ca = settings.caFile {
            ca.withCString { _ = ldap_set_option(ld, LDAP_OPT_X_TLS_CACERTFILE, $0) }
        }
        // The TLS settings above take effect in a new context.
        var server: Int32 = 0
        ldap_set_option(ld, LDAP_OPT_X_TLS_NEWCTX, &server)
        if settings.url.lowercased().hasPrefix("ldap://"), settings.startTLS {
            let result = ldap_start_tls_s(ld, nil, nil)
            guard result == LDAP_SUCCESS else { throw DirectoryError(reason: "StartTLS with \(settings.url): \(Self.message(result, ld))") }
        }
    }

    deinit { ldap_unbind_ext_s(handle, nil, nil) }

    static func message(_ code: Int32, _ ld: OpaquePointer?) -> String {
        var detail: UnsafeMutablePointer<CChar>?
        if let ld { ldap_get_option(ld, LDAP_OPT_DIAGNOSTIC_MESSAGE, &detail) }
        defer { if let detail { ldap_memfree(detail) } }
        let text = String(cString: ldap_err2string(code))
        guard let detail, detail.pointee != 0 else { return text }
        return "\(text) (\(String(cString: detail)))"
    }

    /// A simple bind; the result code (LDAP_INVALID_CREDENTIALS for a wrong password).
    func bind(_ dn: String, _ password: String) -> Int32 {
        var bytes = Array(password.utf8)
        return bytes.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: max(buffer.count, 1)) { pointer in
                var credential = berval(bv_len: ber_len_t(buffer.count), bv_val: buffer.count == 0 ? nil : pointer)
                return ldap_sasl_bind_s(handle, dn, nil, &credential, nil, nil, nil)
            }
        }
    }

    /// The DNs and `attributes` of the entries `filter` finds under `base`.
    func search(_ base: String, scope: Int32, _ filter: String, attributes: [String] = ["1.1"]) throws(DirectoryError) -> [(
        dn: String, values: [String: [String]]
    )] {
        var names = attributes.map { strdup($0) } + [nil]
        defer { for name in names { free(name) } }
        var timeout = timeval(tv_sec: settings.timeout, tv_usec: 0)
        var result: OpaquePointer?
        let code = ldap_search_ext_s(handle, base, scope, filter, &names, 0, nil, nil, &timeout, 0, &result)
        defer { if let result { ldap_msgfree(result) } }
        if code == LDAP_NO_SUCH_OBJECT { return [] }
        guard code == LDAP_SUCCESS else { throw DirectoryError(reason: "searching \(base) for \(filter): \(Self.message(code, handle))") }
        var found: [(dn: String, values: [String: [String]])] = []
        var entry = ldap_first_entry(handle, result)
        while let current = entry {
            var dn = ""
            if let text = ldap_get_dn(handle, current) {
                dn = String(cString: text)
                ldap_memfree(text)
            }
            var values: [String: [String]] = [:]
            for attribute in attributes where attribute != "1.1" {
                guard let list = ldap_get_values_len(handle, current, attribute) else { continue }
                let count = Int(ldap_count_values_len(list))
                values[attribute.lowercased()] = (0..<count).compactMap { index in
                    list[index].map { String(decoding: UnsafeRawBufferPointer(start: $0.pointee.bv_val, count: Int($0.pointee.bv_len)), as: UTF8.self) }
                }
                ldap_value_free_len(list)
            }
            found.append((dn, values))
            entry = ldap_next_entry(handle, current)
        }
        return found
    }
}

/// The directory's answers: whether a name and password are an account, and whether an account
/// is still there. Every call opens its own connection (sign-ins are rare and a directory may
/// restart at any time).
struct Directory: Sendable {
    let settings: DirectorySettings

    /// The account `name` and `password` are, or nil when the directory says no (unknown name,
    /// wrong password, or not found by the filter, which is how a disabled account is left out).
    func authenticate(_ name: String, _ password: String) throws(DirectoryError) -> DirectoryAccount? {
        // An empty password would be an unauthenticated bind, which succeeds for any DN.
        guard !password.isEmpty, !name.isEmpty else { return nil }
        let connection = try LDAPConnection(settings)
        guard let dn = try entry(of: name, on: connection, signingIn: true) else { return nil }
        let result = connection.bind(dn, password)
        if result == LDAP_INVALID_CREDENTIALS { return nil }
        guard result == LDAP_SUCCESS else { throw DirectoryError(reason: "binding as \(dn): \(LDAPConnection.message(result, connection.handle))") }
        return DirectoryAccount(dn: dn, admin: try isAdmin(name: name, dn: dn, on: connection))
    }

    /// Whether the account `name` (once found as `dn`) is still in the directory and found by the
    /// filter. With only a DN template and no service account there is no way to ask without the
    /// password (many directories refuse anonymous reads), so the account counts as there.
    func stillThere(_ name: String, dn: String) throws(DirectoryError) -> Bool {
        if settings.userDN != nil, settings.base == nil, settings.bindDN == nil { return true }
        let connection = try LDAPConnection(settings)
        return try entry(of: name, on: connection, signingIn: false)?.lowercased() == dn.lowercased()
    }

    /// The DN `name` signs in as: the template's, or the one entry the search finds. Signing in
    /// with a template alone needs no search: the bind itself says whether the entry is there.
    private func entry(of name: String, on connection: LDAPConnection, signingIn: Bool) throws(DirectoryError) -> String? {
        if let bindDN = settings.bindDN {
            let result = connection.bind(bindDN, settings.bindPassword ?? "")
            guard result == LDAP_SUCCESS else {
                throw DirectoryError(reason: "the service bind as \(bindDN): \(LDAPConnection.message(result, connection.handle))")
            }
        }
        if let template = settings.userDN {
            let dn = template.replacingOccurrences(of: "{user}", with: Self.escapeDN(name))
            // With a search base as well, the filter decides who may sign in (a disabled account).
            if let base = settings.base {
                let filter = settings.filter.replacingOccurrences(of: "{user}", with: Self.escapeFilter(name))
                return try connection.search(base, scope: LDAP_SCOPE_SUBTREE, filter).contains { $0.dn.lowercased() == dn.lowercased() } ? dn : nil
            }
            if signingIn { return dn }
            return try connection.search(dn, scope: LDAP_SCOPE_BASE, "(objectClass=*)").isEmpty ? nil : dn
        }
        let filter = settings.filter.replacingOccurrences(of: "{user}", with: Self.escapeFilter(name))
        let found = try connection.search(settings.base ?? "", scope: LDAP_SCOPE_SUBTREE, filter)
        // None, or a filter that is ambiguous for this name: no sign-in rather than a guess.
        return found.count == 1 ? found[0].dn : nil
    }

    private func isAdmin(name: String, dn: String, on connection: LDAPConnection) throws(DirectoryError) -> Bool {
        guard let group = settings.adminGroup else { return false }
        let member = Self.escapeFilter(dn)
        let filter = "(|(member=\(member))(uniqueMember=\(member))(memberUid=\(Self.escapeFilter(name))))"
        if try !connection.search(group, scope: LDAP_SCOPE_BASE, filter).isEmpty { return true }
        let memberOf = try connection.search(dn, scope: LDAP_SCOPE_BASE, "(objectClass=*)", attributes: ["memberOf"])
        return memberOf.first?.values["memberof"]?.contains { $0.lowercased() == group.lowercased() } ?? false
    }

    /// RFC 4515: a value inside a filter.
    static func escapeFilter(_ value: String) -> String {
        var escaped = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "*", "(", ")", "\\", "\0": escaped += String(format: "\\%02x", scalar.value)
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// RFC 4514: a value inside a DN.
    static func escapeDN(_ value: String) -> String {
        var escaped = ""
        for (index, character) in value.enumerated() {
            if ",+\"\\<>;=".contains(character) || (index == 0 && (character == " " || character == "#"))
                || (index == value.count - 1 && character == " ")
            {
                escaped.append("\\")
            }
            escaped.append(character)
        }
        return escaped
    }
}
