import Foundation
import ShelfCore
import ShelfDatabase

/// Every failure the engine reports: what failed (a path, an ID, a value) and why.
public enum LibraryError: ClassifiedError, Equatable {
    /// The library directory does not exist and could not be created.
    case cannotCreateDirectory(path: String, reason: String)
    /// The store file could not be opened (permissions, a directory in its place, …).
    case cannotOpen(path: String, reason: String)
    /// The file is not a Shelf library: not SQLite, corrupt, or another program's database.
    case notALibrary(path: String, reason: String)
    /// The store was written by a newer Shelf whose schema this version does not know.
    case newerSchema(path: String, found: Int, supported: Int)
    /// The store uses an older layout that must be migrated first.
    case migrationRequired(path: String, from: Int)
    /// Another connection or process held the write lock for longer than the busy timeout.
    case busy(path: String, waitedMilliseconds: Int)
    /// No track has this ID.
    case trackNotFound(TrackID)
    /// No playlist has this ID.
    case playlistNotFound(PlaylistID)
    /// No artwork has this ID.
    case artworkNotFound(ArtworkID)
    /// The artwork is still referenced by a track and cannot be deleted.
    case artworkInUse(ArtworkID)
    /// Another track already has this file path.
    case duplicatePath(String)
    /// A value is out of range or malformed.
    case invalidValue(field: String, value: String, reason: String)
    /// The change token can no longer be answered: it is older than the retained history, names
    /// another store (the library was recreated or restored), or lies beyond the current position.
    /// The client should refetch what it tracks (`Library.tracks(ids:)`) and start from `currentToken()`.
    case tokenExpired(token: String, reason: String)
    /// The token is still summarized, but the per-transaction details after it were compacted: use
    /// `changeSummary(since:)`, or refetch what the client tracks.
    case detailsUnavailable(token: String)
    /// The text is not a change token.
    case malformedToken(String)
    /// A user with this name (compared without case) already exists.
    case userExists(String)
    /// No user has this name (or ID, given as "ID n").
    case userNotFound(String)
    /// A user name breaks the naming rules (1–64 characters, no control characters, no leading
    /// or trailing space).
    case invalidUserName(String, reason: String)
    /// A password is empty or longer than 1,024 bytes.
    case invalidPassword(reason: String)
    /// No API key has this ID.
    case apiKeyNotFound(String)
    /// No bookmark, radio station or share (`kind`: "bookmark", "station", "share") has this ID.
    case objectNotFound(kind: String, id: String)
    /// The change would leave the library without an admin.
    case lastAdmin(String)
    /// The per-library key file `secret.key` is missing, of the wrong size, or readable by others.
    case secretKeyFile(path: String, reason: String)
    /// A stored password does not decrypt with this library's key: another library's key file,
    /// or a row altered or copied from another user.
    case passwordUnreadable(user: String, keyPath: String)
    /// Any other database failure, with SQLite's codes, message and SQL.
    case database(path: String, code: Int32, extendedCode: Int32, message: String, sql: String?)
    /// The disk holding this file is full; the write was rolled back and nothing was changed.
    case diskFull(path: String)
    /// The store is damaged (SQLite found it corrupt); Shelf does not repair it, a backup restores it.
    case storeDamaged(path: String, reason: String)
    /// A backup could not be written; no file was left under its name.
    case backupFailed(path: String, reason: String)
    /// A backup could not be restored; the library directory was left as it was (or the reason
    /// says where the previous library is).
    case restoreFailed(path: String, reason: String)
    /// Another program's file (`shelf import-from`) cannot be read as what it was said to be.
    case unreadableSource(path: String, reason: String)

    /// A stable machine-readable name, used as `error.code` in the command line's JSON.
    public var code: String {
        switch self {
        case .cannotCreateDirectory: "cannotCreateDirectory"
        case .cannotOpen: "cannotOpen"
        case .notALibrary: "notALibrary"
        case .newerSchema: "newerSchema"
        case .migrationRequired: "migrationRequired"
        case .busy: "busy"
        case .trackNotFound: "trackNotFound"
        case .playlistNotFound: "playlistNotFound"
        case .artworkNotFound: "artworkNotFound"
        case .artworkInUse: "artworkInUse"
        case .duplicatePath: "duplicatePath"
        case .invalidValue: "invalidValue"
        case .tokenExpired: "tokenExpired"
        case .detailsUnavailable: "detailsUnavailable"
        case .malformedToken: "malformedToken"
        case .userExists: "userExists"
        case .userNotFound: "userNotFound"
        case .invalidUserName: "invalidUserName"
        case .invalidPassword: "invalidPassword"
        case .apiKeyNotFound: "apiKeyNotFound"
        case .objectNotFound(let kind, _): "\(kind)NotFound"
        case .lastAdmin: "lastAdmin"
        case .secretKeyFile: "secretKeyFile"
        case .passwordUnreadable: "passwordUnreadable"
        case .database: "database"
        case .diskFull: "diskFull"
        case .storeDamaged: "storeDamaged"
        case .backupFailed: "backupFailed"
        case .restoreFailed: "restoreFailed"
        case .unreadableSource: "unreadableSource"
        }
    }

