import Foundation
import ShelfCore
import ShelfDatabase

/// Users who sign in through a directory (LDAP): each such user is an ordinary Shelf user whose
/// directory entry is remembered, so that the server can ask the directory whether the account
/// still exists and is enabled before it honours the user's sessions.
extension Library {
    /// The directory entry (its DN) `user` signs in through; nil for a local user.
    public func directoryEntry(of user: UserID) async throws -> String? {
        try await read { db in try db.scalar(String.self, "SELECT value FROM meta WHERE key = ?", ["directory_user:\(user.rawValue)"]) }
    }

    /// Records (or with nil forgets) that `user` signs in through the directory entry `dn`.
    public func setDirectoryEntry(_ dn: String?, of user: UserID) async throws {
        try await write { batch in
            if let dn {
                try batch.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", ["directory_user:\(user.rawValue)", dn])
            } else {
                try batch.db.execute("DELETE FROM meta WHERE key = ?", ["directory_user:\(user.rawValue)"])
            }
        }
    }
}

extension Library {
    /// SHA-256 of `data` (OpenSSL's), for servers that keep a digest rather than a secret.
    public static func sha256(_ data: Data) -> Data { WriteBatch.sha256(data) }
}
