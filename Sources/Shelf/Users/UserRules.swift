import Foundation
import ShelfCore
import ShelfDatabase

/// The rules names and passwords must follow, and how a `user` row becomes a `User`.
enum UserRows {
    /// The columns `decode` reads, first in every query that returns users (extra columns follow from index `columnCount`).
    static let columns = "user.id, user.name, user.is_admin, user.is_owner, user.created, user.email, user.roles, user.max_bit_rate, user.libraries"
    static let columnCount: Int32 = 9
    static let select = "SELECT \(columns) FROM user"
    static let maximumNameLength = 64
    static let maximumPasswordBytes = 1_024
    /// How long a session token stays valid after it is created.
    static let sessionLifetime: TimeInterval = 30 * 24 * 3600
    /// `last_used` of an API key is written at most this often, so that reads do not become writes.
    static let apiKeyTouchInterval: TimeInterval = 60

    static func decode(_ row: Row) throws -> User {
        User(
            id: UserID(try row.int64(0)), name: try row.string(1), isAdmin: try row.get(2), isOwner: try row.get(3), created: try row.get(4),
            email: try row.string(5), roles: UserRoles(stored: try row.string(6)), maxBitRate: Int(try row.int64(7)),
            libraries: row.optionalString(8).map(MusicLibraries.decodeIDs))
    }

    /// Names appear in logs, URLs and lists, and must compare the same however they are typed:
    /// 1–64 characters, no control characters, no spaces at either end.
    static func checkName(_ name: String) throws {
        if let problem = nameProblem(name) { throw LibraryError.invalidUserName(problem.shown, reason: problem.reason) }
    }

    /// What is wrong with a name people type and others read (a user's, a library's): empty,
    /// longer than `maximumNameLength`, control characters, spaces at either end; nil when none.
    /// `shown` is the name as an error should quote it.
    static func nameProblem(_ name: String) -> (shown: String, reason: String)? {
        if name.isEmpty { return (name, "must not be empty") }
        if name.count > maximumNameLength { return (name, "is longer than \(maximumNameLength) characters") }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return (name.debugDescription, "must not contain control characters")
        }
        if name.first?.isWhitespace == true || name.last?.isWhitespace == true { return (name, "must not begin or end with a space") }
        return nil
    }

    static func checkPassword(_ password: String) throws {
        guard !password.isEmpty else { throw LibraryError.invalidPassword(reason: "must not be empty") }
        guard password.utf8.count <= maximumPasswordBytes else {
            throw LibraryError.invalidPassword(reason: "is longer than \(maximumPasswordBytes) bytes")
        }
    }

    /// The key file of the library whose store is at `storePath`.
    static func keyDirectory(storePath: String) -> URL {
        URL(fileURLWithPath: storePath).deletingLastPathComponent()
    }
}
