/// What kind of failure an error is. The engine classifies each of its errors once (`kind`, one
/// exhaustive switch per error type); the HTTP status, the Subsonic error code, the command line's
/// exit status and `shelf doctor`'s advice are each one exhaustive switch over this, so no front
/// end sorts errors by their code strings.
public enum ErrorKind: String, Sendable, CaseIterable, Codable {
    /// The thing named (a track, a playlist, a user, a file) does not exist.
    case notFound
    /// The request clashes with what is stored (a name taken, a file already imported, a picture in use).
    case conflict
    /// A value given is malformed or out of range, or a file given is not what it must be.
    case invalid
    /// The caller may not do this.
    case forbidden
    /// A change token or a cursor is too old to be answered; start again from the current one.
    case expired
    /// Another connection or process holds what is needed; trying again later can succeed.
    case busy
    /// The disk is full; nothing was written.
    case full
    /// A stored file is damaged; Shelf does not repair it (a backup restores it).
    case damaged
    /// Something the engine needs is not there: a program not installed, a store that needs an
    /// upgrade or was written by a newer Shelf.
    case unavailable
    /// Anything else: a failure of the machine or of Shelf itself, whose details go to the log.
    case `internal`
}

/// An error that says what kind of failure it is and gives a stable machine-readable name for it.
public protocol ClassifiedError: Error, Sendable, CustomStringConvertible {
    /// The failure's kind, which decides how every front end answers it.
    var kind: ErrorKind { get }
    /// A stable machine-readable name, `error.code` in the JSON documents.
    var errorCode: String { get }
}