    /// The kind of failure, which decides the HTTP status, Subsonic code, exit status and advice.
    public var kind: ErrorKind {
        switch self {
        case .trackNotFound, .playlistNotFound, .artworkNotFound, .userNotFound, .apiKeyNotFound, .objectNotFound: .notFound
        case .artworkInUse, .duplicatePath, .userExists: .conflict
        case .invalidValue, .malformedToken, .invalidUserName, .invalidPassword, .lastAdmin, .unreadableSource: .invalid
        case .tokenExpired, .detailsUnavailable: .expired
        case .busy: .busy
        case .diskFull: .full
        case .storeDamaged, .notALibrary: .damaged
        case .newerSchema, .migrationRequired: .unavailable
        case .cannotCreateDirectory, .cannotOpen, .secretKeyFile, .passwordUnreadable, .database, .backupFailed, .restoreFailed: .internal
        }
    }

    /// The same as `code`.
    public var errorCode: String { code }

    public var description: String {
        switch self {
        case .cannotCreateDirectory(let path, let reason): "cannot create library directory \(path): \(reason)"
        case .cannotOpen(let path, let reason): "cannot open \(path): \(reason)"
        case .notALibrary(let path, let reason): "\(path) is not a Shelf library: \(reason)"
        case .newerSchema(let path, let found, let supported):
            "\(path) was written by a newer Shelf (schema \(found); this version reads up to \(supported)); upgrade Shelf to open it"
        case .migrationRequired(let path, let from):
            "\(path) uses the legacy schema \(from) (artwork stored inline) and must be migrated before use: run `shelf migrate` (or Library.migrateLegacyStore)"
        case .busy(let path, let waited):
            "\(path) is locked by another connection or process; gave up after waiting \(waited) ms"
        case .trackNotFound(let id): "no track with ID \(id)"
        case .playlistNotFound(let id): "no playlist with ID \(id)"
        case .artworkNotFound(let id): "no artwork with ID \(id)"
        case .artworkInUse(let id): "artwork \(id) is still used by a track"
        case .duplicatePath(let path): "a track with path \(path) is already in the library"
        case .invalidValue(let field, let value, let reason): "invalid \(field) \(value): \(reason)"
        case .tokenExpired(let token, let reason):
            "change token \(token) has expired (\(reason)); refetch the tracked objects and start again from the current token"
        case .detailsUnavailable(let token):
            "the history after \(token) was compacted; ask for a change summary, or refetch the tracked objects"
        case .malformedToken(let text): "'\(text)' is not a change token (expected shelf1.<store id>.<number>)"
        case .userExists(let name): "a user named '\(name)' already exists (names are compared without case)"
        case .userNotFound(let name): "no user '\(name)'"
        case .invalidUserName(let name, let reason): "invalid user name \"\(name)\": \(reason)"
        case .invalidPassword(let reason): "invalid password: \(reason)"
        case .apiKeyNotFound(let id): "no API key with ID \(id)"
        case .objectNotFound(let kind, let id): "no \(kind) \(id)"
        case .lastAdmin(let name): "'\(name)' is the last admin; make another user an admin first"
        case .secretKeyFile(let path, let reason): "the key file \(path) \(reason)"
        case .passwordUnreadable(let user, let keyPath):
            "the stored password of '\(user)' does not decrypt with \(keyPath) (another library's key file, or an altered row); set a new password"
        case .database(let path, _, _, let message, let sql):
            "database error in \(path): \(message)" + (sql.map { " — in \($0.prefix(200))" } ?? "")
        case .diskFull(let path):
            "no space left on the device holding \(path); the change was rolled back and nothing was written: free some space and try again"
        case .storeDamaged(let path, let reason) where path.hasSuffix("mirror.sqlite"):
            "the read mirror \(path) is damaged (\(reason)); it holds nothing the store does not: `shelf mirror build --fresh` rebuilds it"
        case .storeDamaged(let path, let reason):
            "\(path) is damaged (\(reason)); Shelf will not repair it into a smaller library: restore the last backup with "
                + "`shelf --library \(URL(fileURLWithPath: path).deletingLastPathComponent().path) restore BACKUP --force` "
                + "(which moves the damaged library aside), or try `sqlite3 \(path) .recover` on a copy"
        case .backupFailed(let path, let reason): "backup to \(path) failed: \(reason)"
        case .restoreFailed(let path, let reason): "cannot restore \(path): \(reason)"
        case .unreadableSource(let path, let reason): "cannot import from \(path): \(reason)"
        }
    }

    /// Maps any error from the SQLite layer to a library error naming `path`; other errors pass through.
    static func wrap(_ error: any Error, path: String, busyTimeoutMilliseconds: Int) -> any Error {
        guard let sqlite = error as? SQLiteError else { return error }
        switch sqlite.code {
        case .busy, .locked: return LibraryError.busy(path: path, waitedMilliseconds: busyTimeoutMilliseconds)
        case .notADatabase: return LibraryError.notALibrary(path: path, reason: sqlite.message)
        case .corrupt: return LibraryError.storeDamaged(path: path, reason: sqlite.message)
        case .full: return LibraryError.diskFull(path: path)
        case .ioError where sqlite.systemErrno == ENOSPC: return LibraryError.diskFull(path: path)
        case .cantOpen where sqlite.systemErrno == ENOSPC: return LibraryError.diskFull(path: path)
        default:
            return LibraryError.database(
                path: path, code: sqlite.code.rawValue, extendedCode: sqlite.extendedCode.rawValue,
                message: sqlite.message, sql: sqlite.sql)
        }
    }
}
