import Foundation
import Shelf
import ShelfCore

/// Sign-in through an LDAP directory beside the local users. A name the directory vouches for
/// becomes a Shelf user at its first sign-in (with a password nobody knows) and is refreshed at
/// each one (admin by `ldap-admin-group`); the account's sessions and keys are honoured only while
/// the directory still has it (asked again at most every `cacheSeconds`). A local user is never
/// signed in by the directory, and local sign-in keeps working while the directory is down.
public final class DirectorySignIn: Sendable {
    let directory: Directory
    let log: @Sendable (String) -> Void
    private struct State {
        /// Subsonic's `u`+`p` comes with every call: a checked password is good for a while.
        var passwords: [String: (digest: Data, until: Date)] = [:]
        /// When each directory user was last found in the directory.
        var seen: [UserID: Date] = [:]
    }
    private let state = Locked(State())

    /// Sign-in through the directory `settings` describe.
    public init(_ settings: DirectorySettings, log: @escaping @Sendable (String) -> Void) {
        directory = Directory(settings: settings)
        self.log = log
    }

    /// libldap blocks: its calls go to a thread of their own.
    private func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
        }
    }

    /// The user `name` and `password` sign in as through the directory, made or refreshed; nil when
    /// the directory says no or `name` is a local user. `cached`: a password checked moments ago is
    /// taken without asking again (Subsonic calls). Throws `DirectoryError` when the directory is down.
    public func signIn(name: String, password: String, library: Library, cached: Bool = false) async throws -> User? {
        let existing = try await library.user(named: name)
        if let existing, try await library.directoryEntry(of: existing.id) == nil { return nil }
        let digest = Library.sha256(Data((name.lowercased() + "\u{0}" + password).utf8))
        if cached, let existing, state.withLock({ $0.passwords[name.lowercased()] }).map({ $0.digest == digest && $0.until > Date() }) == true {
            return existing
        }
        let directory = directory
        guard let account = try await offPool({ try directory.authenticate(name, password) }) else { return nil }
        let user: User
        if let existing {
            user = existing
            if existing.isAdmin != account.admin, !existing.isOwner {
                try await library.setAdmin(existing.id, account.admin)
                log("shelf: ldap: \(name) is \(account.admin ? "now" : "no longer") an admin (ldap-admin-group)")
            }
        } else {
            let made: Bool
            (user, made) = try await library.externalUser(named: name, admin: account.admin)
            if made { log("shelf: ldap: created user \(name) (\(account.dn))\(account.admin ? ", an admin" : "") at their first sign-in") }
        }
        try await library.setDirectoryEntry(account.dn, of: user.id)
        let until = Date().addingTimeInterval(directory.settings.cacheSeconds)
        state.withLock {
            $0.passwords[name.lowercased()] = (digest, until)
            $0.seen[user.id] = Date()
        }
        return try await library.user(id: user.id) ?? user
    }

    /// Whether `user`'s sessions and keys may still be honoured: a local user's always; a directory
    /// user's while the directory still finds the account. An account gone (deleted, or left out by
    /// the filter, as a disabled one is) loses its sessions here, at their next use.
    public func stillAllowed(_ user: User, library: Library) async throws -> Bool {
        if let seen = state.withLock({ $0.seen[user.id] }), Date().timeIntervalSince(seen) < directory.settings.cacheSeconds { return true }
        guard let dn = try await library.directoryEntry(of: user.id) else { return true }
        let directory = directory
        let name = user.name
        let there: Bool
        do {
            there = try await offPool { try directory.stillThere(name, dn: dn) }
        } catch {
            // A directory that cannot be asked cannot vouch either; the user gets a clear answer.
            log("shelf: ldap: cannot check \(name)'s account: \(error)")
            throw error
        }
        if there {
            state.withLock { $0.seen[user.id] = Date() }
            return true
        }
        let ended = try await library.deleteSessions(of: user.id, except: nil)
        state.withLock {
            $0.seen[user.id] = nil
            $0.passwords[name.lowercased()] = nil
        }
        log("shelf: ldap: \(name)'s account (\(dn)) is no longer in the directory; \(ended) session(s) ended")
        return false
    }
}
